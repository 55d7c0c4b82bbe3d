//! The Workers shell, compiled for wasm32 only: the fetch entry, env → Config, the D1 adapter
//! and uuid task ids. It translates; the core decides. It must never log a path or header (the
//! path holds the token), only fixed sentences and the core's diagnostics.

mod d1;

use std::sync::atomic::{AtomicBool, Ordering};

use worker::{console_error, event, Context, Env, Headers, Request, Response, Result};

use crate::config::{Config, D1_BINDING};
use crate::http::{self, Route};
use crate::store;

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
    let response = match http::route(&req.path(), &config) {
        Route::Healthz => http::Response::text(200, "ok"),
        Route::Mcp => serve_mcp(&mut req, &env, &config).await?,
        // The legacy HTTP+SSE transport is not served yet.
        Route::Sse | Route::SseMessage | Route::NotFound => http::Response::not_found(),
    };
    into_worker(response)
}

async fn serve_mcp(req: &mut Request, env: &Env, config: &Config) -> Result<http::Response> {
    let db = d1::D1Store(env.d1(D1_BINDING)?);
    if !SCHEMA_READY.load(Ordering::Relaxed) {
        match store::ensure_schema(&db).await {
            Ok(()) => SCHEMA_READY.store(true, Ordering::Relaxed),
            Err(e) => console_error!("handoff-mcp: could not ensure the schema: {e}"),
        }
    }
    let method = req.method().to_string();
    let headers = http::Headers::new(req.headers().entries());
    let body = if method == "POST" {
        req.bytes().await?
    } else {
        Vec::new()
    };
    let new_id = || uuid::Uuid::new_v4().to_string();
    let request = http::Request {
        method: &method,
        headers: &headers,
        body: &body,
    };
    Ok(http::serve_mcp(&request, config, &db, &new_id).await)
}

fn into_worker(response: http::Response) -> Result<Response> {
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
