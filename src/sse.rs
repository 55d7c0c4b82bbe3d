//! The legacy HTTP+SSE transport (protocol 2024-11-05) as pure functions: session ids, event
//! framing, turning one POSTed message into the event to write on the session's stream, and
//! how much a session holds for a client that does not read it (`Backlog`).
//! No stream, timer or Durable Object here (src/worker/sse.rs holds those), and no business
//! state: a message goes through the same dispatcher as /mcp.

use serde_json::Value as Json;

use crate::context::Ctx;
use crate::dispatch::{self, Reply};
use crate::error::Error;
use crate::http::{self, Headers, Response};
use crate::json_read::Node;

/// A comment line: keeps proxies and clients from timing the idle stream out.
pub const KEEPALIVE: &str = ": keepalive\n\n";
/// Within the 15–25 s that common proxies and SDKs tolerate.
pub const KEEPALIVE_SECS: u64 = 20;
/// Most events a session holds that its client has not read. A client that reads its stream
/// takes each reply as it comes (a handful at most wait while it posts many at once); one that
/// has left 64 unread has stopped reading, and its session is closed.
pub const BACKLOG_EVENTS: usize = 64;
/// Most bytes a session holds that its client has not read: room for a few of the largest
/// replies a client can ask for (one echoes an id of nearly the 1 MiB body limit), while a
/// thousand sessions that stopped reading cannot hold more than 4 GiB among them. The object's
/// own memory holds at most this plus one event (`Backlog::queued`).
pub const BACKLOG_BYTES: usize = 4 << 20;

/// Session ids are 32 lowercase hex digits (a v4 UUID without dashes: 122 random bits).
pub fn is_session_id(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The full endpoint path of a session (`route::endpoint_prefix` gives the prefix).
pub fn endpoint_path(prefix: &str, session_id: &str) -> String {
    format!("{prefix}{session_id}")
}

/// The first event of a stream: the endpoint path. A path with a line break (impossible for
/// ours) is cut there, so it can never add an event.
pub fn endpoint_event(path: &str) -> String {
    let path = path.split(['\r', '\n']).next().unwrap_or_default();
    format!("event: endpoint\ndata: {path}\n\n")
}

/// One JSON-RPC message (its JSON text, as a `Reply` holds it) as an SSE event. JSON text as
/// written here has no raw line break (every one inside a string is escaped), so `data:` is one
/// line.
pub fn message_event(message: &str) -> String {
    format!("event: message\ndata: {message}\n\n")
}

/// The session id from a message POST's query string, or the 400 to answer.
pub fn session_from_query(query: Option<&str>) -> Result<&str, Response> {
    let id = query
        .unwrap_or_default()
        .split('&')
        .find_map(|pair| pair.strip_prefix("sessionId="))
        .ok_or_else(|| {
            Response::text(
                400,
                "Missing sessionId: POST to the path the endpoint event gave",
            )
        })?;
    if !is_session_id(id) {
        return Err(Response::text(
            400,
            "Malformed sessionId: POST to the path the endpoint event gave",
        ));
    }
    Ok(id)
}

/// What a POST to a session that is not open gets.
pub fn unknown_session() -> Response {
    Response::text(
        404,
        "Unknown or closed SSE session: open a new one with GET on the /sse path",
    )
}

/// What a POST to an open session gets at once; the answer follows on the stream.
pub fn accepted() -> Response {
    Response::text(202, "Accepted")
}

/// Runs one accepted message through the dispatcher. Returns the event to write on the stream
/// (`None` for notifications and posted responses) and a diagnostic for the log. A session
/// opened with an OAuth grant reaches storage only through `Guarded` (`Ctx::guarded`, as /mcp
/// does), so a revoked grant's session reads nothing more.
pub async fn respond(
    message: &Node<'_>,
    headers: &Headers,
    ctx: &Ctx<'_>,
) -> (Option<String>, Option<String>) {
    let mcp_headers = http::mcp_headers(headers);
    let handled = ctx
        .guarded(async |ctx| dispatch::handle(message, &mcp_headers, ctx).await)
        .await
        .unwrap_or_else(|error| dispatch::refuse(&Error::from(error), &Json::Null, None));
    let event = match handled.reply {
        Reply::Json { body, .. } => Some(message_event(&body)),
        Reply::Accepted => None,
    };
    (event, handled.diagnostic)
}

/// What a session's stream holds that its client has not read yet: events sent, less those
/// the stream's reader has taken.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Backlog {
    events: usize,
    bytes: usize,
}

impl Backlog {
    /// The backlog with one more event of `len` bytes, or `None` when that would pass
    /// `BACKLOG_EVENTS` or `BACKLOG_BYTES`: the client has stopped reading, and its session must
    /// close. An empty backlog takes any event, so a client that reads is never cut off by one
    /// large reply.
    pub fn queued(self, len: usize) -> Option<Backlog> {
        let next = Backlog {
            events: self.events + 1,
            bytes: self.bytes + len,
        };
        let within = next.events <= BACKLOG_EVENTS && next.bytes <= BACKLOG_BYTES;
        (self.events == 0 || within).then_some(next)
    }

    /// The backlog once the reader has taken an event of `len` bytes.
    pub fn taken(self, len: usize) -> Backlog {
        Backlog {
            events: self.events.saturating_sub(1),
            bytes: self.bytes.saturating_sub(len),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::json_write;

    #[test]
    fn framing() {
        let id = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            endpoint_event(&endpoint_path("/tok/sse/message?sessionId=", id)),
            "event: endpoint\ndata: /tok/sse/message?sessionId=0123456789abcdef0123456789abcdef\n\n"
        );
        assert_eq!(
            endpoint_event(&endpoint_path("/sse/message?sessionId=", id)),
            "event: endpoint\ndata: /sse/message?sessionId=0123456789abcdef0123456789abcdef\n\n"
        );
        let event = message_event(&json_write::to_text(
            &json!({"jsonrpc": "2.0", "id": 1, "result": {"text": "a\nb\r\nc"}}),
        ));
        assert_eq!(
            event,
            "event: message\ndata: {\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"text\":\"a\\nb\\r\\nc\"}}\n\n"
        );
        assert_eq!(event.matches('\n').count(), 3);
    }

    #[test]
    fn the_backlog_closes_a_session_whose_client_stopped_reading() {
        // docs/http.md's figures (Limits).
        assert_eq!((BACKLOG_EVENTS, BACKLOG_BYTES), (64, 4 << 20));
        // A reader that takes each event as it comes never comes near a limit.
        let mut backlog = Backlog::default();
        for _ in 0..10 * BACKLOG_EVENTS {
            backlog = backlog.queued(100).unwrap().taken(100);
        }
        assert_eq!(backlog, Backlog::default());
        // Events: the 64th unread one is held, the 65th is not.
        let mut backlog = Backlog::default();
        for _ in 0..BACKLOG_EVENTS {
            backlog = backlog.queued(1).unwrap();
        }
        assert_eq!(backlog.queued(1), None);
        assert!(backlog.taken(1).queued(1).is_some());
        // Taking one event leaves the others.
        let two = Backlog::default().queued(10).unwrap().queued(20).unwrap();
        assert_eq!(
            two.taken(10),
            Backlog {
                events: 1,
                bytes: 20
            }
        );
        // Bytes: up to the limit exactly, and not one byte more.
        let half = Backlog::default().queued(BACKLOG_BYTES / 2).unwrap();
        let full = half.queued(BACKLOG_BYTES / 2).unwrap();
        assert_eq!(
            full,
            Backlog {
                events: 2,
                bytes: BACKLOG_BYTES
            }
        );
        assert_eq!(half.queued(BACKLOG_BYTES / 2 + 1), None);
        assert_eq!(full.queued(0).map(|b| b.bytes), Some(BACKLOG_BYTES));
        assert_eq!(full.queued(1), None);
        // An empty backlog takes any one event, however large; the next waits for the reader.
        let large = Backlog::default().queued(3 * BACKLOG_BYTES).unwrap();
        assert_eq!(large.queued(1), None);
        assert_eq!(large.taken(3 * BACKLOG_BYTES), Backlog::default());
        assert_eq!(
            Backlog::default().taken(5),
            Backlog::default(),
            "never below empty"
        );
    }

    #[test]
    fn session_ids() {
        let id = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            session_from_query(Some(&format!("sessionId={id}"))).unwrap(),
            id
        );
        assert_eq!(
            session_from_query(Some(&format!("x=1&sessionId={id}"))).unwrap(),
            id
        );
        for bad in [
            None,
            Some(""),
            Some("sessionId="),
            Some("sessionId=ABC"),
            Some("session_id=0123456789abcdef0123456789abcdef"),
        ] {
            assert_eq!(session_from_query(bad).unwrap_err().status, 400, "{bad:?}");
        }
        assert!(!is_session_id("0123456789ABCDEF0123456789abcdef"));
        assert!(!is_session_id("0123456789abcdef0123456789abcde"));
    }
}
