//! The 2025-era lane on the same endpoint: initialize as a pure function, no sessions.

use serde_json::{json, Value as Json};

use crate::support::Server;

fn initialize(s: &Server, requested: Json) -> crate::support::Reply {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": requested, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    s.post(&[], &body.to_string())
}

#[test]
fn initialize_negotiates_without_a_session() {
    let s = Server::new();
    let cases = [
        (json!("2025-11-25"), "2025-11-25"),
        (json!("2025-06-18"), "2025-06-18"),
        (json!("2025-03-26"), "2025-03-26"),
        (json!("2024-11-05"), "2024-11-05"),
        (json!("2026-07-28"), "2025-11-25"),
        (json!("2024-01-01"), "2025-11-25"),
        (json!(null), "2025-11-25"),
    ];
    for (requested, negotiated) in cases {
        let reply = initialize(&s, requested.clone());
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("mcp-session-id"), None);
        let result = &reply.json()["result"];
        assert_eq!(result["protocolVersion"], negotiated, "{requested}");
        assert_eq!(
            result["serverInfo"],
            json!({"name": "handoff-mcp", "version": env!("CARGO_PKG_VERSION")})
        );
        assert_eq!(
            result["capabilities"],
            json!({"tools": {}, "resources": {}, "prompts": {}, "logging": {}})
        );
        assert!(result.get("resultType").is_none());
    }
}

#[test]
fn initialize_with_a_stateless_header_is_a_header_mismatch() {
    let s = Server::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}}});
    let reply = s.post(&[("MCP-Protocol-Version", "2026-07-28")], &body.to_string());
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], -32020);
}

#[test]
fn initialized_notification_and_posted_responses_get_202() {
    let s = Server::new();
    for body in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 4, "result": {}}),
    ] {
        let reply = s.post(&[("MCP-Protocol-Version", "2025-11-25")], &body.to_string());
        assert_eq!((reply.status, reply.body.as_str()), (202, ""), "{body}");
    }
}

#[test]
fn ping_list_and_call_without_envelope_fields() {
    let s = Server::new();
    assert_eq!(
        s.handshake("2025-11-25", json!(0), "ping", json!({}))
            .json(),
        json!({"jsonrpc": "2.0", "id": 0, "result": {}})
    );
    let list = s
        .handshake("2025-11-25", json!(1), "tools/list", json!({}))
        .json();
    assert!(list["result"].get("resultType").is_none() && list["result"].get("ttlMs").is_none());
    // One tool list for every era: no outputSchema, so no client may expect structuredContent.
    let old = s
        .handshake("2025-03-26", json!(1), "tools/list", json!({}))
        .json();
    assert_eq!(old["result"], list["result"]);
    assert!(list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.get("outputSchema").is_none()));
    let call = s
        .handshake(
            "2025-11-25",
            json!(2),
            "tools/call",
            json!({"name": "set_north_star", "arguments": {"project_id": "p", "text": "t"}}),
        )
        .json();
    assert_eq!(call["result"]["isError"], false);
    assert!(call["result"].get("resultType").is_none() && call["result"].get("_meta").is_none());
    assert!(call["result"].get("structuredContent").is_none());
    assert!(call["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Created project \"p\""));
    let call = s
        .handshake(
            "2025-03-26",
            json!(3),
            "tools/call",
            json!({"name": "get_state", "arguments": {"project_id": "p"}}),
        )
        .json();
    assert!(call["result"].get("structuredContent").is_none());
    assert_eq!(call["result"]["content"].as_array().unwrap().len(), 2);
}

#[test]
fn the_version_header_rule() {
    let s = Server::new();
    // Absent: taken as 2025-03-26 and served.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    assert_eq!(s.post(&[], &body).status, 200);
    // Present but unknown: 400.
    let reply = s.post(&[("MCP-Protocol-Version", "1999-01-01")], &body);
    assert_eq!(
        (
            reply.status,
            reply.json()["error"]["code"].clone(),
            reply.json()["id"].clone()
        ),
        (400, json!(-32000), json!(1))
    );
    // Stateless header, no _meta: the stateless lane's missing-_meta error.
    let reply = s.post(&[("MCP-Protocol-Version", "2026-07-28")], &body);
    assert_eq!(
        (reply.status, reply.json()["error"]["code"].clone()),
        (400, json!(-32602))
    );
}

#[test]
fn unknown_methods_are_in_band() {
    let s = Server::new();
    let reply = s.handshake(
        "2025-11-25",
        json!(7),
        "resources/subscribe",
        json!({"uri": "handoff://projects/p/state"}),
    );
    assert_eq!(
        (
            reply.status,
            reply.json()["error"]["code"].clone(),
            reply.json()["id"].clone()
        ),
        (200, json!(-32601), json!(7))
    );
}

#[test]
fn logging_set_level_is_accepted_and_changes_nothing() {
    let s = Server::new();
    let reply = s.handshake(
        "2025-11-25",
        json!(1),
        "logging/setLevel",
        json!({"level": "debug"}),
    );
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
}

#[test]
fn batches_only_for_2025_03_26() {
    let s = Server::new();
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_state", "arguments": {"project_id": "p"}}},
    ])
    .to_string();
    let reply = s.post(&[("MCP-Protocol-Version", "2025-03-26")], &batch);
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body.as_array().unwrap().len(), 2);
    assert_eq!(body[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(body[1]["result"]["isError"], true);
    for (headers, body) in [
        (vec![("MCP-Protocol-Version", "2025-06-18")], batch.clone()),
        (vec![], "[]".to_owned()),
        (vec![], json!([{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": crate::support::meta()}}]).to_string()),
        (vec![], json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, 5]).to_string()),
    ] {
        let reply = s.post(&headers, &body);
        assert_eq!((reply.status, reply.json()["error"]["code"].clone()), (400, json!(-32600)), "{body}");
    }
    let notes = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]).to_string();
    assert_eq!(s.post(&[], &notes).status, 202);
}

/// A batch never needs more D1 round trips in one request than D1's Free plan allows (50): 40
/// messages are served, each at most one round trip; 41 are refused whole with a sentence,
/// before any of them runs.
#[test]
fn batches_are_capped_below_d1_s_queries_per_request() {
    let s = Server::new();
    s.ok("set_north_star", json!({"project_id": "p", "text": "n"}));
    let add = |i: usize| {
        json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "add_task",
            "arguments": {"project_id": "p", "body": format!("task {i}"), "kind": "main"}}})
    };
    let before = s.db.batches.get();
    let ok = Json::Array((0..40).map(add).collect()).to_string();
    let reply = s.post(&[("MCP-Protocol-Version", "2025-03-26")], &ok);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json().as_array().unwrap().len(), 40);
    assert_eq!(s.db.batches.get() - before, 40);
    assert_eq!(s.db.stored("SELECT count(*) || '' FROM task"), "40");

    let too_many = Json::Array((100..141).map(add).collect()).to_string();
    let before = s.db.batches.get();
    let reply = s.post(&[("MCP-Protocol-Version", "2025-03-26")], &too_many);
    assert_eq!(
        (reply.status, reply.json()["error"].clone()),
        (
            400,
            json!({"code": -32600, "message": "Invalid Request: a batch holds at most 40 messages"})
        )
    );
    assert_eq!(s.db.batches.get(), before);
    assert_eq!(s.db.stored("SELECT count(*) || '' FROM task"), "40");
}
