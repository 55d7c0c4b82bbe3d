//! The methods both lanes serve, with the envelope of the caller's era: tools, prompts and
//! resources, each handed the caller's scope. Lane rules (versions, headers, initialize) are not
//! here.

use serde_json::{Map, Value as Json};

use crate::context::Ctx;
use crate::error::Error;
use crate::node::Node;
use crate::protocol::version::Era;
use crate::protocol::{self, Cache};
use crate::{prompts, resources, tools};

/// One shared method's result body, in `era`'s envelope.
pub async fn serve(
    method: &str,
    params: Option<&Node<'_>>,
    era: Era,
    ctx: &Ctx<'_>,
) -> Result<Json, Error> {
    let scope = &ctx.caller.scope;
    let (result, cache) = match method {
        "tools/list" => (
            protocol::tools_list(scope.read_only()).clone(),
            Some(Cache::PerScope),
        ),
        "tools/call" => (call_tool(params, ctx).await?, None),
        "prompts/list" => (prompts::list(), Some(Cache::Static)),
        "prompts/get" => {
            let name = string_param(params, "name", method)?;
            let arguments = params.and_then(|p| p.get("arguments"));
            (prompts::get(ctx, name, arguments).await?, None)
        }
        "resources/templates/list" => (resources::templates(), Some(Cache::Static)),
        "resources/list" => {
            let cursor = params.and_then(|p| p.get("cursor")).and_then(Node::as_str);
            (
                resources::list(ctx.db, scope, cursor).await?,
                Some(Cache::Data),
            )
        }
        "resources/read" => {
            let uri = string_param(params, "uri", method)?;
            (resources::read(ctx, uri).await?, Some(Cache::Data))
        }
        _ => return Err(Error::MethodNotFound(method.to_owned())),
    };
    Ok(protocol::envelope(result, era, cache))
}

fn string_param<'a>(
    params: Option<&'a Node<'a>>,
    field: &str,
    method: &str,
) -> Result<&'a str, Error> {
    params
        .and_then(|p| p.get(field))
        .and_then(Node::as_str)
        .ok_or_else(|| Error::InvalidParams(format!("{method} needs params.{field}, a string")))
}

async fn call_tool(params: Option<&Node<'_>>, ctx: &Ctx<'_>) -> Result<Json, Error> {
    let name = string_param(params, "name", "tools/call")?;
    let Some(def) = tools::find(name) else {
        let known: Vec<&str> = tools::ALL.iter().map(|t| t.name).collect();
        return Err(Error::InvalidParams(format!(
            "Unknown tool {:?}; the tools are {}",
            name.chars().take(64).collect::<String>(),
            known.join(", ")
        )));
    };
    let arguments = params.and_then(|p| p.get("arguments"));
    if arguments.is_some_and(|a| !a.is_object() && !a.is_null()) {
        return Err(Error::InvalidParams(
            "tools/call params.arguments must be an object".into(),
        ));
    }
    let outcome = tools::call(def, arguments, ctx).await?;
    Ok(tool_result(outcome))
}

/// A tool's outcome as a tools/call result: one text item per text, in order. Each text is
/// moved into its item (`json!` would copy it).
fn tool_result(outcome: tools::Outcome) -> Json {
    let content = outcome
        .texts
        .into_iter()
        .map(|text| {
            let mut item = Map::new();
            item.insert("type".into(), "text".into());
            item.insert("text".into(), text.into());
            Json::Object(item)
        })
        .collect();
    let mut result = Map::new();
    result.insert("content".into(), Json::Array(content));
    result.insert("isError".into(), outcome.is_error.into());
    Json::Object(result)
}
