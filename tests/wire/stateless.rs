//! The 2026-07-28 lane: discover, lists, envelopes, and the error table with HTTP statuses.

use serde_json::{json, Value as Json};

use crate::support::{meta, server_meta, Server, STATELESS};

fn error_of(reply: &crate::support::Reply) -> (u16, Json, i64) {
    let body = reply.json();
    (
        reply.status,
        body["id"].clone(),
        body["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{body}")),
    )
}

#[test]
fn discover_is_exact() {
    let s = Server::new();
    let reply = s.stateless(json!(1), "server/discover", json!({}));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.header("mcp-session-id"), None);
    let body = reply.json();
    let result = &body["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        result["capabilities"],
        json!({"tools": {}, "resources": {}, "prompts": {}, "extensions": {"io.modelcontextprotocol/ui": {}}})
    );
    assert_eq!(result["ttlMs"], 300000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["_meta"], server_meta());
    assert!(result["instructions"]
        .as_str()
        .unwrap()
        .contains("get_state"));
    assert!(result.get("serverInfo").is_none());
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], 1);
}

#[test]
fn tools_list_is_deterministic_strict_and_cacheable() {
    let s = Server::new();
    let first = s.stateless(json!("a"), "tools/list", json!({})).json();
    let second = s.stateless(json!("a"), "tools/list", json!({})).json();
    assert_eq!(first, second);
    let result = &first["result"];
    assert_eq!(
        (result["resultType"].clone(), result["ttlMs"].clone()),
        (json!("complete"), json!(300000))
    );
    let names: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "get_state",
            "set_north_star",
            "set_focus",
            "add_task",
            "complete_task",
            "search"
        ]
    );
    let add = &result["tools"][3];
    assert_eq!(
        add["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "project_id": {"type": "string", "description": "The project's id, e.g. \"handoff-mcp\".", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$", "maxLength": 64},
                "body": {"type": "string", "description": "the task must say what is to be done.", "maxLength": 250, "minLength": 1},
                "kind": {"type": "string", "description": "main, cleanup or record.", "enum": ["main", "cleanup", "record"]},
            },
            "required": ["project_id", "body", "kind"],
            "additionalProperties": false,
        })
    );
    assert_eq!(
        add["annotations"],
        json!({"title": "Add a task", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(result["tools"][0]["annotations"]["readOnlyHint"], true);
    // No outputSchema: a declared schema obliges structuredContent, which Claude Code would
    // hand the model in place of the text.
    assert!(result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.get("outputSchema").is_none()));
}

#[test]
fn tool_results_carry_the_envelope() {
    let s = Server::new();
    let reply = s.stateless(
        json!(0),
        "tools/call",
        json!({"name": "set_north_star", "arguments": {"project_id": "p", "text": "t"}}),
    );
    let body = reply.json();
    assert_eq!(body["id"], 0);
    assert_eq!(body["result"]["resultType"], "complete");
    assert_eq!(body["result"]["_meta"], server_meta());
    assert!(body["result"].get("ttlMs").is_none());
}

#[test]
fn meta_problems_are_400_invalid_params() {
    let s = Server::new();
    let headers = [
        ("MCP-Protocol-Version", STATELESS),
        ("Mcp-Method", "tools/list"),
    ];
    let bodies = [
        // The header names the stateless revision but there is no _meta at all.
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS}}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": 20260728, "io.modelcontextprotocol/clientCapabilities": {}}}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": []}}}),
    ];
    for body in bodies {
        let reply = s.post(&headers, &body.to_string());
        assert_eq!(error_of(&reply), (400, json!(1), -32602), "{body}");
    }
}

#[test]
fn client_info_is_optional() {
    let s = Server::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": {}}}});
    let reply = s.post(
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "tools/list"),
        ],
        &body.to_string(),
    );
    assert_eq!(reply.status, 200);
}

fn with_version(v: &str) -> String {
    let mut m = meta();
    m["io.modelcontextprotocol/protocolVersion"] = json!(v);
    json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": m}}).to_string()
}

#[test]
fn versions_and_version_headers() {
    let s = Server::new();
    // Header and body disagree: -32020 even though the body version is unsupported.
    let reply = s.post(
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "tools/list"),
        ],
        &with_version("v999.0.0"),
    );
    assert_eq!(error_of(&reply), (400, json!(9), -32020));
    // Missing header.
    let reply = s.post(&[("Mcp-Method", "tools/list")], &with_version(STATELESS));
    assert_eq!(error_of(&reply), (400, json!(9), -32020));
    // Agreeing but unsupported: -32022 naming both sides.
    for v in ["v999.0.0", "2099-01-01", "2025-11-25"] {
        let reply = s.post(
            &[("MCP-Protocol-Version", v), ("Mcp-Method", "tools/list")],
            &with_version(v),
        );
        assert_eq!(error_of(&reply), (400, json!(9), -32022), "{v}");
        assert_eq!(
            reply.json()["error"]["data"],
            json!({"supported": ["2026-07-28"], "requested": v})
        );
    }
}

/// Each method that names something repeats that name in Mcp-Name: tools/call and prompts/get
/// their `name`, resources/read its `uri`. A missing or different Mcp-Name is a header mismatch.
#[test]
fn mcp_name_repeats_each_methods_name() {
    let s = Server::new();
    s.ok("set_north_star", json!({"project_id": "p", "text": "t"}));
    for (method, params, name) in [
        (
            "tools/call",
            json!({"name": "get_state", "arguments": {"project_id": "p"}}),
            "get_state",
        ),
        (
            "prompts/get",
            json!({"name": "resume", "arguments": {"project_id": "p"}}),
            "resume",
        ),
        (
            "resources/read",
            json!({"uri": "handoff://projects/p/state"}),
            "handoff://projects/p/state",
        ),
    ] {
        let mut params = params;
        params["_meta"] = meta();
        let body =
            json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
        let headers = |mcp_name: Option<&'static str>| {
            let mut headers = vec![("MCP-Protocol-Version", STATELESS), ("Mcp-Method", method)];
            headers.extend(mcp_name.map(|n| ("Mcp-Name", n)));
            headers
        };
        for wrong in [None, Some("handoff://projects/q/state"), Some("set_focus")] {
            let reply = s.post(&headers(wrong), &body);
            assert_eq!(
                error_of(&reply),
                (400, json!(7), -32020),
                "{method} {wrong:?}"
            );
        }
        let reply = s.post(&headers(Some(name)), &body);
        assert_eq!(reply.status, 200, "{method}: {}", reply.body);
        assert!(
            reply.json().get("result").is_some(),
            "{method}: {}",
            reply.body
        );
    }
}

#[test]
fn routing_headers_must_match_the_body() {
    let s = Server::new();
    let call = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "get_state", "arguments": {"project_id": "p"}, "_meta": meta()}}).to_string();
    let bad: &[&[(&str, &str)]] = &[
        &[("MCP-Protocol-Version", STATELESS)],
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "tools/list"),
            ("Mcp-Name", "get_state"),
        ],
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "TOOLS/CALL"),
            ("Mcp-Name", "get_state"),
        ],
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "tools/call"),
        ],
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "set_focus"),
        ],
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?!!!!?="),
        ],
    ];
    for headers in bad {
        let reply = s.post(headers, &call);
        assert_eq!(error_of(&reply), (400, json!(0), -32020), "{headers:?}");
    }
    let good: &[&[(&str, &str)]] = &[
        &[
            ("mcp-protocol-version", STATELESS),
            ("mcp-method", "tools/call"),
            ("mcp-name", "get_state"),
        ],
        &[
            ("MCP-Protocol-Version", " 2026-07-28\t"),
            ("Mcp-Method", "  tools/call  "),
            ("Mcp-Name", "\tget_state "),
        ],
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "=?base64?dG9vbHMvY2FsbA==?="),
            ("Mcp-Name", "=?base64?Z2V0X3N0YXRl?="),
        ],
    ];
    for headers in good {
        let reply = s.post(headers, &call);
        assert_eq!(reply.status, 200, "{headers:?} {}", reply.body);
        assert_eq!(reply.json()["result"]["isError"], true); // no project "p": a tool result, not a protocol error
    }
}

#[test]
fn methods_outside_the_revision_are_404_method_not_found() {
    let s = Server::new();
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
        "completion/complete",
        "subscriptions/listen",
    ] {
        let mut params = json!({"_meta": meta()});
        if method == "initialize" {
            params["protocolVersion"] = json!(STATELESS);
        }
        let body =
            json!({"jsonrpc": "2.0", "id": "x-1", "method": method, "params": params}).to_string();
        let reply = s.post(
            &[("MCP-Protocol-Version", STATELESS), ("Mcp-Method", method)],
            &body,
        );
        assert_eq!(error_of(&reply), (404, json!("x-1"), -32601), "{method}");
    }
}

#[test]
fn unknown_tools_and_malformed_calls_are_invalid_params() {
    let s = Server::new();
    let reply = s.stateless(
        json!(3),
        "tools/call",
        json!({"name": "rm_rf", "arguments": {}}),
    );
    assert_eq!(error_of(&reply), (200, json!(3), -32602));
    assert_eq!(
        reply.json()["error"]["message"],
        "Unknown tool \"rm_rf\"; the tools are get_state, set_north_star, set_focus, add_task, complete_task, search"
    );
    let reply = s.stateless(
        json!(4),
        "tools/call",
        json!({"name": "get_state", "arguments": [1]}),
    );
    assert_eq!(error_of(&reply), (200, json!(4), -32602));
}

#[test]
fn notifications_are_accepted_with_202() {
    let s = Server::new();
    let body =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": meta()}})
            .to_string();
    let reply = s.post(
        &[
            ("MCP-Protocol-Version", STATELESS),
            ("Mcp-Method", "notifications/cancelled"),
        ],
        &body,
    );
    assert_eq!((reply.status, reply.body.as_str()), (202, ""));
}

#[test]
fn a_broken_database_is_the_tool_s_error_and_leaks_nothing() {
    let s = Server::new();
    s.db.broken.set(true);
    let reply = s.stateless(
        json!(5),
        "tools/call",
        json!({"name": "get_state", "arguments": {"project_id": "p"}}),
    );
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["id"], 5);
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert_eq!(
        body["result"]["content"],
        json!([{"type": "text", "text": "The database could not be read; nothing was written, and calling get_state again is safe but may fail the same way."}])
    );
    assert!(
        !reply.body.contains("D1_ERROR") && !reply.body.contains("SQL"),
        "{}",
        reply.body
    );
}
