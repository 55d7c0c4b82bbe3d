//! The Workers shell, compiled for wasm32 only: the fetch entry, env → Config, the D1 adapter,
//! the SSE Durable Object and uuid ids. It translates; the core decides. It must never log a
//! path, query or header (the path holds the token), only fixed sentences and the core's
//! diagnostics.

mod d1;
mod sse;

use std::sync::atomic::{AtomicBool, Ordering};

use worker::{console_error, event, Context, Env, Headers, Request, Response, Result};

use crate::config::{Config, D1_BINDING};
use crate::http::{self, Route};
use crate::store;
use d1::D1Store;

/// Whether this isolate has already made sure the schema exists.
static SCHEMA_READY: AtomicBool = AtomicBool::new(false);
/// Whether this isolate has already said that AUTH_TOKEN is missing.
static SAID_NO_TOKEN: AtomicBool = AtomicBool::new(false);

#[event(fetch)]
async fn fetch(mut req: Request, env: Env, _ctx: Context) -> Result<Response> {
    console_error_panic_hook::set_once();
    let config = Config::from_lookup(|name| env.var(name).ok().map(|v| v.to_string()));
    if config.token.is_none() && !SAID_NO_TOKEN.swap(true, Ordering::Relaxed) {
        console_error!(
            "handoff-mcp: AUTH_TOKEN is not set; every MCP path answers 404 until it is"
        );
    }
    let route = http::route(&req.path(), &config);
    let method = req.method().to_string();
    let headers = http::Headers::new(req.headers().entries());
    let guard = |allow: &[&str]| http::guard(&method, &headers, &config, allow);
    let response = match route {
        Route::Healthz => http::Response::text(200, "ok"),
        Route::NotFound => http::Response::not_found(),
        // POST /sse is Streamable HTTP, so an old /sse URL works whichever transport a client picks.
        Route::Mcp | Route::Sse if method == "POST" => {
            serve_mcp(&mut req, &env, &config, &headers).await?
        }
        Route::Mcp => guard(&["POST"]).unwrap_or_else(http::Response::not_found),
        Route::Sse => match guard(&["GET", "POST"]) {
            Some(refusal) => refusal,
            None => return sse::open(&env, config.token.as_deref().unwrap_or_default()).await,
        },
        Route::SseMessage => match guard(&["POST"]) {
            Some(refusal) => refusal,
            None => return sse::post(&mut req, &env, &headers).await,
        },
    };
    into_worker(response)
}

/// The D1 store, with the schema ensured once per isolate.
async fn database(env: &Env) -> Result<D1Store> {
    let db = D1Store(env.d1(D1_BINDING)?);
    if !SCHEMA_READY.load(Ordering::Relaxed) {
        match store::ensure_schema(&db).await {
            Ok(()) => SCHEMA_READY.store(true, Ordering::Relaxed),
            Err(e) => console_error!("handoff-mcp: could not ensure the schema: {e}"),
        }
    }
    Ok(db)
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

async fn serve_mcp(
    req: &mut Request,
    env: &Env,
    config: &Config,
    headers: &http::Headers,
) -> Result<http::Response> {
    // Refuse an announced oversize body before buffering it.
    let announced = headers
        .get("content-length")
        .and_then(|n| n.trim().parse::<usize>().ok());
    if announced.is_some_and(|n| n > http::MAX_BODY_BYTES) {
        return Ok(http::too_large());
    }
    let db = database(env).await?;
    let body = req.bytes().await?;
    let request = http::Request {
        method: "POST",
        headers,
        body: &body,
    };
    Ok(http::serve_mcp(&request, config, &db, &new_id).await)
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
