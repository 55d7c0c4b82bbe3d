//! The server's limits, as docs/http.md, "Limits", states them: the 1 MiB body limit on bodies
//! sent without a length (chunked), the backlog of a legacy session whose client stops reading
//! its stream, and wrong tokens past the per-address rate limit. The numbers are the docs',
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
/// Wrong tokens an address may send per minute before the 429.
const WRONG_TOKENS_PER_MINUTE: usize = 30;
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
    wrong_tokens(checks, target);
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

/// Wrong tokens past 30 a minute from one address are 429, the same for every token; a right
/// token works at once from that address, and other addresses are not held back. wrangler dev
/// passes a CF-Connecting-IP the client sends (Cloudflare sets its own), so each run counts under
/// addresses of its own, in the documentation prefix 2001:db8::/32, and the loopback address
/// every other phase comes from is left alone.
fn wrong_tokens(checks: &mut Checks, target: &Target) {
    let nanos = crate::unix_nanos();
    let prefix = format!(
        "2001:db8:{:x}:{:x}",
        (nanos >> 16) as u16,
        (nanos >> 32) as u16
    );
    let address = format!("{prefix}::1");
    let neighbour = format!("{prefix}:ffff::2");
    let elsewhere = format!("2001:db8:{:x}:1::1", (nanos >> 48) as u16 ^ 0x5a5a);
    let agent = http::agent();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let wrong = |n: usize| format!("wrong-{n}-{}", target.token().len());
    // A wrong token the way this run sends its token: in the path, or as the bearer token.
    let wrong_request = |n: usize, from: &str| -> Result<http::Reply, String> {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("CF-Connecting-IP", from),
        ];
        let bearer = format!("Bearer {}", wrong(n));
        let url = if target.bearer() {
            headers.push(("Authorization", bearer.as_str()));
            target.mcp()
        } else {
            format!("{}/{}/mcp", target.origin(), wrong(n))
        };
        http::send(&agent, "POST", &url, &headers, Some(ping))
    };
    let refused = if target.bearer() { 401 } else { 404 };

    let outcome = (|| {
        let mut before = 0;
        for n in 0..=2 * WRONG_TOKENS_PER_MINUTE {
            let reply = wrong_request(n, &address)?;
            match reply.status {
                429 => break,
                status if status == refused => before += 1,
                _ => return Err(format!("wrong token {n}: {}", reply.describe())),
            }
        }
        // The count runs per minute: a minute that turns over during the run starts it again.
        ensure(
            (WRONG_TOKENS_PER_MINUTE..=2 * WRONG_TOKENS_PER_MINUTE).contains(&before),
            || format!("{before} wrong tokens were answered {refused} before the first 429"),
        )
    })();
    checks.record(
        &format!(
            "limits: {WRONG_TOKENS_PER_MINUTE} wrong tokens from one address are {refused}, then 429"
        ),
        outcome,
    );

    let outcome = (|| {
        let mut replies = vec![
            wrong_request(1000, &address)?,
            wrong_request(1001, &neighbour)?,
        ];
        if !target.bearer() {
            let page = format!("{}/{}/projects/x", target.origin(), wrong(1002));
            let headers = [("CF-Connecting-IP", address.as_str())];
            replies.push(http::send(&agent, "GET", &page, &headers, None)?);
        }
        let first = &replies[0];
        let body: Value = serde_json::from_str(&first.body).unwrap_or(Value::Null);
        ensure(
            first.status == 429
                && first.header("Retry-After") == Some("60")
                && body["error"]["code"] == -32000
                && body["id"].is_null(),
            || {
                format!(
                    "expected 429, Retry-After: 60 and a JSON-RPC error, got {}",
                    first.describe()
                )
            },
        )?;
        for reply in &replies {
            expect_eq(
                "answer",
                &(
                    first.status,
                    first.header("Retry-After"),
                    first.body.as_str(),
                ),
                &(
                    reply.status,
                    reply.header("Retry-After"),
                    reply.body.as_str(),
                ),
            )?;
            ensure(!reply.body.contains("wrong-"), || reply.describe())?;
        }
        Ok(())
    })();
    checks.record(
        "limits: past the limit every wrong token gets the same 429 with Retry-After, from any address of the /64",
        outcome,
    );

    let outcome = (|| {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("CF-Connecting-IP", address.as_str()),
        ];
        let auth = target.auth();
        headers.extend(auth.iter().map(|(name, value)| (*name, value.as_str())));
        let reply = http::send(&agent, "POST", &target.mcp(), &headers, Some(ping))?;
        expect_eq("status", &200, &reply.status)?;
        let reply = wrong_request(2000, &elsewhere)?;
        expect_eq("status from another /64", &refused, &reply.status)
    })();
    checks.record(
        "limits: the right token works at once from the held address, and another address is not held",
        outcome,
    );
}
