//! The Workers shell, compiled for wasm32 only: the fetch entry, env → Config, the D1 adapter,
//! the SSE Durable Object, the clock and uuid ids. It carries out the core's `http::Plan` and
//! decides nothing itself. It must never log a path, query or header (the path holds the
//! token), only fixed sentences and the core's diagnostics.

mod d1;
mod sse;

use std::sync::atomic::{AtomicBool, Ordering};

use worker::{console_error, event, Context, Env, Headers, Request, Response, Result};

use crate::config::{Config, D1_BINDING};
use crate::context::{Caller, Ctx};
use crate::http::{self, Plan};
use crate::store;
use crate::web;
use d1::D1Store;

/// Whether this isolate has already made sure the schema exists.
static SCHEMA_READY: AtomicBool = AtomicBool::new(false);
/// Whether this isolate has already said that AUTH_TOKEN is missing.
static SAID_NO_TOKEN: AtomicBool = AtomicBool::new(false);

#[event(fetch)]
async fn fetch(mut req: Request, env: Env, _ctx: Context) -> Result<Response> {
    console_error_panic_hook::set_once();
    let config = config(&env);
    if config.token.is_none() && !SAID_NO_TOKEN.swap(true, Ordering::Relaxed) {
        console_error!(
            "handoff-mcp: AUTH_TOKEN is not set; every MCP path answers 404 until it is"
        );
    }
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
        Plan::Mcp => {
            let body = req.bytes().await?;
            let db = database(&env).await?;
            let ctx = context(&db, &headers, &config);
            into_worker(http::serve_mcp(&headers, &body, &ctx).await)
        }
        Plan::OpenSse { endpoint_prefix } => sse::open(&env, &endpoint_prefix).await,
        Plan::SseMessage { session } => sse::post(&mut req, &env, &headers, &session).await,
        Plan::Web(action) => {
            let body = match action.reads_body() {
                true => req.bytes().await?,
                false => Vec::new(),
            };
            let db = database(&env).await?;
            into_worker(web::serve(&action, &body, &context(&db, &headers, &config)).await)
        }
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

/// The request context over D1, random ids and the Workers clock.
fn context<'a>(db: &'a D1Store, headers: &http::Headers, config: &Config) -> Ctx<'a> {
    Ctx {
        db,
        ids: &new_id,
        clock: &now_ms,
        caller: Caller::from_user_agent(headers.get("user-agent")),
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
