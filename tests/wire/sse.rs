//! The legacy HTTP+SSE message path: one POSTed message in, the exact event for the stream out.

use serde_json::json;

use handoff_mcp::http::{self, Headers};
use handoff_mcp::sse;

use crate::support::{block_on, Server};

fn respond(
    s: &Server,
    headers: &[(&str, &str)],
    message: serde_json::Value,
) -> (Option<String>, Option<String>) {
    let headers = Headers::new(headers.iter().copied());
    let body = message.to_string();
    let message = http::parse_json(body.as_bytes()).expect("a JSON body");
    s.with_ctx(None, |ctx| block_on(sse::respond(&message, &headers, ctx)))
}

#[test]
fn requests_become_one_message_event() {
    let s = Server::new();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2024-11-05", "capabilities": {}}});
    let (event, diagnostic) = respond(&s, &[], init);
    let event = event.unwrap();
    assert!(
        event.starts_with("event: message\ndata: {") && event.ends_with("}\n\n"),
        "{event}"
    );
    assert_eq!(event.matches('\n').count(), 3);
    let data: serde_json::Value =
        serde_json::from_str(event["event: message\ndata: ".len()..].trim_end()).unwrap();
    assert_eq!(data["id"], 0);
    assert_eq!(data["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(diagnostic, None);
}

#[test]
fn a_tool_call_over_sse_writes_to_the_same_store() {
    let s = Server::new();
    let call = json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {"name": "set_north_star", "arguments": {"project_id": "p", "text": "from sse"}}});
    let (event, _) = respond(&s, &[("MCP-Protocol-Version", "2025-11-25")], call);
    let event = event.unwrap();
    assert!(
        event.contains("Created project \\\"p\\\" with its North Star."),
        "{event}"
    );
    assert!(!event.contains("structuredContent"), "{event}");
    assert!(s.state_text("p").starts_with("🎯 NORTH STAR: from sse\n"));
}

#[test]
fn notifications_write_nothing_and_errors_are_events() {
    let s = Server::new();
    assert_eq!(
        respond(
            &s,
            &[],
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ),
        (None, None)
    );
    let (event, _) = respond(
        &s,
        &[],
        json!({"jsonrpc": "2.0", "id": 9, "method": "nope"}),
    );
    assert_eq!(
        event.unwrap(),
        "event: message\ndata: {\"error\":{\"code\":-32601,\"message\":\"Method not found: nope\"},\"id\":9,\"jsonrpc\":\"2.0\"}\n\n"
    );
    s.db.broken.set(true);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_state", "arguments": {"project_id": "p"}}});
    let (event, diagnostic) = respond(&s, &[], call);
    let event = event.unwrap();
    assert!(event.contains("\"isError\":true"), "{event}");
    assert!(!event.contains("D1_ERROR"), "{event}");
    assert!(
        diagnostic.unwrap().contains("D1_ERROR"),
        "the operator's log gets the detail"
    );
}
