//! The 2026-07-28 stateless lane, in the checklist's order: `_meta` → header vs body →
//! version → Mcp-Method / Mcp-Name → method. Each request carries everything it needs; nothing
//! is remembered between requests.

use serde_json::Value as Json;

use super::headers::{self, McpHeaders};
use super::methods;
use crate::context::Ctx;
use crate::error::Error;
use crate::json_read::Node;
use crate::json_write;
use crate::jsonrpc::Success;
use crate::protocol::version::{self, Era};
use crate::protocol::{self, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};

/// Serves one message of the stateless lane (2026-07-28): its success response's JSON text, or `None` for a
/// notification.
pub async fn serve(
    id: Option<&Json>,
    method: &str,
    params: Option<&Node<'_>>,
    headers: &McpHeaders,
    ctx: &Ctx<'_>,
) -> Result<Option<String>, Error> {
    let meta = params.and_then(|p| p.get("_meta"));
    let claimed = meta
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Node::as_str);
    let capabilities_ok = meta
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .is_some_and(Node::is_object);
    let (Some(claimed), true) = (claimed, capabilities_ok) else {
        return Err(Error::BadMeta(format!(
            "params._meta must carry {META_PROTOCOL_VERSION} (a string) and {META_CLIENT_CAPABILITIES} (an object)"
        )));
    };
    let Some(id) = id else {
        // The stateless revision defines no client notifications over HTTP; accept and ignore.
        return Ok(None);
    };
    match headers.version() {
        Some(h) if h == claimed => {}
        Some(h) => {
            return Err(Error::HeaderMismatch(format!(
                "MCP-Protocol-Version header {h:?} does not match params._meta {claimed:?}"
            )))
        }
        None => {
            return Err(Error::HeaderMismatch(
                "the MCP-Protocol-Version header is required".into(),
            ))
        }
    }
    if !version::is_supported_stateless(claimed) {
        return Err(Error::UnsupportedVersion {
            requested: claimed.to_owned(),
        });
    }
    headers::check("Mcp-Method", headers.method.as_deref(), Some(method))?;
    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        let body_name = params.and_then(|p| p.get(field)).and_then(Node::as_str);
        headers::check("Mcp-Name", headers.name.as_deref(), body_name)?;
    }
    let era = Era::Stateless;
    let mut reply = Success::new(id);
    match method {
        "server/discover" => {
            let (body, cache) = protocol::discover(ctx.caller.scope.project().is_some());
            let result = protocol::envelope(body.clone(), era, Some(cache));
            json_write::push_value(reply.result(), &result)
        }
        _ => methods::serve(method, params, era, ctx, reply.result()).await?,
    }
    Ok(Some(reply.finish()))
}
