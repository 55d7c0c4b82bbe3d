//! Bad input, table-driven: each case is one raw request that must get its expected answer (the
//! HTTP status and JSON-RPC code, or a tool error naming the rule it broke), write nothing and not
//! panic. Sentences pinned word for word live in tools.rs and http_rules.rs; this module sweeps
//! the input space around them, so it checks codes and the words that name a rule or a limit.

use std::panic::{self, AssertUnwindSafe};

use handoff_mcp::http::MAX_BODY_BYTES;
use serde_json::{json, Value as Json};

use crate::support::{meta, Server, STATELESS};

const HANDSHAKE: &str = "2025-11-25";
const PROJECT_RULE: &str = "project_id must be 1-64 characters of ASCII letters, digits";
const KIND_RULE: &str = "kind must be one of main, cleanup, record";

/// What a case must be answered with. Every case must also leave the database as it was.
enum Expect {
    /// A JSON-RPC error: HTTP status, code, and the id echoed.
    Rpc(u16, i64, Json),
    /// A tools/call result with isError true whose sentence contains this text.
    Tool(String),
    /// HTTP 200 with a result whose id is spelt exactly as in the request.
    Echo(String),
    /// HTTP 202 with an empty body: a notification, which runs nothing.
    Accepted,
    /// The bare 404 of an unknown path.
    NotFound,
}

fn rpc(status: u16, code: i64) -> Expect {
    Expect::Rpc(status, code, json!(1))
}

fn tool(text: impl Into<String>) -> Expect {
    Expect::Tool(text.into())
}

/// Not JSON at all: HTTP 400, -32700, id null.
fn parse_error() -> Expect {
    Expect::Rpc(400, -32700, Json::Null)
}

/// JSON, but not a message we can answer by id: HTTP 400, -32600, id null.
fn invalid_no_id() -> Expect {
    Expect::Rpc(400, -32600, Json::Null)
}

struct Case {
    name: String,
    /// The path posted to; `None` is the test token's `/test-token/mcp`.
    path: Option<String>,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    expect: Expect,
}

/// A body posted with no MCP headers (the headerless 2025-03-26 lane).
fn raw(name: impl Into<String>, body: impl Into<Vec<u8>>, expect: Expect) -> Case {
    Case {
        name: name.into(),
        path: None,
        headers: Vec::new(),
        body: body.into(),
        expect,
    }
}

#[derive(Clone, Copy, Debug)]
enum Lane {
    Stateless,
    Handshake,
}

const LANES: [Lane; 2] = [Lane::Stateless, Lane::Handshake];

/// A tools/call with the given params object, sent the way a well-behaved client of `lane` would
/// (the stateless lane repeats the name in Mcp-Name, base64-encoded so any name can travel).
fn call_params(lane: Lane, name: impl Into<String>, mut params: Json, expect: Expect) -> Case {
    let mut headers = Vec::new();
    match lane {
        Lane::Stateless => {
            params["_meta"] = meta();
            headers.push(("MCP-Protocol-Version", STATELESS.to_owned()));
            headers.push(("Mcp-Method", "tools/call".to_owned()));
            if let Some(tool) = params["name"].as_str() {
                let encoded = format!("=?base64?{}?=", base64(tool.as_bytes()));
                headers.push(("Mcp-Name", encoded));
            }
        }
        Lane::Handshake => headers.push(("MCP-Protocol-Version", HANDSHAKE.to_owned())),
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    Case {
        name: format!("{lane:?} {}", name.into()),
        path: None,
        headers,
        body: body.to_string().into_bytes(),
        expect,
    }
}

fn call(lane: Lane, tool: &str, arguments: Json, expect: Expect) -> Case {
    let name = format!("{tool} {arguments}");
    let name: String = name.chars().take(160).collect();
    call_params(
        lane,
        name,
        json!({"name": tool, "arguments": arguments}),
        expect,
    )
}

/// Standard base64 with padding, for Mcp-Name values that are not plain ASCII.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A read-only token for p1, besides the full test token.
const READ_ONLY_TOKEN: &str = "ro-token";

/// The server every case starts from: project p1 with a North Star, a focus and one open task,
/// and a read-only token for p1 besides the full test token.
fn seeded() -> Server {
    let s = Server::with_vars(&[
        ("AUTH_TOKEN", crate::support::TOKEN),
        ("PROJECT_TOKENS", "ro-token=p1:read"),
    ]);
    s.ok(
        "set_north_star",
        json!({"project_id": "p1", "text": "Ship v1"}),
    );
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "Write the store", "why": "w"}),
    );
    s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "b", "kind": "cleanup"}),
    );
    s
}

/// Runs one case on a fresh seeded server.
fn check(case: &Case) -> Result<(), String> {
    let s = seeded();
    let before = s.db.dump();
    if let Some(path) = &case.path {
        s.credential(path, None);
    }
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend(case.headers.iter().map(|(k, v)| (*k, v.as_str())));
    let reply = s.request("POST", &headers, &case.body);
    let verdict = judge(&reply, &case.expect);
    if s.db.dump() != before {
        return Err(format!(
            "wrote to the database; reply {}",
            clip(&reply.body)
        ));
    }
    verdict
}

fn judge(reply: &crate::support::Reply, expect: &Expect) -> Result<(), String> {
    let fail = |what: &str| {
        Err(format!(
            "{what}: HTTP {} {}",
            reply.status,
            clip(&reply.body)
        ))
    };
    if let Expect::Accepted = expect {
        return match (reply.status, reply.body.as_str()) {
            (202, "") => Ok(()),
            _ => fail("expected 202 with an empty body"),
        };
    }
    if let Expect::NotFound = expect {
        return match (reply.status, reply.body.as_str()) {
            (404, "Not Found") => Ok(()),
            _ => fail("expected the bare 404"),
        };
    }
    let Ok(body) = serde_json::from_str::<Json>(&reply.body) else {
        return fail("the body is not JSON");
    };
    if body["jsonrpc"] != "2.0" {
        return fail("no \"jsonrpc\": \"2.0\"");
    }
    match expect {
        Expect::Rpc(status, code, id) => {
            let message_ok = body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty());
            if reply.status != *status || body["error"]["code"] != *code || !message_ok {
                return fail(&format!("expected HTTP {status} with error {code}"));
            }
            if body["id"] != *id || body.get("result").is_some() {
                return fail(&format!("expected id {id} and no result"));
            }
        }
        Expect::Tool(text) => {
            let result = &body["result"];
            let said = result["content"][0]["text"].as_str().unwrap_or_default();
            if reply.status != 200 || result["isError"] != true || !said.contains(text.as_str()) {
                return fail(&format!("expected a tool error saying {text:?}"));
            }
            if result.get("structuredContent").is_some() {
                return fail("a tool error carries structuredContent");
            }
        }
        Expect::Echo(id) => {
            if reply.status != 200 || body.get("result").is_none() {
                return fail("expected HTTP 200 with a result");
            }
            if !reply.body.contains(&format!("\"id\":{id}")) {
                return fail(&format!("expected the id spelt {id}"));
            }
        }
        Expect::Accepted | Expect::NotFound => unreachable!("handled above"),
    }
    Ok(())
}

fn clip(s: &str) -> String {
    let clipped: String = s.chars().take(300).collect();
    if clipped.len() < s.len() {
        format!("{clipped}…")
    } else {
        clipped
    }
}

/// Runs a table, isolating each case so one panic or failure does not hide the rest, prints the
/// count for the reliability report, and fails listing every case that went wrong.
fn run(group: &str, cases: Vec<Case>) {
    tally(
        group,
        cases.iter().map(|case| (case.name.clone(), || check(case))),
    );
}

fn tally<F: FnOnce() -> Result<(), String>>(
    group: &str,
    checks: impl Iterator<Item = (String, F)>,
) {
    let (mut tried, mut panics) = (0, 0);
    let mut wrong = Vec::new();
    for (name, check) in checks {
        tried += 1;
        match panic::catch_unwind(AssertUnwindSafe(check)) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => wrong.push(format!("{name}: {why}")),
            Err(_) => {
                panics += 1;
                wrong.push(format!("{name}: panicked"));
            }
        }
    }
    assert!(tried > 0);
    println!(
        "bad-input native {group}: {tried} cases, {panics} panics, {} wrong",
        wrong.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn ping_with(id: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
}

/// A ping padded to exactly `len` bytes.
fn ping_of_len(len: usize) -> Vec<u8> {
    let head = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#;
    let tail = r#""}}"#;
    let pad = len - head.len() - tail.len();
    format!("{head}{}{tail}", "x".repeat(pad)).into_bytes()
}

#[test]
fn bodies_that_are_not_json_rpc() {
    let ping = ping_with("1");
    let mut cases = Vec::new();
    let not_json: &[&str] = &[
        "",
        " ",
        "\n\t",
        "{",
        "}",
        "[",
        "nul",
        "tru",
        "not json",
        "{'jsonrpc':'2.0','id':1,'method':'ping'}",
        r#"{"jsonrpc":"2.0","id":1,"method":"ping",}"#,
        r#"{"jsonrpc":"2.0" "id":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},]"#,
        "NaN",
        "Infinity",
        "-",
        "01",
        "1e400",
        r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
        r#"/* comment */ {"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"} // comment"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        // A raw control character or NUL inside a string must be escaped in JSON.
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\u{1}ng\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":\"a\u{0}b\",\"method\":\"ping\"}",
        // Lone surrogates in escapes, wherever they stand.
        r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"\udfff","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping\ud800"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"\udc00":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"set_north_star","arguments":{"project_id":"p1","text":"\ud800\u0041"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"set_north_star","arguments":{"project_id":"p1","text":"a\ud800\ud800b"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"set_north_star","arguments":{"project_id":"p1","text":"\udc00\ud800"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_task","arguments":{"project_id":"p1","body":"x\ud83c","kind":"record"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\u12"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\x41"}}"#,
    ];
    for body in not_json {
        cases.push(raw(format!("not JSON {body:?}"), *body, parse_error()));
    }
    let not_utf8: &[&[u8]] = &[
        b"\xff",
        b"\xfe\xff\x00{",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}",
        // An overlong NUL and a UTF-8-encoded surrogate, both invalid UTF-8.
        b"{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\x80\",\"method\":\"ping\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"ping\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"s\":\"\xf4\x90\x80\x80\"}}",
    ];
    for body in not_utf8 {
        cases.push(raw(format!("not UTF-8 {body:?}"), *body, parse_error()));
    }
    let utf16: Vec<u8> = ping.encode_utf16().flat_map(u16::to_le_bytes).collect();
    cases.push(raw("UTF-16LE", utf16, parse_error()));

    // Size: the limit is on bytes, checked before parsing.
    let too_large = || Expect::Rpc(413, -32600, Json::Null);
    cases.push(raw(
        "exactly the limit is served",
        ping_of_len(MAX_BODY_BYTES),
        Expect::Echo("1".into()),
    ));
    cases.push(raw(
        "one byte over the limit",
        ping_of_len(MAX_BODY_BYTES + 1),
        too_large(),
    ));
    cases.push(raw(
        "garbage over the limit",
        vec![0xff; MAX_BODY_BYTES + 1],
        too_large(),
    ));
    cases.push(raw("4 MiB of spaces", vec![b' '; 4 << 20], too_large()));

    // Nesting: serde_json stops at 128 levels, so depth cannot exhaust the stack.
    let nest = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    cases.push(raw("129 nested arrays", nest(129), parse_error()));
    cases.push(raw("100000 nested arrays", nest(100_000), parse_error()));
    cases.push(raw(
        "100000 open brackets",
        "[".repeat(100_000),
        parse_error(),
    ));
    let objects = format!("{}1{}", r#"{"a":"#.repeat(200), "}".repeat(200));
    cases.push(raw("200 nested objects", objects, parse_error()));
    let deep_params = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{}}}}}"#,
        nest(100)
    );
    cases.push(raw(
        "100 levels in params is parsed and served",
        deep_params,
        Expect::Echo("1".into()),
    ));
    let deep_args = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"get_state","arguments":{{"project_id":{}}}}}}}"#,
        nest(100)
    );
    cases.push(raw(
        "100 levels as an argument",
        deep_args,
        tool("argument \"project_id\" must be a string, got an array"),
    ));

    // Well-formed JSON that is not a JSON-RPC message.
    for body in [
        "42", "\"ping\"", "null", "true", "{}", "[[]]", "[1]", "[null]",
    ] {
        cases.push(raw(format!("not a message {body}"), body, invalid_no_id()));
    }
    cases.push(raw("an empty batch", "[]", invalid_no_id()));
    for (name, body) in [
        ("jsonrpc missing", r#"{"id":1,"method":"ping"}"#),
        ("jsonrpc 1.0", r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
        (
            "jsonrpc a number",
            r#"{"jsonrpc":2.0,"id":1,"method":"ping"}"#,
        ),
        (
            "jsonrpc padded",
            r#"{"jsonrpc":"2.0 ","id":1,"method":"ping"}"#,
        ),
        ("jsonrpc null", r#"{"jsonrpc":null,"id":1,"method":"ping"}"#),
        ("method missing", r#"{"jsonrpc":"2.0","id":1}"#),
        ("method a number", r#"{"jsonrpc":"2.0","id":1,"method":5}"#),
        ("method null", r#"{"jsonrpc":"2.0","id":1,"method":null}"#),
        (
            "method an array",
            r#"{"jsonrpc":"2.0","id":1,"method":["ping"]}"#,
        ),
        (
            "params a string",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#,
        ),
        (
            "params a number",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#,
        ),
        (
            "params null",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#,
        ),
        (
            "params true",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":true}"#,
        ),
        (
            "result and method",
            r#"{"jsonrpc":"2.0","id":1,"result":{},"method":5}"#,
        ),
    ] {
        cases.push(raw(name, body, Expect::Rpc(400, -32600, json!(1))));
    }
    for method in ["", " ping", "PING", "ping\\u0000", "tools/call/", "🎯"] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}"}}"#);
        cases.push(raw(format!("method {method:?}"), body, rpc(200, -32601)));
    }
    run("bodies", cases);
}

#[test]
fn odd_ids() {
    let mut cases = Vec::new();
    // Ids that are served: each must come back spelt exactly as sent.
    let long = format!("\"{}\"", "i".repeat(10_000));
    for id in [
        "0",
        "-1",
        "1",
        "9007199254740993",
        "18446744073709551615",
        "-9223372036854775808",
        "\"\"",
        "\"0\"",
        "\"null\"",
        "\"1.5\"",
        "\"🎯\"",
        "\"\\u0000\"",
        "\"\\u001f\\n\\\"\"",
        "\"\u{2028}\"",
        long.as_str(),
    ] {
        let name: String = format!("id {id}").chars().take(40).collect();
        cases.push(raw(name, ping_with(id), Expect::Echo(id.to_owned())));
    }
    // Ids that are refused: a fraction, a number past 64 bits (it would come back as a float
    // spelt differently), null and non-scalars.
    for id in [
        "null",
        "1.5",
        "1.0",
        "-0.0",
        "1e3",
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "true",
        "false",
        "[]",
        "[1]",
        "{}",
        "{\"id\":1}",
    ] {
        cases.push(raw(format!("id {id}"), ping_with(id), invalid_no_id()));
    }
    cases.push(raw(
        "a duplicate id key: the last is answered",
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","id":2}"#,
        Expect::Echo("2".into()),
    ));
    // No id: a notification, answered 202 and never run, whatever it asks for.
    for (name, body) in [
        ("ping", json!({"jsonrpc": "2.0", "method": "ping"})),
        (
            "tools/call set_north_star",
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "set_north_star", "arguments": {"project_id": "p1", "text": "overwritten?"}}}),
        ),
        (
            "tools/call add_task",
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "add_task", "arguments": {"project_id": "p1", "body": "b", "kind": "main"}}}),
        ),
        (
            "tools/call complete_task",
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "complete_task", "arguments": {"task_id": "task-1"}}}),
        ),
    ] {
        cases.push(raw(
            format!("notification {name}"),
            body.to_string(),
            Expect::Accepted,
        ));
    }
    let mut stateless = json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "complete_task", "arguments": {"task_id": "task-1"}, "_meta": meta()}});
    cases.push(Case {
        name: "stateless notification tools/call complete_task".into(),
        path: None,
        headers: vec![
            ("MCP-Protocol-Version", STATELESS.into()),
            ("Mcp-Method", "tools/call".into()),
            ("Mcp-Name", "complete_task".into()),
        ],
        body: stateless.to_string().into_bytes(),
        expect: Expect::Accepted,
    });
    stateless["id"] = json!(null);
    cases.push(Case {
        name: "stateless tools/call with id null".into(),
        path: None,
        headers: vec![
            ("MCP-Protocol-Version", STATELESS.into()),
            ("Mcp-Method", "tools/call".into()),
            ("Mcp-Name", "complete_task".into()),
        ],
        body: stateless.to_string().into_bytes(),
        expect: invalid_no_id(),
    });
    run("ids", cases);
}

/// Each tool's parameters as tools/list gives them: (tool, [(param, required)]).
fn tool_params() -> Vec<(String, Vec<(String, bool)>)> {
    let s = Server::new();
    let list = s
        .handshake(HANDSHAKE, json!(1), "tools/list", json!({}))
        .json();
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let schema = &t["inputSchema"];
            let required = schema["required"].as_array().unwrap();
            // Required ones first, in the order the tool declares them (properties are sorted).
            let mut params: Vec<(String, bool)> = required
                .iter()
                .map(|p| (p.as_str().unwrap().to_owned(), true))
                .collect();
            for p in schema["properties"].as_object().unwrap().keys() {
                if !required.contains(&json!(p)) {
                    params.push((p.clone(), false));
                }
            }
            (t["name"].as_str().unwrap().to_owned(), params)
        })
        .collect()
}

/// A valid value for each parameter, against the seeded server.
fn good(param: &str) -> Json {
    match param {
        "project_id" => json!("p1"),
        "task_id" => json!("task-1"),
        "kind" => json!("cleanup"),
        "text" | "statement" | "why" | "body" | "done_when" | "evidence" | "query" => {
            json!("fine")
        }
        other => panic!("no good value for a new parameter {other:?}; add one here"),
    }
}

/// Valid arguments for `tool` with `param` set to `value` (or removed when `None`).
fn args_with(params: &[(String, bool)], param: &str, value: Option<Json>) -> Json {
    let mut args = json!({});
    for (p, _) in params {
        args[p] = good(p);
    }
    let map = args.as_object_mut().unwrap();
    match value {
        Some(v) => map.insert(param.to_owned(), v),
        None => map.remove(param),
    };
    args
}

#[test]
fn wrong_types_unknown_and_missing_arguments_for_every_tool() {
    let tools = tool_params();
    assert_eq!(tools.len(), 6);
    let deep = (0..100).fold(json!("p1"), |v, _| json!([v]));
    let wrong: [(Json, &str); 11] = [
        (json!(0), "a number"),
        (json!(-1), "a number"),
        (json!(1.5), "a number"),
        (json!(1e300), "a number"),
        (json!(true), "a boolean"),
        (json!(false), "a boolean"),
        (json!([]), "an array"),
        (json!(["p1"]), "an array"),
        (deep, "an array"),
        (json!({}), "an object"),
        (json!({"value": "p1"}), "an object"),
    ];
    let unknown = [
        "extra",
        "",
        " ",
        "PROJECT_ID",
        "project_id ",
        "projectId",
        "_meta",
        "__proto__",
        "a\u{0}b",
        "🎯",
    ];
    let mut cases = Vec::new();
    for lane in LANES {
        for (tool_name, params) in &tools {
            for (param, required) in params {
                for (value, type_name) in &wrong {
                    let args = args_with(params, param, Some(value.clone()));
                    let said = format!("argument \"{param}\" must be a string, got {type_name}");
                    cases.push(call(lane, tool_name, args, tool(said)));
                }
                if *required {
                    // Left out, a project id is asked for by name (this token reaches several).
                    let said = match param.as_str() {
                        "project_id" => {
                            "needs a project_id: this connection reaches several".into()
                        }
                        param => format!("missing required argument \"{param}\""),
                    };
                    let absent = args_with(params, param, None);
                    cases.push(call(lane, tool_name, absent, tool(said.clone())));
                    let null = args_with(params, param, Some(Json::Null));
                    cases.push(call(lane, tool_name, null, tool(said)));
                }
            }
            for key in unknown.iter().copied().chain([&*"k".repeat(1000)]) {
                let mut args = args_with(params, "", None);
                args[key] = json!("x");
                cases.push(call(lane, tool_name, args, tool("unknown argument \"")));
            }
            // Arguments that are not an object at all.
            for arguments in [json!([]), json!(["p1"]), json!("p1"), json!(0), json!(true)] {
                cases.push(call(lane, tool_name, arguments, rpc(200, -32602)));
            }
            // No arguments, or null: every tool has a required argument to name.
            let first_required = &params.iter().find(|(_, r)| *r).unwrap().0;
            let said = match first_required.as_str() {
                "project_id" => "needs a project_id: this connection reaches several".into(),
                param => format!("missing required argument \"{param}\""),
            };
            let no_args = json!({"name": tool_name});
            cases.push(call_params(
                lane,
                format!("{tool_name} without arguments"),
                no_args,
                tool(said.clone()),
            ));
            cases.push(call(lane, tool_name, Json::Null, tool(said)));
        }
        // Tool names that are not ours.
        for name in [
            "",
            "Get_State",
            "GET_STATE",
            "get_state ",
            " get_state",
            "get-state",
            "get_state\u{0}",
            "get_state\n",
            "rm -rf /",
            "🎯",
            &"n".repeat(10_000),
        ] {
            let args = json!({"project_id": "p1"});
            let label: String = format!("unknown tool {name:?}").chars().take(60).collect();
            let params = json!({"name": name, "arguments": args});
            cases.push(call_params(lane, label, params, rpc(200, -32602)));
        }
    }
    // A name that is not a string: the handshake lane says so; the stateless lane cannot match it
    // against Mcp-Name, so it is a header mismatch there.
    for name in [json!(5), json!(null), json!(["get_state"]), json!({})] {
        let params = json!({"name": name, "arguments": {"project_id": "p1"}});
        cases.push(call_params(
            Lane::Handshake,
            format!("name {name}"),
            params,
            rpc(200, -32602),
        ));
        let mut stateless = call_params(
            Lane::Stateless,
            format!("name {name}"),
            json!({"name": name, "arguments": {"project_id": "p1"}}),
            rpc(400, -32020),
        );
        stateless.headers.push(("Mcp-Name", "get_state".into()));
        cases.push(stateless);
    }
    let params = json!({"arguments": {"project_id": "p1"}});
    cases.push(call_params(
        Lane::Handshake,
        "no name",
        params.clone(),
        rpc(200, -32602),
    ));
    cases.push(call_params(
        Lane::Stateless,
        "no name",
        params,
        rpc(400, -32020),
    ));
    run("arguments", cases);
}

/// The text arguments, each with the tool that takes it.
const TEXTS: [(&str, &str, bool); 6] = [
    ("set_north_star", "text", false),
    ("set_focus", "statement", false),
    ("set_focus", "why", true),
    ("set_focus", "done_when", true),
    ("add_task", "body", false),
    ("complete_task", "evidence", true),
];

/// Each text's limit in characters: a task body is shown twice by get_state, so it is shorter.
fn limit(param: &str) -> usize {
    if param == "body" {
        250
    } else {
        1000
    }
}

fn text_args(tool_name: &str, param: &str, value: &str) -> Json {
    let mut args = match tool_name {
        "set_north_star" => json!({"project_id": "p1", "text": "fine"}),
        "set_focus" => {
            json!({"project_id": "p1", "statement": "fine", "why": "fine", "done_when": "fine"})
        }
        "complete_task" => json!({"task_id": "task-1", "evidence": "fine"}),
        _ => json!({"project_id": "p1", "body": "fine", "kind": "record"}),
    };
    args[param] = json!(value);
    args
}

#[test]
fn texts_with_control_characters_blanks_and_over_the_limit() {
    let mut cases = Vec::new();
    let controls = (0u32..0x20)
        .filter(|c| ![0x09, 0x0a, 0x0d].contains(c))
        .chain(0x7f..0xa0);
    for c in controls {
        let ch = char::from_u32(c).unwrap();
        for (tool_name, param, _) in TEXTS {
            let args = text_args(tool_name, param, &format!("a{ch}b"));
            let said = format!("{param} contains the control character U+{c:04X}");
            cases.push(call(Lane::Stateless, tool_name, args, tool(said)));
        }
    }
    for lane in LANES {
        for (tool_name, param, _) in TEXTS {
            let max = limit(param);
            let over: [(String, usize); 6] = [
                ("x".repeat(max + 1), max + 1),
                ("🎯".repeat(max + 1), max + 1),
                ("é".repeat(max + 1), max + 1),
                ("e\u{301}".repeat(max / 2 + 1), max + 2),
                ("x".repeat(100 * 1024), 100 * 1024),
                ("本".repeat(100 * 1024), 100 * 1024),
            ];
            for (text, chars) in &over {
                let args = text_args(tool_name, param, text);
                let said = format!("{param} is {chars} characters long; the limit is {max}");
                cases.push(call(lane, tool_name, args, tool(said)));
            }
        }
    }
    for blank in ["", " ", "\t", "\r\n", "\u{3000}", "\u{a0}", " \n \t "] {
        for (tool_name, param, blank_ok) in TEXTS {
            if !blank_ok {
                let args = text_args(tool_name, param, blank);
                cases.push(call(
                    Lane::Stateless,
                    tool_name,
                    args,
                    tool(format!("{param} is empty")),
                ));
            }
        }
    }
    run("texts", cases);
}

#[test]
fn project_id_task_id_and_kind_rules() {
    let mut cases = Vec::new();
    let bad_projects = [
        "".to_owned(),
        " ".into(),
        "-a".into(),
        "_a".into(),
        ".a".into(),
        ".".into(),
        "..".into(),
        "a b".into(),
        " a".into(),
        "a ".into(),
        "a/b".into(),
        "../p1".into(),
        "a\\b".into(),
        "a:b".into(),
        "a%2Fb".into(),
        "a?b".into(),
        "a#b".into(),
        "a'b".into(),
        "a\"b".into(),
        "p1\u{0}".into(),
        "p1\n".into(),
        "p1\t".into(),
        "ｐ１".into(),
        "é".into(),
        "プロジェクト".into(),
        "p1\u{200b}".into(),
        "p\u{130}".into(),
        "🎯".into(),
        "a".repeat(65),
        "a".repeat(10_000),
    ];
    let takes_project = [
        ("get_state", json!({})),
        ("set_north_star", json!({"text": "t"})),
        ("set_focus", json!({"statement": "s"})),
        ("add_task", json!({"body": "b", "kind": "main"})),
    ];
    for lane in LANES {
        for (tool_name, rest) in &takes_project {
            for id in &bad_projects {
                let mut args = rest.clone();
                args["project_id"] = json!(id);
                cases.push(call(lane, tool_name, args, tool(PROJECT_RULE)));
            }
            // Valid ids of projects that do not exist (ids are case-sensitive).
            for id in ["P1", "p1.", "p1-", "a..b", "p1_"] {
                let mut args = rest.clone();
                args["project_id"] = json!(id);
                if *tool_name != "set_north_star" {
                    let said = format!("No project \"{id}\" yet");
                    cases.push(call(lane, tool_name, args, tool(said)));
                }
            }
        }
        for id in ["", " ", "\t", "\n"] {
            let args = json!({"task_id": id});
            cases.push(call(lane, "complete_task", args, tool("task_id is empty")));
        }
        for id in ["t".repeat(65), "t".repeat(10_000), "🎯".repeat(65)] {
            let args = json!({"task_id": id});
            cases.push(call(
                lane,
                "complete_task",
                args,
                tool("longer than 64 characters"),
            ));
        }
        // Look-alikes of the existing task-1 must not complete it.
        for id in [
            "task-1 ",
            " task-1",
            "TASK-1",
            "task-1\u{0}",
            "task-%",
            "task-_",
            "' OR '1'='1",
            "task-1' --",
            "../task-1",
            &"t".repeat(64),
        ] {
            let args = json!({"task_id": id});
            cases.push(call(lane, "complete_task", args, tool("No task \"")));
        }
        for kind in [
            "",
            " ",
            "MAIN",
            "Cleanup",
            "main ",
            " main",
            "main\u{0}",
            "ｍａｉｎ",
            "deferred",
            "cleanup,record",
            "null",
        ] {
            let args = json!({"project_id": "p1", "body": "b", "kind": kind});
            cases.push(call(lane, "add_task", args, tool(KIND_RULE)));
        }
    }
    run("ids-and-kinds", cases);
}

/// A tools/call the server must accept; returns its result.
fn accepted(s: &Server, tool_name: &str, args: Json) -> Result<Json, String> {
    let params = json!({"name": tool_name, "arguments": args});
    let reply = s.stateless(json!(1), "tools/call", params);
    let body: Json = serde_json::from_str(&reply.body).map_err(|e| format!("not JSON: {e}"))?;
    if reply.status != 200 || body["result"]["isError"] != false {
        return Err(format!("{tool_name} refused: {}", clip(&reply.body)));
    }
    Ok(body["result"].clone())
}

fn same(what: &str, expected: &Json, got: &Json) -> Result<(), String> {
    if expected == got {
        Ok(())
    } else {
        Err(format!(
            "{what}: expected {}, got {}",
            clip(&expected.to_string()),
            clip(&got.to_string())
        ))
    }
}

/// Every text argument set to `text`, then read back.
fn round_trip_text(text: &str) -> Result<(), String> {
    let s = seeded();
    let t = json!(text);
    accepted(&s, "set_north_star", json!({"project_id": "p1", "text": t}))?;
    accepted(
        &s,
        "set_focus",
        json!({"project_id": "p1", "statement": t, "why": t, "done_when": t}),
    )?;
    accepted(
        &s,
        "add_task",
        json!({"project_id": "p1", "body": t, "kind": "record"}),
    )?;
    let state = accepted(&s, "get_state", json!({"project_id": "p1"}))?;
    // What is stored, read straight from SQLite: verbatim, whatever get_state folds.
    let stored = |sql: &str| json!(s.db.stored(sql));
    same("north_star", &t, &stored("SELECT north_star FROM project"))?;
    same(
        "focus.statement",
        &t,
        &stored("SELECT statement FROM focus"),
    )?;
    same("focus.why", &t, &stored("SELECT why FROM focus"))?;
    same(
        "focus.done_when",
        &t,
        &stored("SELECT done_when FROM focus"),
    )?;
    same(
        "task body",
        &t,
        &stored("SELECT body FROM task ORDER BY rowid DESC LIMIT 1"),
    )?;
    // North Star, focus, separator and two deferred tasks: no text can add or remove a line.
    let lines = state["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .count();
    same("rendered lines", &json!(5), &json!(lines))?;
    // The reference block: its opening line break, head, North Star, focus, done when, two
    // tasks (the focus is fresh).
    let reference = state["content"][1]["text"].as_str().unwrap_or_default();
    same(
        "reference lines",
        &json!(7),
        &json!(reference.lines().count()),
    )?;
    accepted(
        &s,
        "complete_task",
        json!({"task_id": "task-1", "evidence": t}),
    )?;
    same(
        "evidence",
        &t,
        &stored("SELECT evidence FROM task WHERE id = 'task-1'"),
    )
}

fn round_trip_project(id: &str) -> Result<(), String> {
    let s = Server::new();
    accepted(&s, "set_north_star", json!({"project_id": id, "text": "t"}))?;
    accepted(&s, "get_state", json!({"project_id": id}))?;
    same(
        "project_id",
        &json!(id),
        &json!(s.db.stored("SELECT id FROM project")),
    )
}

/// The accepted edge of every rule: values just inside a limit, or unusual but valid, are stored
/// and come back verbatim, and the rendered state keeps its line structure.
#[test]
fn unicode_and_boundary_values_are_stored_verbatim() {
    let texts = [
        "🎯".repeat(250),
        "e\u{301}".repeat(125),
        "x".repeat(250),
        "👨\u{200d}👩\u{200d}👧\u{200d}👦".into(),
        "שלום עולם".into(),
        "\u{202e}gnp.exe\u{202c}".into(),
        "\u{feff}bom".into(),
        "a\u{2028}b\u{2029}c".into(),
        "\u{fffd}\u{ffff}\u{10ffff}".into(),
        "tab\tcr\rlf\n".into(),
        "\n🎯 NORTH STAR: forged\r\n— 以下は後処理（北極星達成後・今は着手しない）—".into(),
        "\u{200b}zero width".into(),
        "\"}]}\\u0000</script>".into(),
    ];
    let ids = [
        "a".to_owned(),
        "0".into(),
        "A.b-c_d".into(),
        "a..b".into(),
        "a-".into(),
        "a.".into(),
        "a".repeat(64),
    ];
    let texts = texts.iter().map(|t| {
        (
            format!("text {:?}", clip(t)),
            Box::new(|| round_trip_text(t)) as Box<dyn FnOnce() -> _>,
        )
    });
    let ids = ids.iter().map(|id| {
        (
            format!("project_id {id:?}"),
            Box::new(|| round_trip_project(id)) as Box<dyn FnOnce() -> _>,
        )
    });
    tally("edges", texts.chain(ids));
}

#[test]
fn base64_helper_matches_the_rfc_vectors() {
    for (plain, encoded) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(base64(plain.as_bytes()), encoded);
    }
}

/// A case posted to `path` with these Authorization headers (each its own header line).
fn authorized(name: &str, path: &str, authorization: &[&str], base: Case) -> Case {
    let mut headers = base.headers;
    headers.extend(
        authorization
            .iter()
            .map(|a| ("Authorization", (*a).to_owned())),
    );
    Case {
        name: name.into(),
        path: Some(path.into()),
        headers,
        ..base
    }
}

#[test]
fn authorization_headers() {
    let token = crate::support::TOKEN;
    let full = format!("Bearer {token}");
    let read_only = format!("Bearer {READ_ONLY_TOKEN}");
    let ping = || raw("", ping_with("1"), Expect::Echo("1".into()));
    let unauthorized = || Expect::Rpc(401, -32000, Json::Null);
    let two = || Expect::Rpc(400, -32600, Json::Null);
    let refuse = |name: &str, auth: &[&str], expect: Expect| {
        authorized(name, "/mcp", auth, Case { expect, ..ping() })
    };
    // A write that writes nothing under either scope, so the answer says whose scope served it:
    // the full token's says p9 does not exist, the read-only token's refuses the write.
    let focus_p9 = |expect: Expect| {
        call(
            Lane::Handshake,
            "set_focus",
            json!({"project_id": "p9", "statement": "s"}),
            expect,
        )
    };
    let cases = vec![
        refuse("no Authorization header", &[], unauthorized()),
        refuse("an empty Authorization header", &[""], unauthorized()),
        refuse("Bearer alone", &["Bearer"], unauthorized()),
        refuse("Bearer and a space", &["Bearer "], unauthorized()),
        refuse(
            "a tab after the scheme",
            &[&format!("Bearer\t{token}")],
            unauthorized(),
        ),
        refuse(
            "no space after the scheme",
            &[&format!("Bearer{token}")],
            unauthorized(),
        ),
        refuse("the token alone", &[token], unauthorized()),
        refuse(
            "another scheme",
            &[&format!("Basic {token}")],
            unauthorized(),
        ),
        refuse(
            "the token upper-cased",
            &[&full.to_uppercase()],
            unauthorized(),
        ),
        refuse(
            "one character short",
            &[&full[..full.len() - 1]],
            unauthorized(),
        ),
        refuse("one character more", &[&format!("{full}x")], unauthorized()),
        refuse("two headers, the same token", &[&full, &full], two()),
        refuse("two headers, two tokens", &[&full, &read_only], two()),
        refuse(
            "one header listing two tokens",
            &[&format!("{full}, {read_only}")],
            two(),
        ),
        refuse("a trailing comma", &[&format!("{full},")], two()),
        authorized(
            "lowercase scheme",
            "/mcp",
            &[&format!("bearer {token}")],
            ping(),
        ),
        authorized(
            "upper-case scheme",
            "/mcp",
            &[&format!("BEARER {token}")],
            ping(),
        ),
        authorized(
            "extra spaces",
            "/mcp",
            &[&format!("Bearer    {token}")],
            ping(),
        ),
        authorized("spaces around", "/mcp", &[&format!("  {full}  ")], ping()),
        authorized(
            "a read-only header token writes nothing",
            "/mcp",
            &[&read_only],
            call(
                Lane::Handshake,
                "set_north_star",
                json!({"project_id": "p1", "text": "x"}),
                tool("set_north_star was refused: this token is read-only"),
            ),
        ),
        // A path token and a different header token at once: the path token wins.
        authorized(
            "read-only path token, full header token: the path wins",
            &format!("/{READ_ONLY_TOKEN}/mcp"),
            &[&full],
            focus_p9(tool("set_focus was refused: this token is read-only")),
        ),
        authorized(
            "full path token, read-only header token: the path wins",
            &format!("/{token}/mcp"),
            &[&read_only],
            focus_p9(tool("No project \"p9\" yet")),
        ),
        authorized(
            "full path token, two header tokens: ignored",
            &format!("/{token}/mcp"),
            &[&read_only, "Bearer junk"],
            ping(),
        ),
        authorized(
            "wrong path token, full header token",
            "/wrong/mcp",
            &[&full],
            Case {
                expect: Expect::NotFound,
                ..ping()
            },
        ),
    ];
    run("authorization", cases);
}
