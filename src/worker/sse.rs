//! The legacy HTTP+SSE transport on a Durable Object, one object per session. The object holds
//! the transport and nothing else: the sender half of the open event stream, and the scope of
//! the credential that opened it. Business state stays in D1; messages go through the same
//! dispatcher as /mcp (crate::sse::respond), with that scope.
//! Never log the session id: the endpoint path it travels in may hold the token.
//!
//! The scope travels from the Worker in `SCOPE_HEADER`, which a client cannot forge: the object
//! is reachable only through the Worker's stub, and the Worker builds each request to it from
//! scratch (the endpoint, the scope, and the whitelist `http::forwarded_headers`), never copying
//! a client's headers wholesale. The object does not re-derive the scope from the token, so the
//! token never reaches it.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use futures_channel::mpsc::{unbounded, UnboundedSender};
use worker::{
    console_error, durable_object, js_sys, wasm_bindgen_futures, web_sys, Delay, DurableObject,
    Env, Headers, Request, Response, Result, State,
};

use super::{config, context, database, into_worker, read_body};
use crate::config::SSE_BINDING;
use crate::context::Scope;
use crate::http;
use crate::sse;

/// Internal header carrying the endpoint path from the Worker to the object.
const ENDPOINT_HEADER: &str = "x-handoff-endpoint";
/// Internal header carrying the request's scope (`Scope::to_wire`) from the Worker to the object.
const SCOPE_HEADER: &str = "x-handoff-scope";

type Sender = UnboundedSender<Result<Vec<u8>>>;

/// GET /<token>/sse or /sse: a fresh unguessable session, its object, and the stream the
/// object returns. The object serves the opener's scope only.
pub async fn open(env: &Env, endpoint_prefix: &str, scope: &Scope) -> Result<Response> {
    let session = uuid::Uuid::new_v4().simple().to_string();
    let headers = Headers::new();
    headers.set(
        ENDPOINT_HEADER,
        &sse::endpoint_path(endpoint_prefix, &session),
    )?;
    headers.set(SCOPE_HEADER, &scope.to_wire())?;
    let request = internal_request("GET", "https://sse.internal/open", &headers, None)?;
    stub(env, &session)?.fetch_with_request(request).await
}

/// POST /<token>/sse/message?sessionId=… or /sse/message?sessionId=…: the body, the headers
/// the core reads and the POST's own scope, forwarded to the session's object.
pub async fn post(
    req: &web_sys::Request,
    ctx: &worker::worker_sys::Context,
    env: &Env,
    headers: &http::Headers,
    session: &str,
    scope: &Scope,
) -> Result<Response> {
    // Checked here as well as in the object, so a body past the limit goes no further.
    let body = read_body(req, Some(ctx)).await?;
    if let Some(refusal) = http::too_large(&body) {
        return into_worker(refusal);
    }
    let forwarded = Headers::new();
    for (name, value) in http::forwarded_headers(headers) {
        forwarded.set(name, value)?;
    }
    forwarded.set(SCOPE_HEADER, &scope.to_wire())?;
    let request = internal_request(
        "POST",
        "https://sse.internal/message",
        &forwarded,
        Some(&body),
    )?;
    stub(env, session)?.fetch_with_request(request).await
}

/// A request from the Worker to a session object, built with web-sys directly: worker's
/// `Request::new_with_init` converts a full `RequestInit` (cf options and all) and costs
/// about 12 KB of wasm for what is a method, two headers and a body here.
fn internal_request(
    method: &str,
    url: &str,
    headers: &Headers,
    body: Option<&[u8]>,
) -> Result<Request> {
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    init.set_headers(&headers.0);
    if let Some(body) = body {
        init.set_body(&js_sys::Uint8Array::from(body));
    }
    Ok(web_sys::Request::new_with_str_and_init(url, &init)?.into())
}

fn stub(env: &Env, session: &str) -> Result<worker::Stub> {
    env.durable_object(SSE_BINDING)?
        .id_from_name(session)?
        .get_stub()
}

#[durable_object]
pub struct SseSession {
    state: State,
    env: Env,
    /// The open stream's sender; `None` before open and after the client has gone.
    stream: Rc<RefCell<Option<Sender>>>,
    /// The scope of the credential that opened the stream; a POST must carry the same.
    scope: RefCell<Option<Scope>>,
}

impl DurableObject for SseSession {
    fn new(state: State, env: Env) -> Self {
        SseSession {
            state,
            env,
            stream: Rc::new(RefCell::new(None)),
            scope: RefCell::new(None),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        match req.path().as_str() {
            "/open" => self.open(&req),
            "/message" => self.message(&mut req).await,
            _ => into_worker(http::Response::not_found()),
        }
    }
}

impl SseSession {
    fn open(&self, req: &Request) -> Result<Response> {
        let Some(scope) = scope_of(req)? else {
            return into_worker(http::Response::not_found());
        };
        *self.scope.borrow_mut() = Some(scope);
        let endpoint = req.headers().get(ENDPOINT_HEADER)?.unwrap_or_default();
        let (tx, rx) = unbounded::<Result<Vec<u8>>>();
        tx.unbounded_send(Ok(sse::endpoint_event(&endpoint).into_bytes()))
            .ok();
        *self.stream.borrow_mut() = Some(tx);
        wasm_bindgen_futures::spawn_local(keepalive(self.stream.clone()));
        let headers = Headers::new();
        headers.set("content-type", "text/event-stream")?;
        headers.set("cache-control", "no-cache, no-transform")?;
        headers.set("x-accel-buffering", "no")?;
        Ok(Response::from_stream(rx)?.with_headers(headers))
    }

    async fn message(&self, req: &mut Request) -> Result<Response> {
        let Some(tx) = self.live_sender() else {
            return into_worker(sse::unknown_session());
        };
        // A POST whose credential has another scope than the opener's is told what a stranger
        // is told: this session is not one it can reach.
        let scope = match scope_of(req)? {
            Some(scope) if Some(&scope) == self.scope.borrow().as_ref() => scope,
            _ => return into_worker(sse::unknown_session()),
        };
        // Owned: the message is answered on the stream after this POST has had its 202.
        // The Worker sent no more than the limit; anything past it is cut off, not dropped.
        let message = match http::parse_body(&read_body(req.inner(), None).await?) {
            Ok(message) => message.into_owned(),
            Err(refusal) => return into_worker(refusal),
        };
        let headers = http::Headers::new(req.headers().entries());
        let db = database(&self.env).await?;
        let config = config(&self.env);
        let slot = self.stream.clone();
        // Answer 202 now; the response follows on the stream when dispatch is done.
        self.state.wait_until(async move {
            let ctx = context(&db, &headers, config, scope);
            let (event, diagnostic) = sse::respond(&message, &headers, &ctx).await;
            if let Some(diagnostic) = diagnostic {
                console_error!("handoff-mcp: {diagnostic}");
            }
            // A send fails only when the client has gone: forget the session at once.
            if event.is_some_and(|event| tx.unbounded_send(Ok(event.into_bytes())).is_err()) {
                slot.borrow_mut().take();
            }
        });
        into_worker(sse::accepted())
    }

    /// The stream's sender if the client is still reading; forgets a closed one.
    fn live_sender(&self) -> Option<Sender> {
        let mut slot = self.stream.borrow_mut();
        if slot.as_ref().is_some_and(|tx| tx.is_closed()) {
            *slot = None;
        }
        slot.clone()
    }
}

/// The scope the Worker attached to a request; `None` if it is missing or garbled, which then
/// reaches nothing.
fn scope_of(req: &Request) -> Result<Option<Scope>> {
    Ok(req
        .headers()
        .get(SCOPE_HEADER)?
        .as_deref()
        .and_then(Scope::from_wire))
}

/// Writes a comment every KEEPALIVE_SECS until the client goes away, then forgets the stream.
async fn keepalive(stream: Rc<RefCell<Option<Sender>>>) {
    loop {
        Delay::from(Duration::from_secs(sse::KEEPALIVE_SECS)).await;
        let alive = stream.borrow().as_ref().is_some_and(|tx| {
            tx.unbounded_send(Ok(sse::KEEPALIVE.as_bytes().to_vec()))
                .is_ok()
        });
        if !alive {
            stream.borrow_mut().take();
            return;
        }
    }
}
