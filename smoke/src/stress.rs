//! Hardening checks against a running server: a sample of bad input over real HTTP, the token
//! gate and the Origin rule, concurrent writers, and the write load and check of the restart
//! test. Black box like the rest of smoke: raw HTTP and JSON, nothing from the server crate.
//! Process control (starting and killing the server) is the calling script's business, not ours.

use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::checks::{self, ensure, expect_eq, Checks};
use crate::client::{Client, Era, Session};
use crate::http::{self, Target};
use crate::tools;

/// The issue's numbers: 16 clients, 50 add_task each.
const CLIENTS: usize = 16;
const TASKS_PER_CLIENT: usize = 50;
/// Writers of the restart load; the server is killed under them.
const LOAD_WRITERS: usize = 8;
/// A load writer gives up after this many transport failures in a row (the server is gone).
const GIVE_UP_AFTER: usize = 3;
/// The size limit the server documents (1 MiB).
const MAX_BODY: usize = 1 << 20;

/// A named group of checks that prints its own `<phase>: N passed, M failed` line.
struct Phase {
    name: &'static str,
    checks: Checks,
    total: usize,
}

impl Phase {
    fn new(name: &'static str) -> Phase {
        Phase {
            name,
            checks: Checks::default(),
            total: 0,
        }
    }

    fn record(&mut self, name: &str, outcome: Result<(), String>) {
        self.total += 1;
        self.checks
            .record(&format!("{}: {name}", self.name), outcome);
    }

    /// Prints the tally line and returns the failure count.
    fn finish(self) -> usize {
        let failed = self.checks.failed();
        checks::say(&format!(
            "{}: {} passed, {failed} failed",
            self.name,
            self.total - failed
        ));
        failed
    }
}

const USAGE: &str = "usage: smoke stress <BASE_URL> [ALLOWED_ORIGIN]
       smoke load <BASE_URL> <PROJECT> <ACK_FILE> <SECONDS>
       smoke verify <BASE_URL> <PROJECT> <ACK_FILE>";

/// Runs a hardening sub-command when `args` names one; `None` leaves the default smoke run alone.
pub fn command(args: &[String]) -> Option<ExitCode> {
    let (name, rest) = args.split_first()?;
    if !["stress", "load", "verify"].contains(&name.as_str()) {
        return None;
    }
    let Some(target) = rest.first().and_then(|raw| Target::parse(raw).ok()) else {
        eprintln!("{USAGE}");
        return Some(ExitCode::from(2));
    };
    let verdict = |failed: usize| {
        if failed == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    };
    let usage = || {
        eprintln!("{USAGE}");
        ExitCode::from(2)
    };
    Some(match (name.as_str(), &rest[1..]) {
        ("stress", []) => verdict(stress(&target, None)),
        ("stress", [origin]) => verdict(stress(&target, Some(origin))),
        ("load", [project, acks, seconds]) => match seconds.parse() {
            Ok(seconds) => match load(&target, project, acks, seconds) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("smoke load: {e}");
                    ExitCode::FAILURE
                }
            },
            Err(_) => usage(),
        },
        ("verify", [project, acks]) => verdict(verify(&target, project, acks)),
        _ => usage(),
    })
}

/// `smoke stress <BASE_URL> [ALLOWED_ORIGIN]`: the bad-input sample, token and Origin rules and
/// the races. Returns the number of failed checks.
pub fn stress(target: &Target, allowed_origin: Option<&str>) -> usize {
    let stamp = crate::unix_nanos();
    let mut failed = bad_input(target, &format!("bad-{stamp}"));
    failed += gates(target, allowed_origin);
    let mut races = Phase::new("races");
    race_add_task(&mut races, target, &format!("race-add-{stamp}"));
    race_same_add_task(&mut races, target, &format!("race-same-{stamp}"));
    race_set_focus(&mut races, target, &format!("race-focus-{stamp}"));
    race_complete_task(&mut races, target, &format!("race-done-{stamp}"));
    failed + races.finish() + limits(target, &format!("limits-{stamp}"))
}

/// The documented caps through the real Worker and its D1: 30 open deferred tasks a project
/// (the 31st refused with a sentence, get_state still listing the 30), and 2025-03-26 batches of
/// at most 40 messages (41 refused whole, before any of it runs).
fn limits(target: &Target, project: &str) -> usize {
    let mut phase = Phase::new("limits");
    let mut client = Client::new(target, Era::Modern);
    let setup = create(target, project).and_then(|()| {
        (0..30).try_for_each(|i| {
            let kind = if i % 2 == 0 { "cleanup" } else { "record" };
            tools::call(
                &mut client,
                "add_task",
                json!({"project_id": project, "body": format!("deferred {i}"), "kind": kind}),
            )?
            .expect_ok()
        })
    });
    phase.record("30 open deferred tasks are kept", setup);
    let refused = tools::call(
        &mut client,
        "add_task",
        json!({"project_id": project, "body": "one more", "kind": "record"}),
    )
    .and_then(|r| {
        r.expect_tool_error()?;
        ensure(
            r.text.contains("already has 30 open deferred tasks"),
            || r.text.clone(),
        )
    });
    phase.record("the 31st is a tool error that says the cap", refused);
    let listed = open_tasks(target, project).and_then(|tasks| {
        ensure(
            tasks.len() == 30 && tasks.iter().all(|(_, b)| b != "one more"),
            || format!("{} listed: {tasks:?}", tasks.len()),
        )
    });
    phase.record("get_state lists the 30 and not the refused one", listed);

    let agent = http::agent();
    let mut headers = plain();
    headers.push(("MCP-Protocol-Version", "2025-03-26".into()));
    headers.extend(target.auth());
    let batch = |n: usize, body: &str| {
        let calls: Vec<Value> = (0..n)
            .map(|i| {
                json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "add_task",
                    "arguments": {"project_id": project, "body": format!("{body} {i}"), "kind": "main"}}})
            })
            .collect();
        post_bytes(
            &agent,
            &target.mcp(),
            &headers,
            Value::Array(calls).to_string().as_bytes(),
        )
    };
    let forty = batch(40, "batched").and_then(|raw| {
        let answers = raw.json().and_then(|j| j.as_array().map(Vec::len));
        ensure(raw.status == 200 && answers == Some(40), || raw.describe())
    });
    phase.record("a batch of 40 tools/call is served whole", forty);
    let forty_one = batch(41, "refused").and_then(|raw| {
        let json = raw.json().unwrap_or_default();
        ensure(
            raw.status == 400
                && json["error"]["code"] == -32600
                && json["error"]["message"] == "Invalid Request: a batch holds at most 40 messages",
            || raw.describe(),
        )
    });
    phase.record("a batch of 41 is refused whole with a sentence", forty_one);
    // None of the 41 ran: the search finds the 40 batched tasks and none of the refused ones.
    let mut found = |query: &str| {
        tools::call(
            &mut client,
            "search",
            json!({"query": query, "project_id": project, "kind": "main"}),
        )
        .map(|r| r.text)
    };
    let nothing_ran = found("batched 39").and_then(|hit| {
        let miss = found("refused")?;
        ensure(
            hit.contains("main task open") && miss.starts_with("No record matches"),
            || format!("{hit}\n---\n{miss}"),
        )
    });
    phase.record("the refused batch wrote nothing", nothing_ran);
    phase.finish()
}

/// A raw reply: status, content type and body (lossy, so a non-UTF-8 reply still reports).
struct Raw {
    status: u16,
    media: String,
    body: String,
}

impl Raw {
    fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }

    fn describe(&self) -> String {
        format!(
            "HTTP {} [{}] {}",
            self.status,
            self.media,
            checks::clip(&self.body, 300)
        )
    }
}

/// POSTs raw bytes; only a transport failure is an error.
fn post_bytes(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> Result<Raw, String> {
    let mut request = agent.post(url);
    for (name, value) in headers {
        request = request.set(name, value);
    }
    let response = match request.send_bytes(body) {
        Ok(response) => response,
        Err(ureq::Error::Status(_, response)) => response,
        Err(ureq::Error::Transport(transport)) => return Err(format!("POST failed: {transport}")),
    };
    let status = response.status();
    let media = response.content_type().to_owned();
    let mut bytes = Vec::new();
    response
        .into_reader()
        .take(MAX_BODY as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("HTTP {status}: reading the body failed: {e}"))?;
    Ok(Raw {
        status,
        media,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

/// Request headers as the smoke client's `Client::headers` builds them.
type Headers = Vec<(&'static str, String)>;

/// One bad-input case: its name, headers, body and expected answer.
type Case<'a> = (&'a str, Headers, Vec<u8>, Expect);

/// What a bad-input case must get back.
enum Expect {
    /// A JSON-RPC error: HTTP status, code, id.
    Rpc(u16, i64, Value),
    /// A tool error whose sentence contains this.
    Tool(&'static str),
    /// HTTP 200 with a result and the id spelt exactly so.
    Echo(&'static str),
    /// 202 with an empty body.
    Accepted,
}

fn judge(raw: &Raw, expect: &Expect) -> Result<(), String> {
    if let Expect::Accepted = expect {
        return ensure(raw.status == 202 && raw.body.is_empty(), || {
            format!("expected 202 with an empty body, got {}", raw.describe())
        });
    }
    let body = raw
        .json()
        .ok_or_else(|| format!("not JSON: {}", raw.describe()))?;
    ensure(raw.media == "application/json", || {
        format!("not application/json: {}", raw.describe())
    })?;
    let ok = match expect {
        Expect::Rpc(status, code, id) => {
            raw.status == *status
                && body["error"]["code"] == *code
                && body["id"] == *id
                && body["error"]["message"].is_string()
        }
        Expect::Tool(text) => {
            raw.status == 200
                && body["result"]["isError"] == true
                && body["result"]["content"][0]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains(text))
        }
        Expect::Echo(id) => {
            raw.status == 200
                && body.get("result").is_some()
                && raw.body.contains(&format!("\"id\":{id}"))
        }
        Expect::Accepted => unreachable!("handled above"),
    };
    let want = match expect {
        Expect::Rpc(status, code, id) => format!("HTTP {status}, error {code}, id {id}"),
        Expect::Tool(text) => format!("a tool error saying {text:?}"),
        Expect::Echo(id) => format!("a result with id {id}"),
        Expect::Accepted => unreachable!("handled above"),
    };
    ensure(ok, || format!("expected {want}, got {}", raw.describe()))
}

/// One modern-lane tools/call as a well-behaved client sends it, as headers and body.
fn modern_call(tool: &str, arguments: Value) -> (Headers, Vec<u8>) {
    // The client only shapes the message (envelope and headers); it never sends, so its URL is moot.
    let shaper = Client::new(
        &Target::parse("http://127.0.0.1:1/x").expect("fixed"),
        Era::Modern,
    );
    let message = shaper.envelope(
        Some(json!(1)),
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    (shaper.headers(&message), message.to_string().into_bytes())
}

/// The headerless legacy lane: just JSON.
fn plain() -> Headers {
    vec![("Content-Type", "application/json".to_string())]
}

fn ping(id: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).into_bytes()
}

/// get_state of `project` as raw JSON text, for before/after comparisons.
fn snapshot(agent: &ureq::Agent, target: &Target, project: &str) -> Result<String, String> {
    let (headers, body) = modern_call("get_state", json!({"project_id": project}));
    let raw = post_bytes(agent, &target.mcp(), &headers, &body)?;
    let json = raw
        .json()
        .ok_or_else(|| format!("get_state: {}", raw.describe()))?;
    ensure(json["result"]["isError"] == false, || {
        format!("get_state failed: {}", raw.describe())
    })?;
    Ok(json["result"]["content"].to_string())
}

/// A sample of the native bad-input table, through the real Worker: the right code, nothing
/// written (the project's state is unchanged after each case), and the server still answers.
fn bad_input(target: &Target, project: &str) -> usize {
    let mut phase = Phase::new("bad-input-live");
    let agent = http::agent();
    let mut client = Client::new(target, Era::Modern);
    let setup = tools::call(
        &mut client,
        "set_north_star",
        json!({"project_id": project, "text": "Ship v1"}),
    )
    .and_then(|r| r.expect_ok())
    .and_then(|()| {
        tools::call(
            &mut client,
            "add_task",
            json!({"project_id": project, "body": "b", "kind": "cleanup"}),
        )
        .and_then(|r| r.expect_ok())
    });
    phase.record("set up the project", setup);

    let tool_error = |args: Value, tool: &str, says: &'static str| {
        let (headers, body) = modern_call(tool, args);
        (headers, body, Expect::Tool(says))
    };
    let parse_error = || Expect::Rpc(400, -32700, Value::Null);
    let invalid = || Expect::Rpc(400, -32600, Value::Null);
    let mut over = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#.to_vec();
    over.resize(MAX_BODY + 1 - 3, b'x');
    over.extend_from_slice(br#""}}"#);
    let mut exact = over.clone();
    exact.remove(60);
    let mut cases: Vec<Case> = vec![
        ("empty body", plain(), Vec::new(), parse_error()),
        ("not JSON", plain(), b"{\"jsonrpc\":".to_vec(), parse_error()),
        ("invalid UTF-8", plain(), b"{\"id\":\"\xff\"}".to_vec(), parse_error()),
        (
            "lone surrogate",
            plain(),
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud800"}}"#.to_vec(),
            parse_error(),
        ),
        (
            "100000 nested arrays",
            plain(),
            [vec![b'['; 100_000], vec![b']'; 100_000]].concat(),
            parse_error(),
        ),
        (
            "1 MiB + 1 byte is 413",
            plain(),
            over,
            Expect::Rpc(413, -32600, Value::Null),
        ),
        ("exactly 1 MiB is served", plain(), exact, Expect::Echo("1")),
        ("a bare number", plain(), b"42".to_vec(), invalid()),
        ("id 0", plain(), ping("0"), Expect::Echo("0")),
        ("id \"\"", plain(), ping("\"\""), Expect::Echo("\"\"")),
        (
            "id u64::MAX",
            plain(),
            ping("18446744073709551615"),
            Expect::Echo("18446744073709551615"),
        ),
        ("id null", plain(), ping("null"), invalid()),
        ("id 1.5", plain(), ping("1.5"), invalid()),
        ("id 2^64", plain(), ping("18446744073709551616"), invalid()),
        (
            "a tools/call notification runs nothing",
            plain(),
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "set_north_star", "arguments": {"project_id": project, "text": "overwritten"}}}).to_string().into_bytes(),
            Expect::Accepted,
        ),
    ];
    let project_rule = "project_id must be 1-64 characters";
    let long_id = "a".repeat(65);
    let tool_cases = [
        (
            "a number as project_id",
            "add_task",
            json!({"project_id": 7, "body": "b", "kind": "main"}),
            "argument \"project_id\" must be a string, got a number",
        ),
        (
            "an unknown argument",
            "set_north_star",
            json!({"project_id": project, "text": "t", "extra": true}),
            "unknown argument \"extra\"",
        ),
        (
            "NUL in a text",
            "set_north_star",
            json!({"project_id": project, "text": "a\u{0}b"}),
            "contains the control character U+0000",
        ),
        (
            "ESC in a text",
            "set_focus",
            json!({"project_id": project, "statement": "a\u{1b}[2J"}),
            "contains the control character U+001B",
        ),
        (
            "a 100 KB North Star",
            "set_north_star",
            json!({"project_id": project, "text": "x".repeat(100 * 1024)}),
            "text is 102400 characters long; the limit is 1000",
        ),
        (
            "251 emoji in a task body",
            "add_task",
            json!({"project_id": project, "body": "🎯".repeat(251), "kind": "record"}),
            "body is 251 characters long; the limit is 250",
        ),
        (
            "project_id ../etc",
            "set_north_star",
            json!({"project_id": "../etc", "text": "t"}),
            project_rule,
        ),
        (
            "a full-width project_id",
            "set_north_star",
            json!({"project_id": "ｐ１", "text": "t"}),
            project_rule,
        ),
        (
            "a 65-character project_id",
            "set_north_star",
            json!({"project_id": long_id, "text": "t"}),
            project_rule,
        ),
        (
            "kind MAIN",
            "add_task",
            json!({"project_id": project, "body": "b", "kind": "MAIN"}),
            "kind must be one of main, cleanup, record",
        ),
        (
            "a 65-character task_id",
            "complete_task",
            json!({"task_id": "t".repeat(65)}),
            "longer than 64 characters",
        ),
    ];
    for (name, tool, args, says) in tool_cases {
        let (headers, body, expect) = tool_error(args, tool, says);
        cases.push((name, headers, body, expect));
    }
    let mut text_plain = plain();
    text_plain[0].1 = "text/plain".into();
    let before = snapshot(&agent, target, project);
    for (name, headers, body, expect) in &cases {
        let outcome = post_bytes(&agent, &target.mcp(), headers, body)
            .and_then(|raw| judge(&raw, expect))
            .and_then(|()| {
                let after = snapshot(&agent, target, project)?;
                let unchanged = before.as_ref().is_ok_and(|b| *b == after);
                ensure(unchanged, || format!("the state changed: {after}"))
            });
        phase.record(name, outcome);
    }
    let wrong_type = post_bytes(&agent, &target.mcp(), &text_plain, &ping("1")).and_then(|raw| {
        ensure(raw.status == 415, || {
            format!("expected 415, got {}", raw.describe())
        })
    });
    phase.record("Content-Type text/plain is 415", wrong_type);
    phase.record(
        "unicode edge values round-trip",
        unicode_round_trip(target, project),
    );
    checks::say(&format!(
        "bad inputs tried through wrangler dev: {}",
        cases.len() + 2
    ));
    phase.finish()
}

/// Unusual but valid text is stored and read back through the Worker and D1: every visible
/// character byte for byte (the ZWJ inside an emoji family and a combining accent kept), the
/// bidi controls and the byte order mark shown by their code points, and line breaks and tabs
/// folded to spaces, as the contract's rendering promises (spelt out literally, not shared with
/// the server).
fn unicode_round_trip(target: &Target, project: &str) -> Result<(), String> {
    let text =
        "👨\u{200d}👩\u{200d}👧 e\u{301} \u{202e}rtl\u{202c} \u{feff}\u{2028}本丸\t\u{10ffff}";
    let edge = format!("{project}.edge");
    let mut client = Client::new(target, Era::Modern);
    tools::call(
        &mut client,
        "set_north_star",
        json!({"project_id": edge, "text": text}),
    )?
    .expect_ok()?;
    let state = tools::call(&mut client, "get_state", json!({"project_id": edge}))?;
    state.expect_ok()?;
    expect_eq(
        "the North Star line",
        "🎯 NORTH STAR: 👨\u{200d}👩\u{200d}👧 e\u{301} \\u{202E}rtl\\u{202C} \\u{FEFF} 本丸 \u{10ffff}",
        state.text.lines().next().unwrap_or_default(),
    )
}

/// Every wrong token gets the same bare 404 as an unknown path, and the Origin rule holds.
fn gates(target: &Target, allowed_origin: Option<&str>) -> usize {
    let mut phase = Phase::new("gates");
    let agent = http::agent();
    let token = target.token();
    let last = token.chars().last().unwrap_or('x');
    let flipped = if last == 'x' { 'y' } else { 'x' };
    let mut wrong = vec![
        String::new(),
        token[..1].to_string(),
        token[..token.len() - 1].to_string(),
        format!("{token}x"),
        format!("{}{flipped}", &token[..token.len() - 1]),
        token.to_uppercase(),
        "x".repeat(token.len()),
        format!("{token}%00"),
        format!("{token}/"),
    ];
    wrong.retain(|w| w != token);
    let probe = |path: &str| -> Result<(u16, String, String), String> {
        let url = format!("{}{path}", target.origin());
        let reply = http::send(
            &agent,
            "POST",
            &url,
            &[("Content-Type", "application/json")],
            Some(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        )?;
        let media = reply.header("content-type").unwrap_or_default().to_string();
        Ok((reply.status, media, reply.body))
    };
    let baseline = probe("/no-such-path");
    phase.record(
        "an unknown path is a bare 404",
        baseline
            .clone()
            .and_then(|(status, _, _)| ensure(status == 404, || format!("got HTTP {status}"))),
    );
    for (i, w) in wrong.iter().enumerate() {
        let outcome = probe(&format!("/{w}/mcp")).and_then(|got| {
            ensure(Ok(&got) == baseline.as_ref(), || {
                format!("differs from the unknown-path 404: {got:?}")
            })
        });
        // The wrong token itself is never printed: it is derived from the real one.
        phase.record(&format!("wrong token #{i} gets the identical 404"), outcome);
    }

    let ping_body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut origins = vec![
        (Some("https://evil.example"), 403),
        (Some("null"), 403),
        (Some("http://localhost.evil.example"), 403),
        (Some("http://127.0.0.1:1"), 200),
        (Some("http://localhost:8787"), 200),
        (None, 200),
    ];
    if let Some(allowed) = allowed_origin {
        origins.push((Some(allowed), 200));
    }
    for (origin, status) in origins {
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(origin) = origin {
            headers.push(("Origin", origin));
        }
        let outcome = http::send(&agent, "POST", &target.mcp(), &headers, Some(ping_body))
            .and_then(|reply| {
                ensure(reply.status == status, || {
                    format!("expected HTTP {status}, got {}", reply.describe())
                })
            });
        phase.record(&format!("Origin {origin:?} is {status}"), outcome);
    }
    phase.finish()
}

/// The open deferred tasks of a project, by id, from get_state's reference block (its text).
pub fn open_tasks(target: &Target, project: &str) -> Result<Vec<(String, String)>, String> {
    let mut client = Client::new(target, Era::Modern);
    let state = tools::call(&mut client, "get_state", json!({"project_id": project}))?;
    state.expect_ok()?;
    Ok(state
        .reference_tasks()?
        .into_iter()
        .map(|(id, _, body)| (id, body))
        .collect())
}

/// Every open task of a project, of any kind, by id and body, from its export document (the
/// human view's `export.json`): get_state lists open deferred tasks only, at most 30, while the
/// race and the restart load write main tasks, which no cap holds back. Path-token targets only.
pub fn stored_open_tasks(target: &Target, project: &str) -> Result<Vec<(String, String)>, String> {
    let url = format!("{}/projects/{project}/export.json", target.page_root());
    let reply = http::agent()
        .get(&url)
        .call()
        .map_err(|e| format!("GET {project}'s export: {e}"))?;
    let text = reply
        .into_string()
        .map_err(|e| format!("reading {project}'s export: {e}"))?;
    let document: Value =
        serde_json::from_str(&text).map_err(|e| format!("{project}'s export is not JSON: {e}"))?;
    let tasks = document["tasks"]
        .as_array()
        .ok_or_else(|| format!("{project}'s export has no tasks: {document}"))?;
    Ok(tasks
        .iter()
        .filter(|t| t["status"] == "open")
        .map(|t| {
            let text = |k: &str| t[k].as_str().unwrap_or_default().to_owned();
            (text("id"), text("body"))
        })
        .collect())
}

/// Creates `project` with a North Star.
pub fn create(target: &Target, project: &str) -> Result<(), String> {
    let mut client = Client::new(target, Era::Modern);
    tools::call(
        &mut client,
        "set_north_star",
        json!({"project_id": project, "text": "Survive the races"}),
    )?
    .expect_ok()
}

/// 16 clients × 50 add_task on one project: every call acknowledged, exactly 800 open tasks, and
/// they are exactly the acknowledged ids.
fn race_add_task(phase: &mut Phase, target: &Target, project: &str) {
    if let Err(e) = create(target, project) {
        phase.record("add_task race: create the project", Err(e));
        return;
    }
    let started = Instant::now();
    let barrier = Barrier::new(CLIENTS);
    let results: Vec<Vec<Result<String, String>>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let mut client = Client::new(target, Era::Modern);
                    barrier.wait();
                    (0..TASKS_PER_CLIENT)
                        .map(|i| {
                            let body = format!("client {c} task {i}");
                            tools::call(
                                &mut client,
                                "add_task",
                                json!({"project_id": project, "body": body, "kind": "main"}),
                            )
                            .and_then(|r| {
                                r.expect_ok()?;
                                r.added_task_id()
                            })
                        })
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let elapsed = started.elapsed();
    let sent = CLIENTS * TASKS_PER_CLIENT;
    let mut acked = HashSet::new();
    let mut errors = Vec::new();
    for result in results.into_iter().flatten() {
        match result {
            Ok(id) => {
                acked.insert(id);
            }
            Err(e) => errors.push(e),
        }
    }
    phase.record(
        &format!("add_task race: all {sent} calls acknowledged with distinct ids"),
        ensure(errors.is_empty() && acked.len() == sent, || {
            format!(
                "{} acknowledged, {} distinct, {} failed; first: {:?}",
                sent - errors.len(),
                acked.len(),
                errors.len(),
                errors.first()
            )
        }),
    );
    let found = stored_open_tasks(target, project);
    let lost = found.as_ref().map_or(acked.len(), |tasks| {
        let ids: HashSet<&String> = tasks.iter().map(|(id, _)| id).collect();
        acked.iter().filter(|id| !ids.contains(id)).count()
    });
    phase.record(
        &format!("add_task race: exactly {sent} open tasks, the acknowledged ones"),
        found.and_then(|tasks| {
            let ids: HashSet<&String> = tasks.iter().map(|(id, _)| id).collect();
            ensure(
                tasks.len() == sent && ids.len() == sent && lost == 0,
                || {
                    format!(
                        "{} open tasks, {} distinct, {lost} acknowledged missing",
                        tasks.len(),
                        ids.len()
                    )
                },
            )
        }),
    );
    checks::say(&format!(
        "races: {CLIENTS} clients x {TASKS_PER_CLIENT} add_task in {:.1} s: {} acknowledged, {lost} lost",
        elapsed.as_secs_f64(),
        acked.len()
    ));
}

/// 16 concurrent identical add_task (a client retrying on 16 connections): exactly one task is
/// stored, and every caller is told its id.
fn race_same_add_task(phase: &mut Phase, target: &Target, project: &str) {
    if let Err(e) = create(target, project) {
        phase.record("identical add_task race: create the project", Err(e));
        return;
    }
    let barrier = Barrier::new(CLIENTS);
    let ids: Vec<Result<String, String>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let mut client = Client::new(target, Era::Modern);
                    barrier.wait();
                    tools::call(
                        &mut client,
                        "add_task",
                        json!({"project_id": project, "body": "write it once", "kind": "record"}),
                    )
                    .and_then(|r| {
                        r.expect_ok()?;
                        r.task_id()
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("client panicked".into())))
            .collect()
    });
    let found = open_tasks(target, project);
    phase.record(
        &format!("identical add_task race: {CLIENTS} callers, one task, all told its id"),
        found.and_then(|tasks| {
            let told: HashSet<&String> = ids.iter().filter_map(|r| r.as_ref().ok()).collect();
            ensure(
                tasks.len() == 1
                    && ids.iter().all(Result::is_ok)
                    && told.len() == 1
                    && told.contains(&tasks[0].0),
                || format!("{} open tasks {tasks:?}; answers {ids:?}", tasks.len()),
            )
        }),
    );
}

/// 16 concurrent set_focus: one focus remains, and it is one of the writes, statement and reason
/// from the same write.
fn race_set_focus(phase: &mut Phase, target: &Target, project: &str) {
    if let Err(e) = create(target, project) {
        phase.record("set_focus race: create the project", Err(e));
        return;
    }
    let barrier = Barrier::new(CLIENTS);
    let answers: Vec<Result<(), String>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let mut client = Client::new(target, Era::Modern);
                    barrier.wait();
                    tools::call(
                        &mut client,
                        "set_focus",
                        json!({"project_id": project, "statement": format!("focus {c}"), "why": format!("why {c}")}),
                    )
                    .and_then(|r| r.expect_ok())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err("the thread panicked".into())))
            .collect()
    });
    let failures: Vec<&String> = answers.iter().filter_map(|a| a.as_ref().err()).collect();
    phase.record(
        &format!("set_focus race: all {CLIENTS} writes acknowledged"),
        ensure(failures.is_empty(), || format!("{failures:?}")),
    );
    let mut client = Client::new(target, Era::Modern);
    let state = client.result(
        "tools/call",
        json!({"name": "get_state", "arguments": {"project_id": project}}),
    );
    let outcome = state.and_then(|state| {
        let text = state["content"][0]["text"].as_str().unwrap_or_default();
        let focus_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("▶ ")).collect();
        // `focus {c}（理由: why {c}）` with the same writer twice: statement and reason from one write.
        let writer = focus_lines
            .first()
            .and_then(|l| l.strip_prefix("▶ 本丸（今やる1つ）: focus "))
            .and_then(|rest| rest.split_once("（理由: why "))
            .filter(|(c, why)| *why == format!("{c}）"))
            .map(|(c, _)| c);
        ensure(
            focus_lines.len() == 1
                && writer
                    .and_then(|c| c.parse::<usize>().ok())
                    .is_some_and(|c| c < CLIENTS),
            || format!("{} focus lines in {text:?}", focus_lines.len()),
        )
    });
    phase.record(
        "set_focus race: exactly one focus, equal to one of the writes",
        outcome,
    );
}

/// 16 concurrent complete_task of one id: exactly one says it completed the task, the others
/// say it was already done, nobody gets an error, and the task is off the list.
fn race_complete_task(phase: &mut Phase, target: &Target, project: &str) {
    let setup = create(target, project).and_then(|()| {
        let mut client = Client::new(target, Era::Modern);
        let added = tools::call(
            &mut client,
            "add_task",
            json!({"project_id": project, "body": "complete me", "kind": "cleanup"}),
        )?;
        added.expect_ok()?;
        added.added_task_id()
    });
    let task_id = match setup {
        Ok(id) => id,
        Err(e) => {
            phase.record("complete_task race: set up", Err(e));
            return;
        }
    };
    let barrier = Barrier::new(CLIENTS);
    let answers: Vec<Result<String, String>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let (barrier, task_id) = (&barrier, &task_id);
                scope.spawn(move || {
                    let mut client = Client::new(target, Era::Modern);
                    barrier.wait();
                    let result =
                        tools::call(&mut client, "complete_task", json!({"task_id": task_id}))?;
                    result.expect_ok()?;
                    Ok(result.text)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err("the thread panicked".into())))
            .collect()
    });
    let completed = answers
        .iter()
        .filter(|a| a.as_ref().is_ok_and(|t| t.starts_with("Completed ")))
        .count();
    let already = answers
        .iter()
        .filter(|a| {
            a.as_ref().is_ok_and(|t| {
                t.lines()
                    .next()
                    .is_some_and(|l| l.ends_with("was already done; nothing changed."))
            })
        })
        .count();
    phase.record(
        &format!(
            "complete_task race: 1 of {CLIENTS} completes, {} hear it was already done",
            CLIENTS - 1
        ),
        ensure(completed == 1 && already == CLIENTS - 1, || {
            format!("{completed} completed, {already} already done; answers: {answers:?}")
        }),
    );
    let gone = open_tasks(target, project).and_then(|tasks| {
        ensure(tasks.iter().all(|(id, _)| *id != task_id), || {
            format!("the task is still listed: {tasks:?}")
        })
    });
    phase.record("complete_task race: the task is no longer listed", gone);
}

/// `smoke load <BASE_URL> <PROJECT> <ACK_FILE> <SECONDS>`: writes add_task from several clients
/// until the server goes away or the time is up, appending every acknowledged task id to
/// ACK_FILE the moment its success arrives. The calling script kills the server meanwhile.
pub fn load(target: &Target, project: &str, acks: &str, seconds: u64) -> Result<(), String> {
    // The project may exist from an earlier round; set_north_star is an upsert either way.
    create(target, project)?;
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(acks)
        .map_err(|e| format!("cannot open {acks}: {e}"))?;
    let file = Mutex::new(file);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let counts: BTreeMap<&str, AtomicUsize> =
        ["attempted", "acknowledged", "refused", "unanswered"]
            .into_iter()
            .map(|k| (k, AtomicUsize::new(0)))
            .collect();
    let count = |k: &str| counts[k].fetch_add(1, Ordering::Relaxed);
    thread::scope(|scope| {
        for w in 0..LOAD_WRITERS {
            let (file, count) = (&file, &count);
            scope.spawn(move || {
                let mut client = Client::new(target, Era::Modern);
                let mut failures_in_a_row = 0;
                let mut i = 0;
                while Instant::now() < deadline && failures_in_a_row < GIVE_UP_AFTER {
                    i += 1;
                    count("attempted");
                    let body = format!("load {w}-{i}");
                    let outcome = tools::call(
                        &mut client,
                        "add_task",
                        json!({"project_id": project, "body": body, "kind": "main"}),
                    );
                    match outcome.and_then(|r| {
                        r.expect_ok()?;
                        r.added_task_id()
                    }) {
                        Ok(id) => {
                            failures_in_a_row = 0;
                            count("acknowledged");
                            let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
                            // Written and flushed before the next request, so an acknowledged
                            // write is on record even if this process is stopped next.
                            let _ = writeln!(file, "{id}").and_then(|()| file.flush());
                        }
                        Err(e) => {
                            failures_in_a_row += 1;
                            // http::send words a transport failure (no answer, or an answer cut
                            // off) as "… failed: …"; anything else is an answer that refused.
                            if e.contains("failed: ") {
                                count("unanswered");
                            } else {
                                count("refused");
                            }
                        }
                    }
                }
            });
        }
    });
    let n = |k: &str| counts[k].load(Ordering::Relaxed);
    checks::say(&format!(
        "load: {} attempted, {} acknowledged, {} refused, {} unanswered (server stopped)",
        n("attempted"),
        n("acknowledged"),
        n("refused"),
        n("unanswered")
    ));
    Ok(())
}

/// `smoke verify <BASE_URL> <PROJECT> <ACK_FILE>`: after a restart, every acknowledged task id
/// must be among the project's open tasks. Returns the number of failed checks.
pub fn verify(target: &Target, project: &str, acks: &str) -> usize {
    let mut phase = Phase::new("restart");
    let acked: Result<Vec<String>, String> = File::open(acks)
        .map_err(|e| format!("cannot read {acks}: {e}"))
        .and_then(|f| {
            BufReader::new(f)
                .lines()
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())
        });
    let acked = match acked {
        Ok(ids) => ids,
        Err(e) => {
            phase.record("read the acknowledged writes", Err(e));
            return phase.finish();
        }
    };
    // With no acknowledged write the check below would pass vacuously.
    phase.record(
        "the load had acknowledged writes before the stop",
        ensure(!acked.is_empty(), || "no acknowledged write".into()),
    );
    let found = stored_open_tasks(target, project);
    let (stored, lost) = match &found {
        Ok(tasks) => {
            let ids: HashSet<&String> = tasks.iter().map(|(id, _)| id).collect();
            let lost: Vec<&String> = acked.iter().filter(|id| !ids.contains(id)).collect();
            (tasks.len(), lost)
        }
        Err(_) => (0, acked.iter().collect()),
    };
    phase.record(
        "every acknowledged write is there after the restart",
        found.and_then(|_| {
            ensure(lost.is_empty(), || {
                format!("{} lost, e.g. {:?}", lost.len(), lost.first())
            })
        }),
    );
    checks::say(&format!(
        "restart: {} writes acknowledged, {} found after restart, {} lost ({stored} tasks stored \
         in all; writes whose answer never arrived may be among them)",
        acked.len(),
        acked.len() - lost.len(),
        lost.len()
    ));
    phase.finish()
}
