//! The in-chat card (MCP Apps, SEP-1865): a `ui://` resource of type `text/html;profile=mcp-app`
//! that get_state's definition names (`ToolDef::ui`, written into its tools/list entry), so a host that renders MCP Apps shows the state as a
//! card beside the tool result. The card draws from the result's text items, which stay exactly
//! what every other client gets: it parses the contract text with the prefixes `render` writes,
//! filled in here, so the two cannot drift. Its one script talks to the host over postMessage
//! only; it fetches nothing. No storage here.

use std::sync::LazyLock;

use serde_json::{json, Value as Json};

use super::{version, SERVER_VERSION};
use crate::json_write;
use crate::render;

/// The card's resource URI.
pub const URI: &str = "ui://handoff-mcp/state-card.html";
/// The MCP Apps resource type.
pub const MIME: &str = "text/html;profile=mcp-app";
/// The extension's identifier, announced in the server's capabilities where a revision has them.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The card's HTML with its constants filled in, built once per isolate.
static HTML: LazyLock<String> = LazyLock::new(|| {
    let string = |s: &str| json_write::to_text(&Json::from(s));
    let constants = format!(
        "{{\"northStar\":{},\"focus\":{},\"protocolVersion\":{},\"version\":{}}}",
        string(render::NORTH_STAR_PREFIX),
        string(render::FOCUS_PREFIX),
        string(version::MCP_APPS),
        string(SERVER_VERSION),
    );
    // Inside a <script>, `<` is written as an escape so no value can close the element.
    let constants = constants.replace('<', "\\u003c");
    include_str!("card.html").replace("/*CONSTANTS*/null", &constants)
});

pub fn html() -> &'static str {
    &HTML
}

/// The resources/read body of the card. No CSP domains are declared: the card loads nothing, so
/// the host's restrictive default applies.
pub fn read() -> Json {
    json!({"contents": [{
        "uri": URI,
        "mimeType": MIME,
        "text": html(),
        "_meta": {"ui": {"prefersBorder": true}},
    }]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constants_are_filled_in() {
        let html = html();
        assert!(!html.contains("/*CONSTANTS*/"));
        let line = html.lines().find(|l| l.starts_with("const C = ")).unwrap();
        let constants: Json =
            serde_json::from_str(line.trim_start_matches("const C = ").trim_end_matches(';'))
                .unwrap();
        assert_eq!(constants["northStar"], render::NORTH_STAR_PREFIX);
        assert_eq!(constants["focus"], render::FOCUS_PREFIX);
        assert_eq!(constants["protocolVersion"], version::MCP_APPS);
    }
}
