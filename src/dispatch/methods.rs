//! The methods both lanes serve, with the envelope of the caller's era: tools, prompts and
//! resources, each handed the caller's scope. Lane rules (versions, headers, initialize) are not
//! here.

use serde_json::Value as Json;

use super::{Dispatched, Reply};
use crate::context::Ctx;
use crate::error::Error;
use crate::json_read::Node;
use crate::json_write;
use crate::jsonrpc::Success;
use crate::protocol::version::{self, Era};
use crate::protocol::{self, Cache};
use crate::store::LocalFuture;
use crate::{prompts, render, resources, tools};

/// One shared method's result body, in `era`'s envelope, as JSON text appended to `out`.
pub async fn serve(
    method: &str,
    params: Option<&Node<'_>>,
    era: Era,
    ctx: &Ctx<'_>,
    out: &mut String,
) -> Result<(), Error> {
    let scope = &ctx.caller.scope;
    match method {
        "tools/list" => {
            let one_project = scope.project().is_some();
            let result = tools::schema::result(era, scope.read_only(), one_project);
            json_write::push_value(out, result);
            Ok(())
        }
        "tools/call" => {
            push_tool_result(out, &call_tool(params, ctx).await?, era);
            Ok(())
        }
        // The prompt's and the resources' code is a function apart (behind a box), so a tool
        // call, an isolate's first above all, never compiles it (V8 compiles a wasm function
        // whole, on its first call).
        _ => {
            let others: LocalFuture<'_, Result<(), Error>> =
                Box::pin(serve_others(method, params, era, ctx, out));
            others.await
        }
    }
}

/// The methods other than the tools'.
async fn serve_others(
    method: &str,
    params: Option<&Node<'_>>,
    era: Era,
    ctx: &Ctx<'_>,
    out: &mut String,
) -> Result<(), Error> {
    let scope = &ctx.caller.scope;
    let (result, cache) = match method {
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
    json_write::push_value(out, &protocol::envelope(result, era, cache));
    Ok(())
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

async fn call_tool(params: Option<&Node<'_>>, ctx: &Ctx<'_>) -> Result<tools::ToolResult, Error> {
    let name = string_param(params, "name", "tools/call")?;
    let Some(def) = tools::find(name) else {
        let known: Vec<&str> = tools::ALL.iter().map(|t| t.name).collect();
        return Err(Error::InvalidParams(format!(
            "Unknown tool \"{}\"; the tools are {}",
            render::clip(name, 64),
            known.join(", ")
        )));
    };
    let arguments = params.and_then(|p| p.get("arguments"));
    if arguments.is_some_and(|a| !a.is_object() && !a.is_null()) {
        return Err(Error::InvalidParams(
            "tools/call params.arguments must be an object".into(),
        ));
    }
    tools::call(def, arguments, ctx).await
}

/// A tool that ran and failed on storage, as its `isError` result in `era`'s envelope: the model
/// reads the error's sentence (what can have been written, whether calling again is safe) and
/// can act on it, where a JSON-RPC error may never reach it; the detail goes to the log. `None`
/// for every other error, which is refused as a JSON-RPC error.
pub(super) fn tool_failure(id: &Json, error: &Error, era: Era) -> Option<Dispatched> {
    let sentence = error.tool_failure()?;
    let mut reply = Success::new(id);
    push_tool_result(reply.result(), &tools::ToolResult::error(sentence), era);
    Some(Dispatched {
        reply: Reply::Json {
            status: 200,
            body: reply.finish(),
            headers: Vec::new(),
        },
        diagnostic: error.diagnostic().map(str::to_owned),
    })
}

/// A tool's outcome as the JSON text of a tools/call result in `era`'s envelope, appended to
/// `out`: one text item per text, in order. Written straight to text, the bytes
/// `json_write::push_value` writes for `protocol::envelope` of the result object (members in key
/// order; a test holds the two together), because a call's reply is the one reply on every
/// tool's path: building it as a `Value` to write it out and free it took about a tenth of a
/// get_state's instructions.
fn push_tool_result(out: &mut String, outcome: &tools::ToolResult, era: Era) {
    out.reserve(json_write::texts_size_hint(&outcome.texts));
    let stateless = version::has_result_type(era);
    out.push('{');
    if stateless {
        out.push_str("\"_meta\":");
        out.push_str(protocol::server_meta_text());
        out.push(',');
    }
    out.push_str("\"content\":[");
    for (i, text) in outcome.texts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"text\":");
        json_write::push_string(out, text);
        out.push_str(",\"type\":\"text\"}");
    }
    out.push_str("],\"isError\":");
    out.push_str(if outcome.is_error { "true" } else { "false" });
    if stateless {
        out.push_str(",\"resultType\":\"complete\"");
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_result_is_the_text_of_its_enveloped_object_in_every_era() {
        let mut eras = vec![Era::Stateless];
        eras.extend(
            version::SUPPORTED_HANDSHAKE
                .iter()
                .copied()
                .map(Era::Handshake),
        );
        let outcomes = [
            tools::ToolResult::ok("🎯 North Star: \"ship\" \\ v2\n▶ 本丸\u{0}\u{1f}".into()),
            tools::ToolResult {
                texts: vec!["first".into(), String::new(), "third\r\n".into()],
                is_error: false,
            },
            tools::ToolResult {
                texts: vec!["Unknown project".into()],
                is_error: true,
            },
            tools::ToolResult {
                texts: Vec::new(),
                is_error: false,
            },
        ];
        for era in eras {
            for outcome in &outcomes {
                let items: Vec<_> = outcome
                    .texts
                    .iter()
                    .map(|t| json!({"type": "text", "text": t}))
                    .collect();
                let object = json!({"content": items, "isError": outcome.is_error});
                let mut written = "[".to_owned();
                push_tool_result(&mut written, outcome, era);
                assert_eq!(
                    written,
                    format!(
                        "[{}",
                        json_write::to_text(&protocol::envelope(object, era, None))
                    ),
                    "{era:?}"
                );
            }
        }
    }
}
