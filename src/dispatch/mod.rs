//! One parsed JSON-RPC body in, one reply out. This file classifies the body (a message, or a
//! 2025-03-26 batch), picks the lane (the 2026-07-28 stateless lane when `_meta` claims it, the
//! 2025-era lane otherwise) and is the only place an `Error` becomes a reply. The lanes'
//! own checks are in `stateless` and `handshake`, the methods both share in `methods`, the routing
//! headers in `headers`. No HTTP parsing (http.rs) and no SQL (store.rs) here.

mod handshake;
pub mod headers;
mod methods;
mod stateless;

use serde_json::Value as Json;

use crate::context::{client_name, Caller, Ctx};
use crate::error::Error;
use crate::json_read::Node;
use crate::json_write;
use crate::jsonrpc::{self, Message};
use crate::protocol::version::{self, Era};
use crate::protocol::{META_CLIENT_INFO, META_PROTOCOL_VERSION};
pub use headers::McpHeaders;

/// Most messages in one 2025-03-26 batch. Each message is at most one D1 round trip, and D1's
/// Free plan allows 50 queries per Worker invocation; the isolate's first request may also
/// spend a few on the schema ledger (`store::ensure_schema`: a read, one batch per missing
/// migration, and one read again after a lost race). A larger batch is refused whole, before
/// any of it runs, rather than failing part-way.
pub const MAX_BATCH: usize = 40;

/// What to send back.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A JSON body (its text, written by `json` or in its manner) with its HTTP status and any
    /// extra headers.
    Json {
        status: u16,
        body: String,
        headers: Vec<(&'static str, String)>,
    },
    /// 202 with no body: notifications and posted responses.
    Accepted,
}

/// A reply plus a diagnostic for the operator's log (never sent to the client).
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatched {
    pub reply: Reply,
    pub diagnostic: Option<String>,
}

impl From<Reply> for Dispatched {
    fn from(reply: Reply) -> Self {
        Dispatched {
            reply,
            diagnostic: None,
        }
    }
}

/// The reply to a refusal or failure: the error's status, code and public message, its detail
/// to the log. Every error reply of the server is built here.
pub fn refuse(error: &Error, id: &Json, era: Option<Era>) -> Dispatched {
    Dispatched {
        reply: Reply::Json {
            status: error.status(era),
            body: json_write::to_text(&error.to_json(id, era)),
            headers: error.headers(),
        },
        diagnostic: error.diagnostic().map(str::to_owned),
    }
}

/// Handles one POSTed body (an object, or a 2025-03-26 batch array).
pub async fn handle(body: &Node<'_>, headers: &McpHeaders, ctx: &Ctx<'_>) -> Dispatched {
    match body {
        Node::Array(items) => handle_batch(items, headers, ctx).await,
        single => handle_one(single, headers, ctx).await,
    }
}

async fn handle_batch(items: &[Node<'_>], headers: &McpHeaders, ctx: &Ctx<'_>) -> Dispatched {
    let invalid = |why: &str| refuse(&Error::InvalidRequest(why.into()), &Json::Null, None);
    if items.is_empty() {
        return invalid("an empty batch");
    }
    if items.len() > MAX_BATCH {
        return invalid(&format!("a batch holds at most {MAX_BATCH} messages"));
    }
    if items
        .iter()
        .any(|m| stateless_claim(m).is_some() || jsonrpc::classify(m).is_err())
    {
        return invalid("a batch must hold only valid 2025-03-26 messages");
    }
    let era = match handshake::era(headers) {
        Ok(era) => era,
        Err(error) => return refuse(&error, &Json::Null, None),
    };
    if !version::allows_batches(era) {
        return invalid("JSON-RPC batches were removed in protocol 2025-06-18");
    }
    let mut responses = Vec::new();
    let mut diagnostic = None;
    for item in items {
        let handled = handle_one(item, headers, ctx).await;
        diagnostic = diagnostic.or(handled.diagnostic);
        if let Reply::Json { body, .. } = handled.reply {
            responses.push(body);
        }
    }
    let reply = if responses.is_empty() {
        Reply::Accepted
    } else {
        Reply::Json {
            status: 200,
            body: format!("[{}]", responses.join(",")),
            headers: Vec::new(),
        }
    };
    Dispatched { reply, diagnostic }
}

/// The `_meta` protocol-version claim of a message, if it makes one.
fn stateless_claim<'a>(message: &'a Node<'a>) -> Option<&'a Node<'a>> {
    message
        .get("params")?
        .get("_meta")?
        .get(META_PROTOCOL_VERSION)
}

async fn handle_one(value: &Node<'_>, headers: &McpHeaders, ctx: &Ctx<'_>) -> Dispatched {
    let message = match jsonrpc::classify(value) {
        Ok(message) => message,
        Err(id) => {
            let error = Error::InvalidRequest("not a JSON-RPC 2.0 request or notification".into());
            return refuse(&error, &id, None);
        }
    };
    let (id, method, params) = match message {
        Message::Response => return Reply::Accepted.into(),
        Message::Notification { method, params } => (None, method, params),
        Message::Request { id, method, params } => (Some(id.to_json()), method, params),
    };
    let id = id.as_ref();
    let stateless = stateless_claim(value).is_some();
    let ctx = Ctx {
        caller: Caller {
            client_info: client_info(params),
            ..ctx.caller.clone()
        },
        ..*ctx
    };
    let (era, result) = if stateless {
        (
            Some(Era::Stateless),
            stateless::serve(id, method, params, headers, &ctx).await,
        )
    } else {
        (
            handshake::era(headers).ok(),
            handshake::serve(id, method, params, headers, &ctx).await,
        )
    };
    match (id, result) {
        (Some(_), Ok(Some(response))) => Reply::Json {
            status: 200,
            body: response,
            headers: Vec::new(),
        }
        .into(),
        (_, Ok(_)) => Reply::Accepted.into(),
        // A tool that ran and failed on storage is its isError result; anything else is refused,
        // and a refused notification gets the status and an error without an id.
        (id, Err(error)) => id
            .zip(era)
            .and_then(|(id, era)| methods::tool_failure(id, &error, era))
            .unwrap_or_else(|| refuse(&error, id.unwrap_or(&Json::Null), era)),
    }
}

/// `name/version` from the 2026-07-28 `_meta` client info, when the message carries it, at
/// most `CLIENT_MAX` characters with no control character (`context::client_name`: it is
/// stored with every change).
fn client_info(params: Option<&Node>) -> Option<String> {
    let info = params?.get("_meta")?.get(META_CLIENT_INFO)?;
    let name = info.get("name")?.as_str()?;
    let full = match info.get("version").and_then(Node::as_str) {
        Some(v) => format!("{name}/{v}"),
        None => name.to_owned(),
    };
    client_name(&full)
}
