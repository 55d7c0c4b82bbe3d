//! The legacy HTTP+SSE transport on a Durable Object, one object per session. The object holds
//! the transport and nothing else: the sender half of the open event stream. Business state
//! stays in D1; messages go through the same dispatcher as /mcp (crate::sse::respond).
//! Never log the session id: the endpoint path it travels in holds the token.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use futures_channel::mpsc::{unbounded, UnboundedSender};
use worker::{
    console_error, durable_object, js_sys, wasm_bindgen_futures, web_sys, Delay, DurableObject,
    Env, Headers, Request, Response, Result, State,
};

use super::{config, context, database, into_worker};
use crate::config::SSE_BINDING;
use crate::http;
use crate::sse;

/// Internal header carrying the endpoint path from the Worker to the object.
const ENDPOINT_HEADER: &str = "x-handoff-endpoint";

type Sender = UnboundedSender<Result<Vec<u8>>>;

/// GET /<token>/sse: a fresh unguessable session, its object, and the stream the object returns.
pub async fn open(env: &Env, endpoint_prefix: &str) -> Result<Response> {
    let session = uuid::Uuid::new_v4().simple().to_string();
    let headers = Headers::new();
    headers.set(
        ENDPOINT_HEADER,
        &sse::endpoint_path(endpoint_prefix, &session),
    )?;
    let request = internal_request("GET", "https://sse.internal/open", &headers, None)?;
    stub(env, &session)?.fetch_with_request(request).await
}

/// POST /<token>/sse/message?sessionId=…: the body and the headers the core reads, forwarded
/// to the session's object.
pub async fn post(
    req: &mut Request,
    env: &Env,
    headers: &http::Headers,
    session: &str,
) -> Result<Response> {
    let body = req.bytes().await?;
    let forwarded = Headers::new();
    for (name, value) in http::forwarded_headers(headers) {
        forwarded.set(name, value)?;
    }
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
}

impl DurableObject for SseSession {
    fn new(state: State, env: Env) -> Self {
        SseSession {
            state,
            env,
            stream: Rc::new(RefCell::new(None)),
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
        let message = match http::parse_body(&req.bytes().await?) {
            Ok(message) => message,
            Err(refusal) => return into_worker(refusal),
        };
        let headers = http::Headers::new(req.headers().entries());
        let db = database(&self.env).await?;
        let config = config(&self.env);
        let slot = self.stream.clone();
        // Answer 202 now; the response follows on the stream when dispatch is done.
        self.state.wait_until(async move {
            let ctx = context(&db, &headers, &config);
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
