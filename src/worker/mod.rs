//! The Workers shell, compiled for wasm32 only: the fetch entry, env → Config, the D1 adapter,
//! the SSE Durable Object, the clock and uuid ids. It carries out the core's `http::Plan`
//! (putting the scope it names into the request context) and decides nothing itself. It must
//! never log a path, query or header (the path or the Authorization header holds a token),
//! only fixed sentences, the position of a malformed credential entry and the core's
//! diagnostics.

mod d1;
mod sse;

use std::sync::atomic::{AtomicBool, Ordering};

use worker::{console_error, event, Context, Env, Headers, Request, Response, Result};

use crate::config::{Config, AUTH_TOKEN_VAR, D1_BINDING, PROJECT_TOKENS_VAR};
use crate::context::{Caller, Ctx, Scope};
use crate::http::{self, Plan};
use crate::store;
use crate::web;
use d1::D1Store;

/// Whether this isolate has already made sure the schema exists.
static SCHEMA_READY: AtomicBool = AtomicBool::new(false);
/// Whether this isolate has already said what is wrong with its tokens.
static SAID_TOKEN_PROBLEM: AtomicBool = AtomicBool::new(false);

#[event(fetch)]
async fn fetch(mut req: Request, env: Env, _ctx: Context) -> Result<Response> {
    console_error_panic_hook::set_once();
    let config = config(&env);
    say_token_problem(&config);
    let method = req.method().to_string();
    let path = req.path();
    // The query straight from the serialized URL: parsing it with `url` would link that crate
    // and its IDNA tables (about 70 KB of wasm) for one hex parameter.
    let url = req.inner().url();
    let query = url
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or_default());
    let headers = http::Headers::new(req.headers().entries());
    let request = http::Request {
        method: &method,
        path: &path,
        query,
        headers: &headers,
        own_origin: origin_of(&url),
    };
    match http::plan(&request, &config) {
        Plan::Respond(response) => into_worker(response),
        Plan::Mcp { scope } => {
            let body = req.bytes().await?;
            let db = database(&env).await?;
            let ctx = context(&db, &headers, &config, scope);
            into_worker(http::serve_mcp(&headers, &body, &ctx).await)
        }
        Plan::OpenSse {
            endpoint_prefix,
            scope,
        } => sse::open(&env, &endpoint_prefix, &scope).await,
        Plan::SseMessage { session, scope } => {
            sse::post(&mut req, &env, &headers, &session, &scope).await
        }
        Plan::Web { action, scope } => {
            let body = match action.reads_body() {
                true => req.bytes().await?,
                false => Vec::new(),
            };
            let db = database(&env).await?;
            let ctx = context(&db, &headers, &config, scope);
            into_worker(web::serve(&action, &body, &ctx).await)
        }
    }
}

/// One log line per isolate when the tokens are missing or malformed. A malformed entry is
/// named by its variable and position only (`config::Misconfigured`), never by its text.
fn say_token_problem(config: &Config) {
    let problem = match &config.credentials {
        Err(wrong) => format!(
            "the server is misconfigured: {wrong}; every route but /healthz answers 503 until it is fixed"
        ),
        Ok(credentials) if credentials.is_empty() => format!(
            "no token is set ({AUTH_TOKEN_VAR}, {PROJECT_TOKENS_VAR}); every MCP path answers 404 until one is"
        ),
        Ok(_) => return,
    };
    if !SAID_TOKEN_PROBLEM.swap(true, Ordering::Relaxed) {
        console_error!("handoff-mcp: {problem}");
    }
}

/// `scheme://host[:port]` of a serialized URL: what a browser sends as the `Origin` of a page
/// served from it.
fn origin_of(url: &str) -> &str {
    let authority = url.find("://").map_or(0, |i| i + 3);
    let end = url[authority..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| authority + i);
    &url[..end]
}

/// The configuration from the Worker's vars and secrets.
fn config(env: &Env) -> Config {
    Config::from_lookup(|name| env.var(name).ok().map(|v| v.to_string()))
}

/// The D1 store, with the schema ensured once per isolate.
async fn database(env: &Env) -> Result<D1Store> {
    let db = D1Store(env.d1(D1_BINDING)?);
    if !SCHEMA_READY.load(Ordering::Relaxed) {
        match store::ensure_schema(&db).await {
            Ok(_) => SCHEMA_READY.store(true, Ordering::Relaxed),
            Err(e) => console_error!("handoff-mcp: could not ensure the schema: {e}"),
        }
    }
    Ok(db)
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The Workers clock (`Date.now()`): milliseconds since the epoch, UTC.
fn now_ms() -> i64 {
    worker::Date::now().as_millis() as i64
}

/// The request context over D1, random ids and the Workers clock, for the planned scope.
fn context<'a>(db: &'a D1Store, headers: &http::Headers, config: &Config, scope: Scope) -> Ctx<'a> {
    Ctx {
        db,
        ids: &new_id,
        clock: &now_ms,
        caller: Caller::new(headers.get("user-agent"), scope),
        focus_stale_days: config.focus_stale_days,
    }
}

pub(crate) fn into_worker(response: http::Response) -> Result<Response> {
    if let Some(diagnostic) = &response.diagnostic {
        console_error!("handoff-mcp: {diagnostic}");
    }
    let headers = Headers::new();
    for (name, value) in &response.headers {
        headers.set(name, value)?;
    }
    Ok(Response::from_bytes(response.body.into_bytes())?
        .with_status(response.status)
        .with_headers(headers))
}
