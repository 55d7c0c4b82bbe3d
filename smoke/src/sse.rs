//! A legacy HTTP+SSE client (protocol 2024-11-05): a real event-stream reader on GET /sse, the
//! endpoint event, POSTs answered 202, and responses read back as `message` events. It plays
//! the same scenario as the Streamable HTTP clients, through the `Session` trait.

use std::io::{BufRead, BufReader};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::checks::{ensure, expect_eq, Checks};
use crate::client::{client_info, Session, SERVER_NAME};
use crate::http::{self, Target, TIMEOUT};

/// The version a client that only speaks HTTP+SSE asks for.
const SSE_VERSION: &str = "2024-11-05";

/// Longer than the server's keepalive interval (20 s), so an idle stream is not cut by us.
const STREAM_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// One parsed server-sent event.
#[derive(Debug, Clone)]
pub struct Event {
    pub name: String,
    pub data: String,
}

/// An open SSE session: the stream's events arrive on `events` from a reader thread.
pub struct SseClient {
    agent: ureq::Agent,
    post_url: String,
    /// Sent with every POST: the bearer token when the target is reached that way.
    auth: Vec<(&'static str, String)>,
    events: Receiver<Event>,
    last_id: u64,
}

impl SseClient {
    /// Opens GET /sse and waits for the endpoint event, which must name this target's message
    /// path: the token's, or in bearer mode one without any token.
    pub fn connect(target: &Target) -> Result<SseClient, String> {
        let stream_agent = ureq::AgentBuilder::new()
            .timeout_connect(TIMEOUT)
            .timeout_read(STREAM_READ_TIMEOUT)
            .redirects(0)
            .build();
        let mut request = stream_agent
            .get(&target.sse())
            .set("Accept", "text/event-stream");
        for (name, value) in target.auth() {
            request = request.set(name, &value);
        }
        let response = request
            .call()
            .map_err(|e| format!("GET /sse failed: {e}"))?;
        let media = response.content_type().to_owned();
        ensure(media == "text/event-stream", || {
            format!("GET /sse content type is {media:?}")
        })?;
        ensure(response.header(http::SESSION_HEADER).is_none(), || {
            "GET /sse sent an Mcp-Session-Id".into()
        })?;
        let (tx, events) = mpsc::channel();
        let reader = BufReader::new(response.into_reader());
        thread::spawn(move || read_events(reader, &tx));
        let endpoint = next_event(&events, TIMEOUT)?;
        expect_eq("first event", "endpoint", endpoint.name.as_str())?;
        let prefix = target.endpoint_prefix();
        let session = endpoint.data.strip_prefix(&prefix).unwrap_or_default();
        ensure(
            session.len() == 32 && session.bytes().all(|b| b.is_ascii_hexdigit()),
            || format!("endpoint data is not {prefix}<32 hex>: {:?}", endpoint.data),
        )?;
        Ok(SseClient {
            agent: http::agent(),
            post_url: format!("{}{}", target.origin(), endpoint.data),
            auth: target.auth(),
            events,
            last_id: 0,
        })
    }

    /// The message path with another session id, for the unknown-session check.
    pub fn post_url_for(&self, session: &str) -> String {
        let base = self.post_url.split("sessionId=").next().unwrap_or_default();
        format!("{base}sessionId={session}")
    }

    /// POSTs a raw body to this session's message path; returns the HTTP reply.
    pub fn post_raw(&self, url: &str, body: &str) -> Result<http::Reply, String> {
        let mut headers = vec![("Content-Type", "application/json")];
        headers.extend(
            self.auth
                .iter()
                .map(|(name, value)| (*name, value.as_str())),
        );
        http::send(&self.agent, "POST", url, &headers, Some(body))
    }

    /// POSTs a raw body to this session's message path with another target's credential.
    pub fn post_as(&self, other: &Target, body: &str) -> Result<http::Reply, String> {
        let auth = other.auth();
        let mut headers = vec![("Content-Type", "application/json")];
        headers.extend(auth.iter().map(|(name, value)| (*name, value.as_str())));
        http::send(&self.agent, "POST", &self.post_url, &headers, Some(body))
    }

    /// POSTs a raw body with no Authorization header at all.
    fn post_without_auth(&self, url: &str, body: &str) -> Result<http::Reply, String> {
        let headers = [("Content-Type", "application/json")];
        http::send(&self.agent, "POST", url, &headers, Some(body))
    }

    /// The session's message URL, as the endpoint event gave it.
    pub fn post_url(&self) -> String {
        self.post_url.clone()
    }

    /// The next `message` event's JSON-RPC message.
    pub fn next_message(&self) -> Result<Value, String> {
        let event = next_event(&self.events, TIMEOUT)?;
        expect_eq("event name", "message", event.name.as_str())?;
        serde_json::from_str(&event.data)
            .map_err(|e| format!("message data is not JSON ({e}): {}", event.data))
    }

    /// Sends a request: 202 at once, then the response arrives as a `message` event with our id.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.last_id += 1;
        let id = json!(self.last_id);
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.exchange(&message)
    }

    /// Sends a request without params under an id of the caller's.
    pub fn request_with_id(&mut self, id: Value, method: &str) -> Result<Value, String> {
        self.exchange(&json!({"jsonrpc": "2.0", "id": id, "method": method}))
    }

    /// Posts a request (202), and returns the result of the `message` event that answers it.
    fn exchange(&mut self, message: &Value) -> Result<Value, String> {
        let (id, method) = (&message["id"], &message["method"]);
        let reply = self.post_raw(&self.post_url.clone(), &message.to_string())?;
        ensure(reply.status == 202, || {
            format!("{method}: expected 202, got {}", reply.describe())
        })?;
        let response = self.next_message()?;
        ensure(
            response["jsonrpc"] == "2.0" && &response["id"] == id,
            || format!("{method}: a response that is not ours (sent id {id}): {response}"),
        )?;
        response
            .get("result")
            .cloned()
            .ok_or_else(|| format!("{method}: expected a result, got {response}"))
    }

    /// Sends a notification: 202 and nothing on the stream.
    pub fn notify(&mut self, method: &str) -> Result<(), String> {
        let body = json!({"jsonrpc": "2.0", "method": method}).to_string();
        let reply = self.post_raw(&self.post_url.clone(), &body)?;
        ensure(reply.status == 202, || {
            format!("{method}: expected 202, got {}", reply.describe())
        })
    }

    /// Fails if any event other than a keepalive arrives within `window`.
    pub fn expect_quiet(&self, window: Duration) -> Result<(), String> {
        match next_event(&self.events, window) {
            Err(_) => Ok(()),
            Ok(event) => Err(format!("unexpected event {:?}: {}", event.name, event.data)),
        }
    }
}

impl Session for SseClient {
    fn result(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.request(method, params)
    }
}

/// Opens an SSE client named `who` and runs its handshake, recording each step.
pub fn open(checks: &mut Checks, target: &Target, tag: &str, who: &str) -> Option<SseClient> {
    let mut client = checks.keep(
        &format!("{tag} {who}: GET /sse opens a stream with an endpoint event"),
        SseClient::connect(target),
    )?;
    let params =
        json!({"protocolVersion": SSE_VERSION, "capabilities": {}, "clientInfo": client_info()});
    let init = client.request("initialize", params).and_then(|result| {
        expect_eq(
            "protocolVersion",
            &json!(SSE_VERSION),
            &result["protocolVersion"],
        )?;
        expect_eq(
            "serverInfo.name",
            &json!(SERVER_NAME),
            &result["serverInfo"]["name"],
        )
    });
    checks.record(
        &format!("{tag} {who}: initialize over SSE (202, then a message event)"),
        init,
    );
    let note = client
        .notify("notifications/initialized")
        .and_then(|()| client.expect_quiet(Duration::from_millis(300)));
    checks.record(
        &format!("{tag} {who}: notifications/initialized is 202 and writes nothing"),
        note,
    );
    Some(client)
}

/// The transport's own rules: bad session ids, bodies that are not JSON, and isolation.
pub fn transport_checks(checks: &mut Checks, target: &Target) {
    let tag = "sse";
    let (Some(mut one), Some(mut two)) = (
        open(checks, target, tag, "S1"),
        open(checks, target, tag, "S2"),
    ) else {
        return;
    };
    let unknown = one.post_url_for(&"0".repeat(32));
    let outcome = one
        .post_raw(&unknown, "{}")
        .and_then(|r| expect_eq("status", &404, &r.status));
    checks.record(
        &format!("{tag}: POST to an unknown session is 404"),
        outcome,
    );
    let outcome = one
        .post_raw(&one.post_url_for("not-a-session"), "{}")
        .and_then(|r| expect_eq("status", &400, &r.status));
    checks.record(
        &format!("{tag}: POST with a malformed sessionId is 400"),
        outcome,
    );
    let url = one.post_url.clone();
    if target.bearer() {
        let outcome = one
            .post_without_auth(&url, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .and_then(|r| expect_eq("status", &401, &r.status));
        checks.record(
            &format!("{tag}: a POST to an open session without the Authorization header is 401"),
            outcome,
        );
    }
    let streamable = target.sse();
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let outcome = one.post_raw(&streamable, &ping).and_then(|r| {
        expect_eq(
            "POST /sse reply",
            &(200, ping_result()),
            &(r.status, r.body),
        )
    });
    checks.record(
        &format!("{tag}: POST /sse itself is served as Streamable HTTP"),
        outcome,
    );
    let outcome = one
        .post_raw(&url, "{not json")
        .and_then(|r| expect_eq("status", &400, &r.status));
    checks.record(
        &format!("{tag}: POST of a body that is not JSON is 400"),
        outcome,
    );

    // Two open sessions use the same request id; each must get only its own answer.
    let outcome = (|| {
        let listed = one.request("tools/list", Value::Null)?;
        let pinged = two.request("ping", json!({}))?;
        ensure(listed["tools"].is_array(), || format!("S1 got {listed}"))?;
        expect_eq("S2 ping result", &json!({}), &pinged)?;
        one.expect_quiet(Duration::from_millis(500))?;
        two.expect_quiet(Duration::from_millis(10))
    })();
    checks.record(
        &format!("{tag}: two open sessions see only their own responses"),
        outcome,
    );
}

fn ping_result() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "result": {}}).to_string()
}

/// Waits up to `timeout` for the next event, skipping nothing: comments never become events.
fn next_event(events: &Receiver<Event>, timeout: Duration) -> Result<Event, String> {
    let deadline = Instant::now() + timeout;
    match events.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(event) => Ok(event),
        Err(RecvTimeoutError::Timeout) => Err(format!("no event within {timeout:?}")),
        Err(RecvTimeoutError::Disconnected) => Err("the event stream ended".into()),
    }
}

/// Parses `event:`/`data:` lines into events until the stream ends; `:` lines are comments.
fn read_events(reader: impl BufRead, tx: &mpsc::Sender<Event>) {
    let (mut name, mut data) = (String::new(), Vec::<String>::new());
    for line in reader.lines() {
        let Ok(line) = line else { return };
        if line.is_empty() {
            if !data.is_empty() || !name.is_empty() {
                let event = Event {
                    name: if name.is_empty() {
                        "message".into()
                    } else {
                        std::mem::take(&mut name)
                    },
                    data: std::mem::take(&mut data).join("\n"),
                };
                if tx.send(event).is_err() {
                    return;
                }
            }
        } else if let Some(value) = line.strip_prefix("event:") {
            name = value.trim_start().to_owned();
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push(value.strip_prefix(' ').unwrap_or(value).to_owned());
        }
    }
}
