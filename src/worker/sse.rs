//! The legacy HTTP+SSE transport on a Durable Object, one object per session. The object holds
//! the transport and nothing else: the sender half of the open event stream with the count of
//! what its client has not read yet (`sse::Backlog`, which closes a session whose client has
//! fallen too far behind), and the scope of the credential that opened it. Business state stays
//! in D1; messages go through the same dispatcher as /mcp (crate::sse::respond), with that scope.
//! Never log the session id: the endpoint path it travels in may hold the token.
//!
//! The scope travels from the Worker in `SCOPE_HEADER`, which a client cannot forge: the object
//! is reachable only through the Worker's stub, and the Worker builds each request to it from
//! scratch (the endpoint, the scope, and the whitelist `http::forwarded_headers`), never copying
//! a client's headers wholesale. The object does not re-derive the scope from the token, so the
//! token never reaches it.
//!
//! A session, step by step: `GET /<token>/sse` (or `/sse` with the bearer header) mints a
//! session id (a UUID v4, 32 hex digits) and forwards to the object of that name with the
//! endpoint path and the scope (`open`); the object keeps the scope, opens the stream, writes the
//! `endpoint` event (no token in it when the header opened it), keeps the sender and returns the
//! streaming response. A POST to the message endpoint has its own credential and the body's size
//! checked by the Worker (413), then its body, its routing headers and its scope go to the same
//! object (`post`), which answers 404 when no stream is open or the scope is not the opener's,
//! 400 for a body that is not JSON, else 202 at once, and inside `wait_until` runs
//! `sse::respond` (the dispatcher and D1 of /mcp) and writes the reply's event. A keepalive
//! comment goes out every `sse::KEEPALIVE_SECS`; the first failed write (the client gone) drops
//! the sender, so the next POST gets 404, and so does a write past the backlog
//! (`sse::BACKLOG_EVENTS` unread events or `sse::BACKLOG_BYTES`). The object writes no storage;
//! an idle session costs one resident object and about 14 bytes every 20 s.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use futures_channel::mpsc::{unbounded, UnboundedSender};
use worker::{
    console_error, durable_object, js_sys, wasm_bindgen_futures, web_sys, Delay, DurableObject,
    Env, Headers, Request, Response, Result, State,
};

use super::{config, context, database, gated, into_worker, read_body};
use crate::auth::scope::Credential;
use crate::config::SSE_BINDING;
use crate::http;
use crate::sse;

/// Internal header carrying the endpoint path from the Worker to the object.
const ENDPOINT_HEADER: &str = "x-handoff-endpoint";
/// Internal header carrying the request's credential (`Credential::to_wire`: its scope, and an
/// OAuth grant's id and client) from the Worker to the object.
const SCOPE_HEADER: &str = "x-handoff-scope";

/// The open stream of a session, and how much of what was sent on it its client has not read.
struct Outbox {
    tx: UnboundedSender<Result<Queued>>,
    backlog: Rc<Cell<sse::Backlog>>,
}

/// An event on its way to the client. The stream turns it into bytes (`From`, below) at the
/// moment its reader takes it, so that is where it leaves the backlog.
struct Queued {
    bytes: Vec<u8>,
    backlog: Rc<Cell<sse::Backlog>>,
}

impl From<Queued> for Vec<u8> {
    fn from(queued: Queued) -> Vec<u8> {
        let backlog = &queued.backlog;
        backlog.set(backlog.get().taken(queued.bytes.len()));
        queued.bytes
    }
}

impl Outbox {
    /// Queues an event for the client. `false` when the client has gone, or when it has left so
    /// much unread that the backlog refuses more: either way the session must close.
    fn send(&self, bytes: Vec<u8>) -> bool {
        let Some(backlog) = self.backlog.get().queued(bytes.len()) else {
            console_error!(
                "handoff-mcp: an SSE session closed: its client had stopped reading its stream"
            );
            return false;
        };
        self.backlog.set(backlog);
        let queued = Queued {
            bytes,
            backlog: self.backlog.clone(),
        };
        self.tx.unbounded_send(Ok(queued)).is_ok()
    }
}

/// The session's outbox: `None` before open and once the session is closed.
type Slot = Rc<RefCell<Option<Outbox>>>;

/// Sends on the session's stream, and closes the session (drops its sender, so later POSTs
/// are 404) when that fails. Whether it was sent.
fn send(slot: &Slot, bytes: Vec<u8>) -> bool {
    let sent = slot
        .borrow()
        .as_ref()
        .is_some_and(|outbox| outbox.send(bytes));
    if !sent {
        slot.borrow_mut().take();
    }
    sent
}

/// GET /<token>/sse or /sse: a fresh unguessable session, its object, and the stream the
/// object returns. The object serves the opener's scope only.
pub async fn open(env: &Env, endpoint_prefix: &str, credential: &Credential) -> Result<Response> {
    let session = uuid::Uuid::new_v4().simple().to_string();
    let headers = Headers::new();
    headers.set(
        ENDPOINT_HEADER,
        &sse::endpoint_path(endpoint_prefix, &session),
    )?;
    headers.set(SCOPE_HEADER, &credential.to_wire())?;
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
    credential: &Credential,
) -> Result<Response> {
    // The size rule, before the body goes any further.
    let body = read_body(req, Some(ctx)).await?;
    if let Some(error) = http::too_large(&body) {
        return into_worker(http::Response::refusal(&error));
    }
    let forwarded = Headers::new();
    for (name, value) in http::forwarded_headers(headers) {
        forwarded.set(name, value)?;
    }
    forwarded.set(SCOPE_HEADER, &credential.to_wire())?;
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
    /// The open stream's outbox; `None` before open and once the session is closed.
    stream: Slot,
    /// The credential that opened the stream; a POST must carry the same.
    credential: RefCell<Option<Credential>>,
}

impl DurableObject for SseSession {
    fn new(state: State, env: Env) -> Self {
        SseSession {
            state,
            env,
            stream: Rc::new(RefCell::new(None)),
            credential: RefCell::new(None),
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
        let Some(credential) = credential_of(req)? else {
            return into_worker(http::Response::not_found());
        };
        *self.credential.borrow_mut() = Some(credential);
        let endpoint = req.headers().get(ENDPOINT_HEADER)?.unwrap_or_default();
        let (tx, rx) = unbounded::<Result<Queued>>();
        let outbox = Outbox {
            tx,
            backlog: Rc::new(Cell::new(sse::Backlog::default())),
        };
        *self.stream.borrow_mut() = Some(outbox);
        send(&self.stream, sse::endpoint_event(&endpoint).into_bytes());
        wasm_bindgen_futures::spawn_local(keepalive(self.stream.clone()));
        let headers = Headers::new();
        headers.set("content-type", "text/event-stream")?;
        headers.set("cache-control", "no-cache, no-transform")?;
        headers.set("x-accel-buffering", "no")?;
        Ok(Response::from_stream(rx)?.with_headers(headers))
    }

    async fn message(&self, req: &mut Request) -> Result<Response> {
        if !self.is_open() {
            return into_worker(sse::unknown_session());
        }
        // A POST whose credential has another scope than the opener's is told what a stranger
        // is told: this session is not one it can reach.
        let credential = match credential_of(req)? {
            Some(credential) if Some(&credential) == self.credential.borrow().as_ref() => {
                credential
            }
            _ => return into_worker(sse::unknown_session()),
        };
        // Owned: the message is answered on the stream after this POST has had its 202.
        // The Worker checked the size and sent no more than the limit; anything past it is cut
        // off, not dropped.
        let message = match http::parse_json(&read_body(req.inner(), None).await?) {
            Ok(message) => message.into_owned(),
            Err(refusal) => return into_worker(refusal),
        };
        let headers = http::Headers::new(req.headers().entries());
        let db = database(&self.env)?;
        let config = config(&self.env);
        let slot = self.stream.clone();
        // Answer 202 now; the response follows on the stream when dispatch is done.
        self.state.wait_until(async move {
            let db = gated(&db);
            let ctx = context(&db, &headers, config, credential);
            let (event, diagnostic) = sse::respond(&message, &headers, &ctx).await;
            if let Some(diagnostic) = diagnostic {
                console_error!("handoff-mcp: {diagnostic}");
            }
            // The session may have closed meanwhile; then the reply goes nowhere.
            if let Some(event) = event {
                send(&slot, event.into_bytes());
            }
        });
        into_worker(sse::accepted())
    }

    /// Whether the session is open: its client has not gone, nor fallen too far behind.
    /// Forgets a stream whose client has gone.
    fn is_open(&self) -> bool {
        let mut slot = self.stream.borrow_mut();
        if slot.as_ref().is_some_and(|outbox| outbox.tx.is_closed()) {
            *slot = None;
        }
        slot.is_some()
    }
}

/// The credential the Worker attached to a request; `None` if it is missing or garbled, which
/// then reaches nothing.
fn credential_of(req: &Request) -> Result<Option<Credential>> {
    Ok(req
        .headers()
        .get(SCOPE_HEADER)?
        .as_deref()
        .and_then(Credential::from_wire))
}

/// Writes a comment every KEEPALIVE_SECS until the session closes.
async fn keepalive(stream: Slot) {
    loop {
        Delay::from(Duration::from_secs(sse::KEEPALIVE_SECS)).await;
        if !send(&stream, sse::KEEPALIVE.as_bytes().to_vec()) {
            return;
        }
    }
}
