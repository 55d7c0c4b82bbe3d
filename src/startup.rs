//! What an isolate runs once at start-up, before its first request: one get_state of each
//! revision a first request comes in (the stateless 2026-07-28 one and a 2025 client's) through
//! `route::plan` and `route::serve`, over a store that answers at once with a canned project.
//! V8 compiles each wasm function the first time it is called (and the JavaScript glue
//! likewise), so the Worker's start-up compiles what the first request would otherwise compile
//! on its own time; on Cloudflare start-up runs when the isolate is made, within its own limit.
//! The shell turns each answer into a runtime `Response`, which warms that path too, and keeps
//! nothing. No I/O, no environment and no clock here (a Worker's start-up may read neither).
//! What it buys is measured in docs/benchmarks.md ("Cold start").

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use crate::config::{Config, AUTH_TOKEN_VAR};
use crate::context::{Caller, Ctx};
use crate::http::{self, Headers, Response};
use crate::protocol::version::{STATELESS, SUPPORTED_HANDSHAKE};
use crate::protocol::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use crate::route::{self, Plan};
use crate::store::{self, Cell, LocalFuture, Row, Rows, Sql, Stmt};

/// The token of the start-up's own configuration; it reaches no real request.
const TOKEN: &str = "start-up";

/// The canned project, as get_state's statement returns it: a North Star, a focus, one deferred
/// task and their count.
const STATE: &str = r#"[[0,0,"North Star","start-up",null,0,null],[1,0,"focus","start-up","why",0,"done"],[2,1,"task","cleanup","body",null,null],[3,1,null,null,null,null,null]]"#;

/// A store that answers at once: get_state's statement with the canned project, every other
/// statement with no rows.
struct Canned;

impl Sql for Canned {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        let rows = stmts
            .iter()
            .map(|stmt| match stmt.query == store::LOAD_STATE {
                true => Ok(vec![Row::new(
                    store::LOAD_STATE.columns,
                    vec![Cell::Text(STATE.into())],
                )?]),
                false => Ok(Vec::new()),
            })
            .collect();
        Box::pin(std::future::ready(rows))
    }
}

/// The answers to the start-up's requests, for the shell to turn into `Response`s.
pub fn serve(now_ms: i64) -> Vec<Response> {
    let config = Config::from_lookup(|name| (name == AUTH_TOKEN_VAR).then(|| TOKEN.into()));
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_state","arguments":{"project_id":"p"}"#;
    let stateless = format!(
        r#"{call},"_meta":{{"{META_PROTOCOL_VERSION}":"{STATELESS}","{META_CLIENT_CAPABILITIES}":{{}}}}}}}}"#
    );
    let handshake = format!("{call}}}}}");
    let stateless_headers = [
        ("mcp-protocol-version", STATELESS),
        ("mcp-method", "tools/call"),
        ("mcp-name", "get_state"),
    ];
    let handshake_headers = [("mcp-protocol-version", SUPPORTED_HANDSHAKE[0])];
    [
        (&stateless_headers[..], stateless),
        (&handshake_headers[..], handshake),
    ]
    .into_iter()
    .filter_map(|(headers, body)| one(&config, headers, &body, now_ms))
    .collect()
}

/// One request through `route::plan` and `route::serve` over `Canned`.
fn one(config: &Config, extra: &[(&str, &str)], body: &str, now_ms: i64) -> Option<Response> {
    let mut pairs = vec![("content-type", "application/json"), ("user-agent", TOKEN)];
    pairs.extend_from_slice(extra);
    let headers = Headers::new(pairs);
    let path = format!("/{TOKEN}/mcp");
    let request = http::Request {
        method: "POST",
        path: &path,
        query: None,
        headers: &headers,
        own_origin: "https://start-up.invalid",
        now_ms,
    };
    let Plan::Serve {
        endpoint,
        credential,
    } = route::plan(&request, config)
    else {
        return None;
    };
    let new_id = || String::from(TOKEN);
    let clock = move || now_ms;
    let ctx = Ctx {
        db: &Canned,
        ids: &new_id,
        clock: &clock,
        caller: Caller::new(headers.get("user-agent"), credential),
        focus_stale_days: config.focus_stale_days,
    };
    ready(route::serve(
        &endpoint,
        &headers,
        body.as_bytes(),
        &ctx,
        config,
    ))
}

/// The output of a future that needs no waiting (every one above, over `Canned`).
fn ready<F: Future>(future: F) -> Option<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(future).poll(&mut cx) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both requests are served whole, through get_state's own text: a start-up that stopped
    /// short (a plan refused, a future left waiting) would warm little and say nothing.
    #[test]
    fn each_start_up_request_is_served_through_get_state() {
        let answers = serve(1_796_112_000_000);
        assert_eq!(answers.len(), 2);
        for answer in answers {
            assert_eq!(answer.status, 200, "{}", answer.body);
            assert!(
                answer.body.contains(
                    r#""text":"🎯 NORTH STAR: North Star\n▶ 本丸（今やる1つ）: focus（理由: why）"#
                ),
                "{}",
                answer.body
            );
            assert!(!answer.body.contains("isError\":true"), "{}", answer.body);
        }
    }
}
