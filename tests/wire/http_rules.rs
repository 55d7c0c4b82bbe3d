//! HTTP-level rules of the MCP endpoint: methods, Origin, content type, size, parse errors.

use handoff_mcp::error::Error;
use handoff_mcp::http::{
    forwarded_headers, too_large, Headers, DISCARD_CAP, MAX_BODY_BYTES, READ_CAP,
};
use serde_json::json;

use crate::support::Server;

#[test]
fn get_and_delete_are_405_with_allow_post() {
    let s = Server::new();
    for method in ["GET", "DELETE", "PUT"] {
        let reply = s.request(method, &[("Mcp-Session-Id", "stray")], b"");
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("allow"), Some("POST"));
        assert_eq!(reply.header("mcp-session-id"), None);
    }
}

#[test]
fn origin_rule() {
    let s = Server::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    for (origin, status) in [
        ("https://evil.example", 403),
        ("null", 403),
        ("http://localhost.evil.example", 403),
        ("http://localhost:8787", 200),
        ("http://127.0.0.1:1234", 200),
        ("https://app.example", 200),
    ] {
        assert_eq!(
            s.post(&[("Origin", origin)], &body).status,
            status,
            "{origin}"
        );
    }
    assert_eq!(s.post(&[], &body).status, 200);
}

#[test]
fn content_type_size_and_parse_errors() {
    let s = Server::new();
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    assert_eq!(
        s.request("POST", &[("Content-Type", "text/plain")], ping.as_bytes())
            .status,
        415
    );
    assert_eq!(s.request("POST", &[], ping.as_bytes()).status, 415);
    assert_eq!(
        s.request(
            "POST",
            &[("Content-Type", "application/json; charset=utf-8")],
            ping.as_bytes()
        )
        .status,
        200
    );
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(1 << 20)
    );
    let reply = s.post(&[], &big);
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].clone()),
        (413, json!(-32600))
    );
    // An announced Content-Length is refused before the body is read: the limit itself passes.
    for (announced, status) in [(MAX_BODY_BYTES, 200), (MAX_BODY_BYTES + 1, 413)] {
        let length = announced.to_string();
        let reply = s.request(
            "POST",
            &[
                ("Content-Type", "application/json"),
                ("Content-Length", &length),
            ],
            ping.as_bytes(),
        );
        assert_eq!(reply.status, status, "Content-Length {announced}");
    }
    for garbage in ["", "{", "not json", "{\"jsonrpc\":\"2.0\",\"id\":1,"] {
        let reply = s.post(&[], garbage);
        assert_eq!(reply.status, 400, "{garbage:?}");
        assert_eq!(
            reply.json(),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error: the body is not JSON"}})
        );
    }
}

/// A body sent without its length is read up to `READ_CAP`: the fewest bytes the size rule
/// refuses, so a body cut there is refused and one that ended before it is not. What the shell
/// drops after its 413 is docs/http.md's 8 MiB.
#[test]
fn the_shell_reads_one_byte_past_the_limit() {
    assert_eq!(MAX_BODY_BYTES, 1 << 20);
    assert_eq!(
        too_large(&vec![b' '; READ_CAP]),
        Some(Error::TooLarge {
            limit: MAX_BODY_BYTES
        })
    );
    assert_eq!(too_large(&vec![b' '; READ_CAP - 1]), None);
    assert_eq!(too_large(b""), None);
    assert_eq!(DISCARD_CAP, 8 << 20);
    let s = Server::new();
    let cut = vec![b' '; READ_CAP];
    let reply = s.request("POST", &[("Content-Type", "application/json")], &cut);
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].clone()),
        (413, json!(-32600))
    );
}

#[test]
fn invalid_messages_echo_a_readable_id() {
    let s = Server::new();
    for (body, id) in [
        (
            json!({"jsonrpc": "1.0", "id": 5, "method": "ping"}),
            json!(5),
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            json!(null),
        ),
        (json!({"id": "s", "method": "ping"}), json!("s")),
        (json!(42), json!(null)),
    ] {
        let reply = s.post(&[], &body.to_string());
        assert_eq!(
            (
                reply.status,
                reply.json()["error"]["code"].clone(),
                reply.json()["id"].clone()
            ),
            (400, json!(-32600), id),
            "{body}"
        );
    }
}

/// The SSE transport hands a message to the session's object with exactly the headers the core
/// reads after planning: the MCP routing headers and the User-Agent, never the credential.
#[test]
fn the_sse_path_forwards_the_routing_headers_and_the_user_agent_only() {
    let headers = Headers::new([
        ("Authorization", "Bearer secret-token"),
        ("User-Agent", "claude-code/2.1.332"),
        ("Cookie", "session=1"),
        ("MCP-Name", "get_state"),
        ("Content-Type", "application/json"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Protocol-Version", "2026-07-28"),
    ]);
    assert_eq!(
        forwarded_headers(&headers),
        vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "get_state"),
            ("user-agent", "claude-code/2.1.332"),
        ]
    );
    let unrelated = Headers::new([("Authorization", "Bearer secret-token"), ("Accept", "*/*")]);
    assert_eq!(forwarded_headers(&unrelated), vec![]);
}
