//! The 2025-era lane: `initialize` answered as a pure function, the version header rule, and
//! no sessions. A request that claims the stateless revision in its header but not in `_meta` is
//! refused here rather than served under the wrong rules.

use serde_json::Value as Json;

use super::headers::McpHeaders;
use super::methods;
use crate::context::Ctx;
use crate::error::Error;
use crate::json_read::Node;
use crate::json_write;
use crate::jsonrpc::Success;
use crate::protocol::version::{self, Era};
use crate::protocol::{self, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};

/// The handshake era from the MCP-Protocol-Version header: absent means 2025-03-26; an unknown
/// value is refused with 400, as 2025-06-18 and later require.
pub fn era(headers: &McpHeaders) -> Result<Era, Error> {
    match headers.version() {
        None => Ok(Era::Handshake(version::HEADERLESS_HANDSHAKE)),
        Some(v) => version::supported_handshake(v)
            .map(Era::Handshake)
            .ok_or_else(|| {
                Error::BadVersionHeader(format!(
                    "Bad Request: unsupported MCP-Protocol-Version {v:?}; supported: {}",
                    version::SUPPORTED_HANDSHAKE.join(", ")
                ))
            }),
    }
}

/// Serves one message of the handshake lane (2024-11-05 … 2025-11-25, through initialize): its success response's JSON text, or `None` for a
/// notification.
pub async fn serve(
    id: Option<&Json>,
    method: &str,
    params: Option<&Node<'_>>,
    headers: &McpHeaders,
    ctx: &Ctx<'_>,
) -> Result<Option<String>, Error> {
    let header_version = headers.version();
    if let Some(v) = header_version.filter(|v| version::is_stateless_claim(v)) {
        return Err(if method == "initialize" {
            Error::HeaderMismatch(format!(
                "initialize is the 2025-era handshake, but MCP-Protocol-Version is {v}"
            ))
        } else {
            Error::BadMeta(format!(
                "params._meta must carry {META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES}"
            ))
        });
    }
    if method == "initialize" {
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Node::as_str);
        let negotiated = version::negotiate_handshake(requested);
        return Ok(id.map(|id| {
            let mut reply = Success::new(id);
            let one_project = ctx.caller.scope.project().is_some();
            let result = protocol::initialize(negotiated, one_project);
            json_write::push_value(reply.result(), &result);
            reply.finish()
        }));
    }
    let era = era(headers)?;
    let Some(id) = id else {
        return Ok(None);
    };
    let mut reply = Success::new(id);
    match method {
        // logging/setLevel: every handshake revision has it (`version::has_logging_set_level`).
        // Accepted and kept nowhere: this server never sends log messages.
        "ping" | "logging/setLevel" => reply.result().push_str("{}"),
        _ => methods::serve(method, params, era, ctx, reply.result()).await?,
    }
    Ok(Some(reply.finish()))
}
