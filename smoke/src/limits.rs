//! The server's limits, as README.md's "Limits" states them: the 1 MiB body limit on bodies
//! sent without a length (chunked), the backlog of a legacy session whose client stops reading
//! its stream. The numbers are the README's,
//! written here again on purpose: this client shares no code with the server.

use serde_json::{json, Value};

use crate::checks::{ensure, expect_eq, Checks};
use crate::http::{self, Target};
use crate::raw;
use crate::sse::SseClient;

/// The body limit: 1 MiB.
const MAX_BODY: usize = 1 << 20;
/// How much of a body past the limit is sent before its answer is read: twice the limit.
const BEFORE_ANSWER: usize = 2 * MAX_BODY;
/// How far such a body goes on after its answer, unless the server stops taking it: many times
/// the limit. It is never finished.
const UNFINISHED: usize = 64 * MAX_BODY;
/// POSTs to a session nobody reads before the smoke client gives up waiting for it to close:
/// each asks for a reply of about 1 MB, so this is far past the session's 4 MiB, and past what
/// the sockets and wrangler dev's proxy between the session and this client hold.
const UNREAD_POSTS: usize = 150;

pub fn run(checks: &mut Checks, target: &Target) {
    bodies(checks, target);
    if !target.bearer() {
        form_bodies(checks, target);
    }
    backlog(checks, target);
}

/// A JSON ping padded with spaces to exactly `len` bytes.
fn padded_ping(len: usize) -> Vec<u8> {
    let mut body = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec();
    body.resize(len, b' ');
    body
}

/// The path of an absolute URL of this target's origin.
fn path_of<'a>(target: &Target, url: &'a str) -> &'a str {
    url.strip_prefix(target.origin()).unwrap_or(url)
}

/// A body past the limit, sent in chunks and never finished: `prefix`, then `filler`.
fn past_the_limit(
    target: &Target,
    path: &str,
    headers: &[(&str, &str)],
    prefix: &[u8],
    filler: u8,
) -> Result<raw::Cut, String> {
    let cut = raw::post_unfinished(
        target.origin(),
        path,
        headers,
        prefix,
        filler,
        BEFORE_ANSWER,
        UNFINISHED,
    )?;
    // The answer came before the body's end (it has none); the server then stops taking it.
    ensure(cut.cut_off.is_some(), || {
        format!("the server took all {UNFINISHED} bytes of a body it had answered")
    })?;
    Ok(cut)
}

/// A 413 with the JSON-RPC error of a body past the limit.
fn expect_too_large(cut: &raw::Cut) -> Result<(), String> {
    let answer = &cut.answer;
    let body: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
    ensure(
        answer.status == 413 && body["error"]["code"] == -32600,
        || {
            format!(
                "expected 413 and -32600 ({} bytes sent), got {}",
                cut.sent,
                answer.describe()
            )
        },
    )
}

/// /mcp and /sse/message: a chunked body of exactly 1 MiB is served; one that goes on past it
/// is refused with 413 while it is still being sent.
fn bodies(checks: &mut Checks, target: &Target) {
    let auth = target.auth();
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend(auth.iter().map(|(name, value)| (*name, value.as_str())));
    let mcp = target.mcp();
    let mcp = path_of(target, &mcp);

    let outcome = raw::post_chunked(target.origin(), mcp, &headers, &padded_ping(MAX_BODY))
        .and_then(|a| {
            let body: Value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
            expect_eq(
                "reply",
                &(200, json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
                &(a.status, body),
            )
        });
    checks.record(
        "limits: a chunked body of exactly 1 MiB to /mcp is served",
        outcome,
    );
    let outcome =
        past_the_limit(target, mcp, &headers, b"{", b' ').and_then(|cut| expect_too_large(&cut));
    checks.record(
        "limits: a chunked body to /mcp past 1 MiB is 413 before it ends, and then cut off",
        outcome,
    );

    let outcome = (|| {
        let mut client = SseClient::connect(target)?;
        let url = client.post_url();
        let path = path_of(target, &url);
        let answer = raw::post_chunked(target.origin(), path, &headers, &padded_ping(MAX_BODY))?;
        expect_eq("status", &202, &answer.status)?;
        let reply = client.next_message()?;
        expect_eq("reply", &json!({}), &reply["result"])?;
        expect_too_large(&past_the_limit(target, path, &headers, b"{", b' ')?)?;
        // The session is still open and its client still served.
        expect_eq("ping", &json!({}), &client.request("ping", json!({}))?)
    })();
    checks.record(
        "limits: /sse/message serves a chunked 1 MiB body and answers 413 to one past it before it ends",
        outcome,
    );
}

/// The pages' forms: a chunked form of exactly 1 MiB is written; one past it is the 413 page.
fn form_bodies(checks: &mut Checks, target: &Target) {
    let project = format!("limits-{}", crate::unix_nanos());
    let path = format!("/{}/projects/{project}/set_north_star", target.token());
    let origin = target.origin().to_owned();
    let headers = [
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Origin", origin.as_str()),
    ];
    // Empty pieces between `&`s carry nothing, so they pad a form to any length.
    let mut form = b"text=A+chunked+form".to_vec();
    form.resize(MAX_BODY, b'&');
    let outcome = raw::post_chunked(target.origin(), &path, &headers, &form).and_then(|answer| {
        expect_eq(
            "answer",
            &(303, Some(format!("../../projects/{project}"))),
            &(answer.status, answer.header("location").map(str::to_owned)),
        )
    });
    checks.record(
        "limits: a chunked form of exactly 1 MiB is written (303)",
        outcome,
    );
    let outcome = past_the_limit(target, &path, &headers, b"text=x", b'&').and_then(|cut| {
        ensure(
            cut.answer.status == 413
                && cut.answer.header("content-type") == Some("text/html; charset=utf-8"),
            || format!("expected the 413 page, got {}", cut.answer.describe()),
        )
    });
    checks.record(
        "limits: a chunked form past 1 MiB is the 413 page before it ends, and then cut off",
        outcome,
    );
}

/// A legacy session whose client never reads its stream is closed once its backlog passes the
/// limit (its POSTs turn 404), while a client that reads gets every reply, however many.
fn backlog(checks: &mut Checks, target: &Target) {
    let auth = target.auth();
    let headers: Vec<(&str, &str)> = auth
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    let sse = target.sse();
    let outcome = (|| {
        let (endpoint, unread) = raw::open_unread(
            target.origin(),
            path_of(target, &sse),
            &headers,
            &target.endpoint_prefix(),
        )?;
        let url = format!("{}{endpoint}", target.origin());
        let agent = http::agent();
        let mut post_headers = vec![("Content-Type", "application/json")];
        post_headers.extend_from_slice(&headers);
        // An id of nearly 1 MB, which the reply echoes.
        let body =
            json!({"jsonrpc": "2.0", "id": "x".repeat(1_000_000), "method": "ping"}).to_string();
        let mut accepted = 0;
        for _ in 0..UNREAD_POSTS {
            let reply = http::send(&agent, "POST", &url, &post_headers, Some(&body))?;
            match reply.status {
                202 => accepted += 1,
                404 if accepted > 0 => {
                    drop(unread);
                    return Ok(());
                }
                _ => return Err(format!("after {accepted} accepted: {}", reply.describe())),
            }
        }
        Err(format!(
            "still open after {accepted} POSTs of 1 MB that nobody read"
        ))
    })();
    checks.record(
        "limits: a session whose client stops reading is closed once its backlog is full (POSTs then 404)",
        outcome,
    );

    let outcome = (|| {
        let mut client = SseClient::connect(target)?;
        for i in 0..100 {
            client
                .request("ping", json!({}))
                .map_err(|e| format!("ping {i}: {e}"))?;
        }
        for i in 0..6 {
            let id = format!("{i}{}", "y".repeat(1_000_000));
            let reply = client.request_with_id(json!(id), "ping")?;
            expect_eq("result", &json!({}), &reply)?;
        }
        Ok(())
    })();
    checks.record(
        "limits: a client that reads its stream gets 100 replies and 6 MB of replies on one session",
        outcome,
    );
}
