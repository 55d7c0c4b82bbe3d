//! What both halves of the bench send: the realistic project state and the raw 2026-07-28
//! JSON-RPC requests for each tool. Must not time, send or sample anything.

use serde_json::{json, Value as Json};

/// The protocol revision every bench request speaks (stateless, `_meta` on each request).
pub const STATELESS: &str = "2026-07-28";

/// The project get_state is measured on.
pub const STATE_PROJECT: &str = "bench-state";

pub const NORTH_STAR: &str = "handoff-mcp v1 を公開し、どのチャット世代からでも get_state 一回で \
     北極星と本丸に戻れるようにする";
pub const FOCUS: &str = "D1 のラウンドトリップ以外のコストが見えないところまで get_state を削る";
pub const WHY: &str = "性能の issue: 1 クエリの Worker から 15 % 以内に収める";

/// The deferred tasks get_state lists (kind, body); a realistic handful, not a stress case.
pub const DEFERRED: [(&str, &str); 5] = [
    (
        "cleanup",
        "Remove the temporary debug logging from the D1 adapter",
    ),
    (
        "record",
        "Note in ARCHITECTURE.md why a tool call is exactly one D1 batch",
    ),
    (
        "cleanup",
        "Drop the unused futures-util feature once workers-rs 0.9 lands",
    ),
    (
        "record",
        "Write down the wrangler dev CPU split between node and workerd",
    ),
    (
        "cleanup",
        "Rename the smoke scenario's projects to say which era they use",
    ),
];

/// The first of `DEFERRED`'s bodies that `state` (a reply or rows holding get_state's list)
/// does not hold, if any: how every half of the bench checks that its seeding took.
pub fn unlisted_deferred(state: &str) -> Option<&'static str> {
    DEFERRED
        .iter()
        .map(|(_, body)| *body)
        .find(|body| !state.contains(body))
}

/// Tasks that are stored but never listed: main tasks, and one deferred task completed by setup.
pub const UNLISTED: [(&str, &str); 3] = [
    ("main", "Make get_state's render allocation-free"),
    ("main", "Measure add_task against the one-query floor"),
    (
        "cleanup",
        "A finished cleanup task, so the done rows exist too",
    ),
];

/// The body add_task sends in both halves, numbered per request (`numbered`): add_task answers
/// an open task of the same kind and body with that task instead of adding a second one, so a
/// body sent twice would measure that path, not an insert.
pub const ADD_BODY: &str =
    "Check the p99 of add_task at concurrency 16 against the D1 floor, take {n}";

/// Where the per-request number goes in a body.
pub const NUMBER: &str = "{n}";

/// `body` with its number filled in, wherever it is (a statement floor's body has it twice).
pub fn numbered(body: &str, n: u64) -> String {
    body.replace(NUMBER, &n.to_string())
}

/// One MCP request as it goes on the wire: headers and JSON body.
#[derive(Debug, Clone)]
pub struct Request {
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

/// The client facts a 2026-07-28 request carries in `params._meta`.
fn meta() -> Json {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "handoff-bench", "version": "0.1"},
    })
}

/// A 2026-07-28 request of any method; `Mcp-Name` is added for tools/call as the revision asks.
pub fn request(method: &str, mut params: Json) -> Request {
    params["_meta"] = meta();
    let mut headers = vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version", STATELESS.to_owned()),
        ("Mcp-Method", method.to_owned()),
    ];
    if let Some(name) = params.get("name").and_then(Json::as_str) {
        headers.push(("Mcp-Name", name.to_owned()));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    Request { headers, body }
}

/// tools/call for one tool.
pub fn tool(name: &str, arguments: Json) -> Request {
    request("tools/call", json!({"name": name, "arguments": arguments}))
}

pub fn get_state(project_id: &str) -> Request {
    tool("get_state", json!({"project_id": project_id}))
}

pub fn set_north_star(project_id: &str) -> Request {
    tool(
        "set_north_star",
        json!({"project_id": project_id, "text": NORTH_STAR}),
    )
}

pub fn set_focus(project_id: &str) -> Request {
    tool(
        "set_focus",
        json!({"project_id": project_id, "statement": FOCUS, "why": WHY}),
    )
}

pub fn add_task(project_id: &str, kind: &str, body: &str) -> Request {
    tool(
        "add_task",
        json!({"project_id": project_id, "body": body, "kind": kind}),
    )
}

pub fn complete_task(task_id: &str) -> Request {
    tool("complete_task", json!({"task_id": task_id}))
}

/// The requests that give `project_id` the realistic state, in order. The last `UNLISTED`
/// deferred task must then be completed by the caller with the id add_task returned.
pub fn setup(project_id: &str) -> Vec<Request> {
    let mut all = vec![set_north_star(project_id), set_focus(project_id)];
    for (kind, body) in DEFERRED.iter().chain(UNLISTED.iter()) {
        all.push(add_task(project_id, kind, body));
    }
    all
}

/// A successful tool result, as it appears in the compact JSON the server writes. Checking for
/// it is a substring search, so the load client spends its CPU on sending, not on parsing.
pub const TOOL_OK: &str = "\"isError\":false";

/// The task id in an add_task reply, read from its text: `Added {kind} task {id} to project …`.
pub fn task_id(reply_body: &str) -> Option<String> {
    let json: Json = serde_json::from_str(reply_body).ok()?;
    let text = json["result"]["content"][0]["text"].as_str()?;
    let (_, rest) = text.strip_prefix("Added ")?.split_once(" task ")?;
    rest.split_once(' ').map(|(id, _)| id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_calls_carry_the_routing_headers_and_meta() {
        let req = get_state("p");
        let names: Vec<_> = req.headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert!(names.contains(&("Mcp-Method", "tools/call")));
        assert!(names.contains(&("Mcp-Name", "get_state")));
        let body: Json = serde_json::from_str(&req.body).unwrap();
        assert_eq!(
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            STATELESS
        );
        assert_eq!(body["params"]["arguments"]["project_id"], "p");
    }

    #[test]
    fn numbered_bodies_differ() {
        let a = add_task("p", "cleanup", ADD_BODY).body;
        assert!(a.contains(NUMBER));
        assert_ne!(numbered(&a, 1), numbered(&a, 2));
        assert!(numbered(&a, 7).contains("take 7"));
    }

    #[test]
    fn setup_lists_every_task_once() {
        assert_eq!(setup("p").len(), 2 + DEFERRED.len() + UNLISTED.len());
    }
}
