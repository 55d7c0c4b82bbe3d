//! MCP names and result bodies: method names, `_meta` keys, server identity, capabilities.
//! Version rules live in `version`; nothing here touches storage or HTTP.

pub mod version;

use std::sync::LazyLock;

use serde_json::{json, Value as Json};

use crate::tools;
use version::Era;

pub const SERVER_NAME: &str = "handoff-mcp";
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// How long clients may cache discover and tools/list. The lists change only with a deploy.
pub const LIST_TTL_MS: u64 = 300_000;

pub const INSTRUCTIONS: &str = "handoff-mcp keeps one project pointed at its North Star across chats. \
At the start of every chat call get_state with the project's id, state the North Star, then advance \
the one focus (本丸). Deferred cleanup and record tasks (後処理) wait until the North Star is reached. \
A new project starts with set_north_star.";

pub fn server_info() -> Json {
    json!({"name": SERVER_NAME, "version": SERVER_VERSION})
}

/// Capabilities are the same in both eras: tools only, with no list-change notifications
/// (there is no session or stream to send them on).
pub fn capabilities() -> Json {
    json!({"tools": {}})
}

/// The modern `server/discover` result body (before the envelope fields).
pub fn discover() -> Json {
    json!({
        "supportedVersions": version::SUPPORTED_MODERN,
        "capabilities": capabilities(),
        "instructions": INSTRUCTIONS,
    })
}

/// The legacy `initialize` result for a negotiated version.
pub fn initialize(negotiated: &'static str) -> Json {
    json!({
        "protocolVersion": negotiated,
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}

/// tools/list bodies, built once per isolate: with and without outputSchema.
static TOOLS_STRUCTURED: LazyLock<Json> = LazyLock::new(|| tools_list(true));
static TOOLS_PLAIN: LazyLock<Json> = LazyLock::new(|| tools_list(false));

fn tools_list(structured: bool) -> Json {
    let list: Vec<Json> = tools::ALL
        .iter()
        .map(|t| tools::list_entry(t, structured))
        .collect();
    json!({ "tools": list })
}

pub fn tools_list_for(era: Era) -> &'static Json {
    if version::has_structured_content(era) {
        &TOOLS_STRUCTURED
    } else {
        &TOOLS_PLAIN
    }
}

/// Adds the stateless revision's envelope fields to a complete result. `cacheable` results
/// (discover, lists) also get cache hints; they hold no per-user data, hence "public".
pub fn envelope(mut result: Json, era: Era, cacheable: bool) -> Json {
    if version::has_result_type(era) {
        result["resultType"] = json!("complete");
        result["_meta"] = json!({ META_SERVER_INFO: server_info() });
        if cacheable {
            result["ttlMs"] = json!(LIST_TTL_MS);
            result["cacheScope"] = json!("public");
        }
    }
    result
}
