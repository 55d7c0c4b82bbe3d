//! Era-independent HTTP routing: the health check, the token gate and the GET rule on the MCP
//! endpoint. Nothing here speaks MCP beyond sending one well-formed request to a wrong URL.

use serde_json::json;

use crate::checks::{ensure, Checks};
use crate::http::{self, Reply, Target};

/// Runs the three routing checks once per smoke run.
pub fn run(checks: &mut Checks, target: &Target) {
    let agent = http::agent();

    let health = http::send(
        &agent,
        "GET",
        &format!("{}/healthz", target.origin()),
        &[],
        None,
    )
    .and_then(|reply| expect_status(&reply, 200));
    checks.record("http: GET /healthz is 200", health);

    // A client probing for a server-to-client stream sends exactly this; the server offers none.
    let get = http::send(
        &agent,
        "GET",
        &target.mcp(),
        &[("Accept", "text/event-stream")],
        None,
    )
    .and_then(|reply| {
        expect_status(&reply, 405)?;
        let allows_post = reply.header("Allow").is_some_and(|allow| {
            allow
                .split(',')
                .any(|method| method.trim().eq_ignore_ascii_case("POST"))
        });
        ensure(allows_post, || {
            format!("Allow header lacks POST: {:?}", reply.header("Allow"))
        })
    });
    checks.record("http: GET <base>/mcp is 405 with Allow: POST", get);

    let wrong = wrong_token(target.token());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}});
    let gated = http::send(
        &agent,
        "POST",
        &format!("{}/{wrong}/mcp", target.origin()),
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        Some(&body.to_string()),
    )
    .and_then(|reply| expect_status(&reply, 404));
    checks.record("http: POST /<wrong token>/mcp is 404", gated);
}

/// A token that is certainly not the real one, even if the real one happens to be `wrong-token`.
fn wrong_token(real: &str) -> String {
    let mut wrong = "wrong-token".to_string();
    while wrong == real {
        wrong.push('x');
    }
    wrong
}

/// The status is the one expected and, as on every response, there is no session header.
fn expect_status(reply: &Reply, status: u16) -> Result<(), String> {
    ensure(reply.status == status, || {
        format!("expected HTTP {status}, got {}", reply.describe())
    })?;
    reply.expect_no_session()
}
