//! Era-independent HTTP routing: the health check, the token gate (in the path, and in bearer
//! mode the Authorization header), and the GET rule on the MCP endpoint (OAuth's discovery is
//! oauth.rs'). Nothing here speaks MCP beyond sending one well-formed request to a wrong URL.

use serde_json::{json, Value};

use crate::checks::{ensure, Checks};
use crate::http::{self, Reply, Target};

/// Runs the routing checks once per smoke run.
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
    let auth = target.auth();
    let mut headers = vec![("Accept", "text/event-stream")];
    headers.extend(auth.iter().map(|(name, value)| (*name, value.as_str())));
    let get = http::send(&agent, "GET", &target.mcp(), &headers, None).and_then(|reply| {
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

    if target.bearer() {
        let no_header: [(&str, &str); 1] = [("Content-Type", "application/json")];
        let wrong_bearer = format!("Bearer {wrong}");
        let wrong_header = [
            ("Content-Type", "application/json"),
            ("Authorization", wrong_bearer.as_str()),
        ];
        for (what, headers) in [
            ("no Authorization header", &no_header[..]),
            ("a wrong bearer token", &wrong_header[..]),
        ] {
            let outcome = http::send(
                &agent,
                "POST",
                &target.mcp(),
                headers,
                Some(&body.to_string()),
            )
            .and_then(|reply| expect_unauthorized(&reply));
            checks.record(
                &format!("http: POST /mcp with {what} is 401 with WWW-Authenticate: Bearer and a JSON-RPC error"),
                outcome,
            );
        }
    }
}

/// 401, `WWW-Authenticate: Bearer` (naming OAuth's metadata, when OAuth is on), and a JSON-RPC
/// error with a null id whose message says to send the header.
fn expect_unauthorized(reply: &Reply) -> Result<(), String> {
    expect_status(reply, 401)?;
    let challenge = reply.header("WWW-Authenticate").unwrap_or_default();
    ensure(
        challenge == "Bearer" || challenge.starts_with("Bearer resource_metadata=\""),
        || format!("WWW-Authenticate is {:?}", reply.header("WWW-Authenticate")),
    )?;
    let body: Value = serde_json::from_str(&reply.body)
        .map_err(|e| format!("the 401 body is not JSON ({e}): {}", reply.describe()))?;
    let says_what_to_send = body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("Authorization: Bearer"));
    ensure(
        body["jsonrpc"] == "2.0" && body["id"].is_null() && says_what_to_send,
        || {
            format!(
                "not a JSON-RPC error naming the header: {}",
                reply.describe()
            )
        },
    )
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
