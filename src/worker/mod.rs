//! The Workers shell, compiled for wasm32 only: the fetch entry, env → Config, the D1 adapter,
//! the SSE Durable Object, the clock and uuid ids. It carries out the core's `route::Plan`
//! (putting the scope it names into the request context) and decides nothing itself. It must
//! never log a path, query or header (the path or the Authorization header holds a token),
//! only fixed sentences, the position of a malformed credential entry and the core's
//! diagnostics.
//!
//! The fetch entry takes and returns the runtime's own `Request` and `Response` (web-sys), not
//! workers-rs's wrappers, and what does not change within an isolate (the config, the D1
//! binding) is read once per isolate: every crossing between wasm and JavaScript costs
//! (docs/benchmarks-history.md has the profile).

mod alloc;
mod d1;
mod drive;
mod sse;

use std::cell::RefCell;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use worker::js_sys::{futures::future_to_promise, Array, Promise, Reflect, Uint8Array};
use worker::{console_error, web_sys, worker_sys, Env, Response, Result};

use crate::auth::check;
use crate::auth::oauth::{self, Documents, Fetched, Step};
use crate::auth::scope::Credential;
use crate::config::{Config, OAuth, D1_BINDING, FAILED_CREDENTIALS_BINDING};
use crate::context::{Caller, Ctx};
use crate::http;
use crate::route::{self, Plan};
use crate::store;
use d1::D1Store;
use drive::{drive, settle};

/// Whether this isolate has found the schema current (`store::Gated`).
static SCHEMA_CURRENT: AtomicBool = AtomicBool::new(false);
/// Whether this isolate has already said what is wrong with its tokens.
static SAID_PROBLEMS: AtomicBool = AtomicBool::new(false);
/// The configuration, read from the env once per isolate: vars and secrets are fixed for the
/// life of an isolate (a new deployment, or a changed var or secret, starts new isolates).
static CONFIG: OnceLock<Config> = OnceLock::new();
/// The D1 binding, looked up once per isolate like the config: a lookup is a property read and
/// two checks of the binding's constructor name, every one a crossing into JavaScript.
static D1: OnceLock<worker::D1Database> = OnceLock::new();

/// The Worker's fetch entry: what `#[event(fetch)]` would export, but without wasm-bindgen's
/// executor where it is not needed. A reply the plan gives at once resolves at once; MCP and the
/// human view, which wait only on the body and D1, run on the fetch driver (`drive.rs`); the
/// legacy SSE routes, which wait on the Durable Object through workers-rs, on wasm-bindgen's
/// executor; a denied credential's answer waits on the rate limiter in JavaScript (`limit.js`). A
/// failure of the runtime itself is logged and answered 500 with a fixed body, as
/// `#[event(fetch)]` does.
#[wasm_bindgen]
pub fn fetch(req: web_sys::Request, env: Env, ctx: worker_sys::Context) -> Promise {
    console_error_panic_hook::set_once();
    let config = config(&env);
    say_problems(config);
    let head = request_head(&req);
    let (method, url, headers) = http::split_head(&head);
    let (path, query) = http::path_and_query(url);
    let request = http::Request {
        method,
        path,
        query,
        headers: &headers,
        own_origin: http::origin_of(url),
        now_ms: now_ms(),
    };
    match route::plan(&request, config) {
        Plan::Respond(response) => Promise::resolve(&JsValue::from(or_500(respond(response)))),
        Plan::Denied(refusal) => count_failure(&req, &env, refusal),
        Plan::Serve {
            endpoint,
            credential,
        } => drive_reply(async move {
            let body = match endpoint.reads_body() {
                true => read_body(&req, Some(&ctx)).await?,
                false => Vec::new(),
            };
            let db = database(&env)?;
            let db = gated(&db);
            let ctx = context(&db, &headers, config, credential);
            respond(route::serve(&endpoint, &headers, &body, &ctx, config).await)
        }),
        Plan::OpenSse {
            endpoint_prefix,
            credential,
        } => future_to_promise(async move {
            let opened = sse::open(&env, &endpoint_prefix, &credential).await;
            Ok(or_500(opened.map(Into::into)).into())
        }),
        Plan::SseMessage {
            session,
            credential,
        } => future_to_promise(async move {
            let posted = sse::post(&req, &ctx, &env, &headers, &session, &credential).await;
            Ok(or_500(posted.map(Into::into)).into())
        }),
        Plan::OAuth { step, fetch } => {
            let (method, path, query) =
                (method.to_owned(), path.to_owned(), query.map(str::to_owned));
            let (own_origin, now_ms) = (http::origin_of(url).to_owned(), request.now_ms);
            drive_reply(async move {
                // The request the plan was made from, owned by the future that serves it.
                let request = http::Request {
                    method: &method,
                    path: &path,
                    query: query.as_deref(),
                    headers: &headers,
                    own_origin: &own_origin,
                    now_ms,
                };
                serve_oauth(&req, &env, &ctx, step, fetch, &request, config).await
            })
        }
    }
}

/// An OAuth request: its body, the client's metadata document when the plan names one, then
/// `route::serve_oauth`; a wrong token pasted on the consent page is counted as any wrong token
/// is (`count_failure`).
async fn serve_oauth(
    req: &web_sys::Request,
    env: &Env,
    ctx: &worker_sys::Context,
    step: Step,
    fetch: Option<String>,
    request: &http::Request<'_>,
    config: &'static Config,
) -> Result<web_sys::Response> {
    let body = match step.reads_body() {
        true => read_body(req, Some(ctx)).await?,
        false => Vec::new(),
    };
    let fetched = match (&fetch, &config.oauth) {
        (Some(url), Ok(oauth)) => Some(client_document(url, request.now_ms, oauth).await),
        _ => None,
    };
    let db = database(env)?;
    let db = gated(&db);
    let served = route::serve_oauth(step, request, &body, fetched.as_ref(), config, &db, &new_id);
    let outcome = served.await;
    if !outcome.denied {
        return respond(outcome.response);
    }
    let counted = count_failure(req, env, outcome.response);
    Ok(settle(counted).await?.unchecked_into())
}

#[wasm_bindgen(module = "/src/worker/fetch.js")]
extern "C" {
    /// The promise of "<status>\n<cache-control>\n<body>", or of "!<why>" (`fetch.js`).
    #[wasm_bindgen(js_name = fetchDocument)]
    fn fetch_document(url: &str, cap: u32, timeout_ms: u32) -> Promise;
}

thread_local! {
    /// The client metadata documents this isolate fetched lately (`oauth::Documents`).
    static DOCUMENTS: RefCell<Documents> = const { RefCell::new(Documents::new()) };
}

/// A client's metadata document: kept from an earlier fetch while its cache headers allow and
/// it passed every check (`oauth::fetched`), else fetched (`fetch.js`) and kept.
async fn client_document(url: &str, now: i64, oauth: &OAuth) -> Fetched {
    if let Some(kept) = DOCUMENTS.with_borrow(|documents| documents.kept(url, now).cloned()) {
        return kept;
    }
    let cap = oauth::DOCUMENT_MAX as u32;
    let text = settle(fetch_document(url, cap, oauth::DOCUMENT_TIMEOUT_MS))
        .await
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_else(|| "!unreachable".into());
    let (fetched, keep_ms) = oauth::fetched(url, &text, oauth);
    DOCUMENTS.with_borrow_mut(|documents| documents.keep(url, now, keep_ms, &fetched));
    fetched
}

/// A reply that waits only on the body and D1, on the fetch driver, with `or_500`'s answer for a
/// failure of the runtime.
fn drive_reply(reply: impl Future<Output = Result<web_sys::Response>> + 'static) -> Promise {
    drive(async move { or_500(reply.await) })
}

/// The reply, or for a failure of the runtime itself (a body that cannot be read, a missing
/// binding) the log line and the fixed 500 that `#[event(fetch)]` gives.
fn or_500(result: Result<web_sys::Response>) -> web_sys::Response {
    result.unwrap_or_else(|e| {
        console_error!("{e}");
        // Not `expect`: that would format the error with its Debug, and link it.
        respond(http::Response::text(500, "INTERNAL SERVER ERROR"))
            .unwrap_or_else(|_| panic!("a fixed reply is a valid Response"))
    })
}

/// The operator's log lines, once per isolate, when a setting is unusable or no token is set
/// (`Config::problems`): what `wrangler tail` and Workers Logs show.
fn say_problems(config: &Config) {
    let problems = config.problems();
    if !problems.is_empty() && !SAID_PROBLEMS.swap(true, Ordering::Relaxed) {
        for problem in problems {
            console_error!("handoff-mcp: {problem}");
        }
    }
}

#[wasm_bindgen(module = "/src/worker/head.js")]
extern "C" {
    /// The method, the URL and the value of each header of `names` ("\0" when absent), one
    /// per line.
    #[wasm_bindgen(js_name = requestHead)]
    fn request_head_of(request: &web_sys::Request, names: &Array) -> String;
}

thread_local! {
    /// `http::READ_HEADERS` as a JavaScript array, made once per isolate.
    static HEADER_NAMES: Array = http::READ_HEADERS.iter().map(|&name| JsValue::from(name)).collect();
}

/// What the core reads of the request's head (`head.js`), in one crossing.
fn request_head(req: &web_sys::Request) -> String {
    HEADER_NAMES.with(|names| request_head_of(req, names))
}

#[wasm_bindgen(module = "/src/worker/body.js")]
extern "C" {
    /// The promise of the request body's first `cap` bytes, or of all of it if it is shorter;
    /// of a longer body, up to `discard` bytes more are read and dropped in `ctx.waitUntil`.
    #[wasm_bindgen(js_name = readBody)]
    fn read_body_up_to(
        request: &web_sys::Request,
        cap: u32,
        discard: u32,
        ctx: Option<&worker_sys::Context>,
    ) -> Promise;
}

/// The request body, as bytes, read from its stream up to `http::READ_CAP`: one byte past the
/// limit, so a body sent without a Content-Length is never held whole, and the core, which
/// checks the size and that it is UTF-8 JSON, still sees that it is too large. With the
/// request's `ctx`, the rest of a longer body is dropped as it comes, up to `http::DISCARD_CAP`.
async fn read_body(req: &web_sys::Request, ctx: Option<&worker_sys::Context>) -> Result<Vec<u8>> {
    let cap = http::READ_CAP as u32;
    let read = read_body_up_to(req, cap, http::DISCARD_CAP as u32, ctx);
    Ok(settle(read).await?.unchecked_into::<Uint8Array>().to_vec())
}

#[wasm_bindgen(module = "/src/worker/limit.js")]
extern "C" {
    /// Counts a failure under `key` with the rate limiting binding: the promise of `within`
    /// while the key is within the limit (or the limiter fails), else of `past`.
    #[wasm_bindgen(js_name = countFailure)]
    fn count_failure_under(
        limiter: &JsValue,
        key: &str,
        within: &web_sys::Response,
        past: &web_sys::Response,
    ) -> Promise;
}

/// The answer to a denied credential, once counted against the client's address: its refusal,
/// or past the limit the 429 (`auth::check::too_many_failures`).
fn count_failure(req: &web_sys::Request, env: &Env, refusal: http::Response) -> Promise {
    let address = req
        .headers()
        .get(http::CLIENT_ADDRESS_HEADER)
        .ok()
        .flatten();
    let key = check::failure_key(address.as_deref());
    let limiter = Reflect::get(env, &JsValue::from(FAILED_CREDENTIALS_BINDING)).unwrap_or_default();
    let within = or_500(respond(refusal));
    let past = or_500(respond(check::too_many_failures()));
    count_failure_under(&limiter, &key, &within, &past)
}

/// The configuration from the Worker's vars and secrets, read on an isolate's first request.
fn config(env: &Env) -> &'static Config {
    CONFIG.get_or_init(|| Config::from_lookup(|name| env.var(name).ok().map(|v| v.to_string())))
}

/// The D1 store; `gated` puts it behind the isolate's schema gate.
fn database(env: &Env) -> Result<D1Store> {
    let binding = match D1.get() {
        Some(binding) => binding,
        None => {
            let binding = env.d1(D1_BINDING)?;
            D1.get_or_init(|| binding)
        }
    };
    Ok(D1Store(binding))
}

/// The store as a request uses it: until the isolate has found the schema current, its first
/// batch carries the check (`store::Gated`), and brings the schema up when it is behind.
fn gated(db: &D1Store) -> store::Gated<'_> {
    store::Gated {
        db,
        current: &SCHEMA_CURRENT,
    }
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The Workers clock (`Date.now()`): milliseconds since the epoch, UTC.
fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}

/// The request context over D1, random ids and the Workers clock, for the planned credential.
fn context<'a>(
    db: &'a dyn store::Sql,
    headers: &http::Headers,
    config: &Config,
    credential: Credential,
) -> Ctx<'a> {
    Ctx {
        db,
        ids: &new_id,
        clock: &now_ms,
        caller: Caller::new(headers.get("user-agent"), credential),
        focus_stale_days: config.focus_stale_days,
    }
}

/// The core's response as the runtime's: status and headers in one `ResponseInit`, the body
/// handed over as bytes. A string body would be decoded from UTF-8 here and encoded again by
/// `Response`.
fn respond(response: http::Response) -> Result<web_sys::Response> {
    log_diagnostic(&response);
    let init = response_init(&response)?;
    // SAFETY: the view into wasm memory lives only until the constructor returns, and nothing
    // allocates in between. `Response` copies a BufferSource body as it is constructed (the
    // Fetch standard asks it; workerd does so even for a view into a wasm memory overwritten and
    // grown right after), so the view is never read later and no JavaScript copy is made first.
    let body = unsafe { Uint8Array::view(response.body.as_bytes()) };
    Ok(web_sys::Response::new_with_opt_buffer_source_and_init(
        Some(&body),
        &init,
    )?)
}

/// How many kinds of response (status and headers) an isolate keeps the `ResponseInit` of.
const INITS_KEPT: usize = 8;

thread_local! {
    /// The `ResponseInit` of each kind of response answered lately, most recent first: the
    /// `Response` constructor copies status and headers out of it, so one init serves every
    /// response of its kind, and most replies are of one kind (200, JSON). Making it is an
    /// object, a `Headers` and a crossing per header.
    static INITS: RefCell<Vec<KeptInit>> = const { RefCell::new(Vec::new()) };
}

/// A kind of response and its `ResponseInit`.
struct KeptInit {
    status: u16,
    headers: Vec<(&'static str, String)>,
    init: web_sys::ResponseInit,
}

/// The `ResponseInit` for a response's status and headers: a kept one, else made and kept in
/// place of the least recently used.
fn response_init(response: &http::Response) -> Result<web_sys::ResponseInit> {
    let kept = INITS.with_borrow_mut(|inits| {
        let found = inits
            .iter()
            .position(|kept| kept.status == response.status && kept.headers == response.headers)?;
        inits[..=found].rotate_right(1);
        Some(inits[0].init.clone())
    });
    if let Some(init) = kept {
        return Ok(init);
    }
    let init = web_sys::ResponseInit::new();
    init.set_status(response.status);
    init.set_headers_headers(&response_headers(response)?);
    INITS.with_borrow_mut(|inits| {
        inits.truncate(INITS_KEPT - 1);
        let kept = KeptInit {
            status: response.status,
            headers: response.headers.clone(),
            init: init.clone(),
        };
        inits.insert(0, kept);
    });
    Ok(init)
}

/// The core's response as workers-rs's, for the Durable Object's handlers: a fixed body, so the
/// reply keeps its Content-Length on its way back through the Worker.
pub(crate) fn into_worker(response: http::Response) -> Result<Response> {
    log_diagnostic(&response);
    let headers = worker::Headers(response_headers(&response)?);
    Ok(Response::from_bytes(response.body.into_bytes())?
        .with_status(response.status)
        .with_headers(headers))
}

/// A response's diagnostic, for the operator's log.
fn log_diagnostic(response: &http::Response) {
    if let Some(diagnostic) = &response.diagnostic {
        console_error!("handoff-mcp: {diagnostic}");
    }
}

/// A response's headers for the runtime.
fn response_headers(response: &http::Response) -> Result<web_sys::Headers> {
    let headers = web_sys::Headers::new()?;
    for (name, value) in &response.headers {
        headers.set(name, value)?;
    }
    Ok(headers)
}
