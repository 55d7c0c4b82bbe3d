//! The isolate's warm-up: when the wasm module is instantiated (the Worker's start-up, before
//! its first request), one get_state is served through the same code a request runs, over
//! stand-ins (`warm.js`) for the request and for D1. V8 compiles a wasm function, and the
//! JavaScript glue, the first time it is called; so the code of an isolate's first request is
//! then compiled at start-up instead of on that request's time (docs/benchmarks.md, "Where it
//! stands (issue 35)", has what it moved).
//!
//! A Worker's global scope may not make a Request or a Response with a body, do I/O, read the
//! clock (it reads 0) or make random values: the stand-ins are plain objects, the answer's
//! `Response` is made without its body, and get_state needs neither ids nor time. Nothing it
//! touches is kept for a request: its configuration, its schema flag and its store are its
//! own, and the store prepares the stand-in's statements without keeping them. It logs one line
//! if it did not come to get_state's answer, so a change that broke it is seen (`scripts/test`,
//! "dev log").

use std::sync::atomic::AtomicBool;

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use worker::{console_error, web_sys, D1Database};

use super::d1::D1Store;
use super::drive::drive;
use super::{
    now_ms, origin_of, path_and_query, read_body, request_head, response_init, serve, split_head,
};
use crate::config::{Config, AUTH_TOKEN_VAR};
use crate::http;
use crate::route::{self, Plan};

#[wasm_bindgen(module = "/src/worker/warm.js")]
extern "C" {
    /// A request with this method, URL, headers (a JSON array of pairs) and body.
    #[wasm_bindgen(js_name = standInRequest)]
    fn stand_in_request(method: &str, url: &str, headers: &str, body: &str) -> web_sys::Request;
    /// A database whose every statement answers the one row `row` (a JSON object).
    #[wasm_bindgen(js_name = standInDatabase)]
    fn stand_in_database(row: &str) -> JsValue;
}

/// The warm-up's own token; it is in no configuration a request is served with.
const TOKEN: &str = "warm-up-0000000000000000000000000000000";

/// The request: a 2026-07-28 tools/call of get_state, as a client sends it.
const URL: &str = "https://warm-up.invalid/warm-up-0000000000000000000000000000000/mcp";
const HEADERS: &str = r#"[["content-type","application/json"],["accept","application/json, text/event-stream"],["mcp-protocol-version","2026-07-28"],["mcp-method","tools/call"],["mcp-name","get_state"],["user-agent","warm-up"]]"#;
const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_state","arguments":{"project_id":"warm-up"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"warm-up","version":"1"}}}}"#;

/// get_state's row (`store::LOAD_STATE`): a North Star, a focus, one deferred task.
const ROW: &str = r#"{"rows":"[[0,0,\"North Star\",\"warm-up\",null,0,null],[1,0,\"focus\",\"warm-up\",\"why\",0,\"done\"],[2,1,\"task\",\"cleanup\",\"body\",null,null],[3,1,null,null,null,null,null]]"}"#;

/// What get_state's answer says of that row.
const ANSWERED: &str = "🎯 NORTH STAR: North Star";

/// Runs when the wasm module is instantiated: the warm-up, driven as a request is. The
/// stand-ins answer at once, so it is over within the start-up's own microtasks.
#[wasm_bindgen(start)]
fn warm_up() {
    let config = Config::from_lookup(|name| (name == AUTH_TOKEN_VAR).then(|| TOKEN.into()));
    let req = stand_in_request("POST", URL, HEADERS, BODY);
    let head = request_head(&req);
    let (method, url, headers) = split_head(&head);
    let (path, query) = path_and_query(url);
    let request = http::Request {
        method,
        path,
        query,
        headers: &headers,
        own_origin: origin_of(url),
        now_ms: now_ms(),
    };
    let Plan::Serve {
        endpoint,
        credential,
    } = route::plan(&request, &config)
    else {
        return said("its request was not planned to be served");
    };
    let _ = drive(async move {
        let body = match read_body(&req, None).await {
            Ok(body) => body,
            Err(_) => return bodiless(None),
        };
        let binding: D1Database = stand_in_database(ROW).unchecked_into();
        let db = D1Store {
            binding: &binding,
            keeps_statements: false,
        };
        let current = AtomicBool::new(false);
        let answer = serve(
            &endpoint, credential, &headers, &body, &db, &current, &config,
        )
        .await;
        bodiless(Some(&answer))
    });
}

/// The answer as a `Response` without its body (what the global scope allows), its init made
/// as a request's is; and the log line when it is not get_state's answer.
fn bodiless(answer: Option<&http::Response>) -> web_sys::Response {
    match answer {
        Some(answer) if answer.status == 200 && answer.body.contains(ANSWERED) => {}
        Some(answer) => said(&format!("its get_state was answered {}", answer.status)),
        None => said("its request body was not read"),
    }
    let made = answer
        .ok_or(())
        .and_then(|answer| response_init(answer).map_err(drop))
        .and_then(|init| {
            web_sys::Response::new_with_opt_buffer_source_and_init(None, &init).map_err(drop)
        });
    // `drive` ends at a `Response`; made or not, nothing waits on it.
    made.unwrap_or_else(|()| JsValue::NULL.unchecked_into())
}

/// The one line an isolate logs when its warm-up did not come to get_state's answer: its first
/// request then compiles its own code, as it did before the warm-up.
fn said(what: &str) {
    console_error!("handoff-mcp: the start-up warm-up did not run through: {what}");
}
