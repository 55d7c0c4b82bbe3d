//! Carrying out what `plan` decided the core serves: the body's size rule, then the transport
//! (Streamable HTTP, a page, state.txt, the owner's API) with the request's storage behind its
//! credential's guard; and an OAuth request with what the shell fetched for it.

use super::{with_metadata, Endpoint};
use crate::auth::oauth::{self, Fetched, Outcome, Services, Step};
use crate::config::Config;
use crate::context::{Ctx, NewId};
use crate::error::Error;
use crate::http::{self, Headers, Request, Response};
use crate::owner;
use crate::plain;
use crate::store::{LocalFuture, Sql};
use crate::streamable;
use crate::web;

/// Carries out a planned endpoint: the body's size rule (the one place it is applied to a body
/// as read; `body` is empty where none is read), then the transport that serves it. A request
/// whose credential is an OAuth grant reaches storage only through `Guarded` (`Ctx::guarded`), so a revoked
/// grant's every batch fails, whichever surface runs it.
pub async fn serve(
    endpoint: &Endpoint,
    headers: &Headers,
    body: &[u8],
    ctx: &Ctx<'_>,
    config: &Config,
) -> Response {
    if let Some(error) = http::too_large(body) {
        return endpoint.refusal(&error);
    }
    let response = ctx
        .guarded(async |ctx| serve_with(endpoint, headers, body, ctx, config).await)
        .await
        .unwrap_or_else(|error| endpoint.refusal(&Error::from(error)));
    with_metadata(response, config)
}

async fn serve_with(
    endpoint: &Endpoint,
    headers: &Headers,
    body: &[u8],
    ctx: &Ctx<'_>,
    config: &Config,
) -> Response {
    match endpoint {
        Endpoint::Mcp => streamable::serve(headers, body, ctx).await,
        // Behind a box of its own: the pages' code is then a function apart from this one, so
        // an MCP request, an isolate's first above all, never compiles it (V8 compiles a wasm
        // function whole, on its first call).
        Endpoint::Web(action) => {
            let page: LocalFuture<'_, Response> = Box::pin(web::serve(action, body, ctx, config));
            page.await
        }
        Endpoint::Owner(call) => {
            let answer: LocalFuture<'_, Response> = Box::pin(owner::serve(call, body, ctx, config));
            answer.await
        }
        // Boxed as the pages are, for the same reason.
        Endpoint::State { project } => {
            let text: LocalFuture<'_, Response> = Box::pin(plain::state(project.as_deref(), ctx));
            text.await
        }
    }
}

/// Carries out a planned OAuth request: the body's size rule, then `oauth::serve` with what the
/// shell fetched. Its storage is the request's own, unguarded: an OAuth request carries no
/// grant.
pub async fn serve_oauth(
    step: Step,
    req: &Request<'_>,
    body: &[u8],
    fetched: Option<&Fetched>,
    config: &Config,
    db: &dyn Sql,
    ids: &dyn NewId,
) -> Outcome {
    let (Ok(oauth), Ok(credentials)) = (&config.oauth, &config.credentials) else {
        return Response::not_found().into();
    };
    if let Some(error) = http::too_large(body) {
        return oauth::refusal(&error).into();
    }
    let services = Services {
        db,
        ids,
        credentials,
    };
    oauth::serve(step, req, body, fetched, oauth, &services).await
}
