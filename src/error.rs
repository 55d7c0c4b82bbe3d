//! Every way the server refuses or fails a request, as one type. Only this file knows JSON-RPC
//! error codes and which HTTP status each refusal travels with, per protocol era; a reply is
//! built from a variant and never picks a code or a status by hand. Internal detail (SQL text,
//! D1 messages) sits in a field that only `diagnostic` reads, for the operator's log: no reply
//! is built from it. How a storage failure is told is here too: one sentence saying whether
//! anything was written and whether asking again is safe (`Error::Storage`): a tool answers it as
//! its `isError` result, resources, prompts and pages as their internal error or 500 page with
//! the same kind of sentence, and D1's own text goes to the log only. No HTTP parsing and no
//! dispatch logic here.

use serde_json::{json, Value as Json};

use crate::jsonrpc;
use crate::protocol::version::{self, Era};
use crate::render::clip;
use crate::store::StoreError;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;
/// Implementation-defined server error: what 2025-era servers send for transport-level
/// refusals (a bad MCP-Protocol-Version header, a wrong method or media type, an Origin).
const SERVER_ERROR: i64 = -32000;
/// The 2024/2025 specs' resource-not-found code (2026-07-28 uses invalid params instead).
const RESOURCE_NOT_FOUND_2025: i64 = -32002;
/// 2026-07-28: an HTTP header disagrees with the body, or a required one is missing.
const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request names a protocol version this server does not serve.
const UNSUPPORTED_VERSION: i64 = -32022;

/// A refusal or failure. Variants carry what the client may see; `Internal` also carries what
/// only the log may see.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The body is not JSON (or not UTF-8, or nested too deep).
    Parse,
    /// Not a JSON-RPC request or notification, or a batch this era does not allow, or a web
    /// form or query that cannot be read; the sentence says which rule.
    InvalidRequest(String),
    /// The body is larger than the limit.
    TooLarge { limit: usize },
    /// The Content-Type is not the one the route reads (`application/json` for MCP, the form
    /// encoding for the web pages' forms).
    UnsupportedMediaType { expected: &'static str },
    /// The route does not serve this HTTP method; the list goes into `Allow`.
    MethodNotAllowed { allow: &'static [&'static str] },
    /// A browser Origin that is neither loopback nor configured; for a web form, any Origin but
    /// the server's own.
    ForbiddenOrigin,
    /// A route without a token in its path, and no accepted `Authorization: Bearer` token.
    Unauthorized,
    /// An OAuth access token that is not accepted (expired, for another resource, its grant
    /// revoked or the token it was made with no longer configured): the sentence says which.
    /// 401 with `error="invalid_token"`, so the client refreshes or authorizes again.
    InvalidToken(&'static str),
    /// More than one `Authorization` header (or one listing several credentials).
    AmbiguousAuthorization,
    /// Too many wrong tokens from the client's address lately; the same answer for every token.
    /// Its `Retry-After` is the rate limit's period (`config::FAILED_CREDENTIALS_PERIOD_SECS`, which
    /// a test holds equal).
    TooManyFailures,
    /// The credential variables are malformed: nothing is served until they are fixed. What is
    /// wrong goes to the log once (`crate::auth::credentials::Misconfigured`), never to a client.
    Misconfigured,
    /// An unknown method, or one this era does not have.
    MethodNotFound(String),
    /// A method's params are missing or malformed (a sentence saying which).
    InvalidParams(String),
    /// 2026-07-28: `params._meta` lacks a required key; answered with HTTP 400.
    BadMeta(String),
    /// 2026-07-28: a routing header is missing or disagrees with the body.
    HeaderMismatch(String),
    /// 2026-07-28: the `_meta` protocol version is not one this server serves.
    UnsupportedVersion { requested: String },
    /// 2025 era: the MCP-Protocol-Version header names a version this server does not serve.
    BadVersionHeader(String),
    /// A resource URI that is not ours, or names a project that does not exist.
    ResourceNotFound { uri: String },
    /// Something inside failed that the client cannot act on. `detail` is for the operator's
    /// log only.
    Internal { detail: String },
    /// Storage failed; a tool's is answered as its `isError` result (dispatch). Boxed: every
    /// handler's `Result` moves an `Error`, and its three fields inline doubled the size of one,
    /// which cost the Worker's bundle half a kilobyte (gzip) of moves.
    Storage(Box<StorageFailure>),
}

/// A storage failure: `failure` and `asked` choose the one sentence the client reads; `detail`
/// is for the operator's log only.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageFailure {
    pub failure: Failure,
    pub asked: Asked,
    pub detail: String,
}

/// What a storage failure leaves behind, as far as the server can know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// D1 failed in passing (a lost connection, a restart, an overload), after its one retry if
    /// it had one: a write may have committed before its answer was lost.
    Passing,
    /// D1 refused the batch, which rolled back whole (a D1 batch is atomic): nothing was written.
    Refused,
    /// The batch answered, but not in the shape its statements promise: a write may have
    /// committed.
    Unreadable,
}

impl From<&StoreError> for Failure {
    fn from(e: &StoreError) -> Self {
        match e {
            StoreError::Transient(_) | StoreError::Overloaded(_) => Failure::Passing,
            StoreError::Backend(_) | StoreError::Revoked | StoreError::TokenRevoked => {
                Failure::Refused
            }
            StoreError::Decode(_) => Failure::Unreadable,
        }
    }
}

/// What the failed request asked of storage, which decides what its failure can have written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// A read outside the tools: a resource, a prompt, a page. Only tools write.
    Read,
    /// A tool, by name, and whether it writes.
    Tool { name: &'static str, writes: bool },
}

impl Error {
    /// The JSON-RPC code. `era` is `None` before a lane is chosen (transport-level refusals).
    pub fn code(&self, era: Option<Era>) -> i64 {
        match self {
            Error::Parse => PARSE_ERROR,
            Error::InvalidRequest(_) | Error::TooLarge { .. } | Error::AmbiguousAuthorization => {
                INVALID_REQUEST
            }
            Error::UnsupportedMediaType { .. }
            | Error::MethodNotAllowed { .. }
            | Error::ForbiddenOrigin
            | Error::Unauthorized
            | Error::InvalidToken(_)
            | Error::TooManyFailures
            | Error::Misconfigured
            | Error::BadVersionHeader(_) => SERVER_ERROR,
            Error::MethodNotFound(_) => METHOD_NOT_FOUND,
            Error::InvalidParams(_) | Error::BadMeta(_) => INVALID_PARAMS,
            Error::HeaderMismatch(_) => HEADER_MISMATCH,
            Error::UnsupportedVersion { .. } => UNSUPPORTED_VERSION,
            Error::ResourceNotFound { .. } => match era {
                Some(era) if version::resource_not_found_is_invalid_params(era) => INVALID_PARAMS,
                _ => RESOURCE_NOT_FOUND_2025,
            },
            Error::Internal { .. } | Error::Storage(_) => INTERNAL_ERROR,
        }
    }

    /// The HTTP status the error travels with on Streamable HTTP.
    pub fn status(&self, era: Option<Era>) -> u16 {
        match self {
            Error::Parse
            | Error::InvalidRequest(_)
            | Error::BadMeta(_)
            | Error::HeaderMismatch(_)
            | Error::UnsupportedVersion { .. }
            | Error::BadVersionHeader(_)
            | Error::AmbiguousAuthorization => 400,
            Error::Unauthorized | Error::InvalidToken(_) => 401,
            Error::TooManyFailures => 429,
            Error::Misconfigured => 503,
            Error::TooLarge { .. } => 413,
            Error::UnsupportedMediaType { .. } => 415,
            Error::MethodNotAllowed { .. } => 405,
            Error::ForbiddenOrigin => 403,
            Error::MethodNotFound(_) => match era {
                Some(era) if version::method_not_found_is_404(era) => 404,
                _ => 200,
            },
            Error::InvalidParams(_)
            | Error::ResourceNotFound { .. }
            | Error::Internal { .. }
            | Error::Storage(_) => 200,
        }
    }

    /// The message a client reads. Never holds internal detail.
    pub fn message(&self) -> String {
        match self {
            Error::Parse => "Parse error: the body is not JSON".into(),
            Error::InvalidRequest(why) => format!("Invalid Request: {why}"),
            Error::TooLarge { limit } => format!("Request too large: the limit is {limit} bytes"),
            Error::UnsupportedMediaType { expected } => {
                format!("Unsupported Media Type: Content-Type must be {expected}")
            }
            Error::MethodNotAllowed { allow } => format!(
                "Method Not Allowed: this endpoint takes {} only",
                allow.join(", ")
            ),
            Error::ForbiddenOrigin => "Forbidden: Origin not allowed".into(),

            Error::Unauthorized => "Unauthorized: send the header Authorization: Bearer <token>, \
                 or put the token in the path (/<token>/mcp)"
                .into(),
            Error::InvalidToken(why) => format!("Unauthorized: {why}"),
            Error::AmbiguousAuthorization => {
                "Bad Request: send one Authorization header, holding one Bearer token".into()
            }
            Error::TooManyFailures => {
                "Too Many Requests: too many wrong tokens from this address; try again in a minute"
                    .into()
            }
            Error::Misconfigured => {
                "Service Unavailable: the server is misconfigured; its operator can read which setting at /healthz"
                    .into()
            }
            Error::MethodNotFound(method) => {
                format!("Method not found: {}", clip(method, 64))
            }
            Error::InvalidParams(sentence)
            | Error::BadMeta(sentence)
            | Error::HeaderMismatch(sentence)
            | Error::BadVersionHeader(sentence) => sentence.clone(),
            Error::UnsupportedVersion { .. } => "Unsupported protocol version".into(),
            Error::ResourceNotFound { uri } => format!(
                "Resource not found: {}; resources/list names each project's state",
                clip(uri, 200)
            ),
            Error::Internal { .. } => {
                "Internal error: the database did not complete the request; try again".into()
            }
            Error::Storage(s) => told(s.failure, s.asked),
        }
    }

    /// The error of a tool's run, told as that tool's: a storage failure names the tool and
    /// says what a tool of its kind can have written; the log's detail names it too. A handler
    /// fails only on storage, so any other error passes as it was.
    pub fn in_tool(self, name: &'static str, writes: bool) -> Error {
        match self {
            Error::Storage(mut s) => {
                s.asked = Asked::Tool { name, writes };
                s.detail = format!("{name}: {}", s.detail);
                Error::Storage(s)
            }
            other => other,
        }
    }

    /// The sentence of a tool that ran and failed on storage, which dispatch answers as the
    /// tool's `isError` result (the model can act on it); `None` for every other error.
    pub fn tool_failure(&self) -> Option<String> {
        match self {
            Error::Storage(s) if s.asked != Asked::Read => Some(self.message()),
            _ => None,
        }
    }

    /// The error's `data` member, if it has one.
    pub fn data(&self) -> Option<Json> {
        match self {
            Error::UnsupportedVersion { requested } => Some(json!({
                "supported": version::SUPPORTED_STATELESS,
                "requested": requested,
            })),
            Error::ResourceNotFound { uri } => Some(json!({ "uri": uri })),
            _ => None,
        }
    }

    /// The status of the error as a web page, where no JSON-RPC body carries it: a refusal keeps
    /// its HTTP status, and what JSON-RPC sends in a 200 is a 400 (the request) or a 500 (storage).
    pub fn page_status(&self) -> u16 {
        match self {
            Error::Internal { .. } | Error::Storage(_) => 500,
            other => match other.status(None) {
                200 => 400,
                status => status,
            },
        }
    }

    /// HTTP headers the refusal needs besides the content type.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        match self {
            Error::MethodNotAllowed { allow } => vec![("allow", allow.join(", "))],
            // The bare scheme; with OAuth on, `route` adds the `resource_metadata` that sends a
            // client to the authorization server (never without it: a client that finds one
            // starts a flow).
            Error::Unauthorized => vec![("www-authenticate", "Bearer".into())],
            Error::InvalidToken(why) => vec![(
                "www-authenticate",
                format!("Bearer error=\"invalid_token\", error_description=\"{why}\""),
            )],
            Error::TooManyFailures => vec![("retry-after", "60".into())],
            _ => Vec::new(),
        }
    }

    /// What the operator's log gets: the internal detail, and nothing for refusals.
    pub fn diagnostic(&self) -> Option<&str> {
        match self {
            Error::Internal { detail } => Some(detail),
            Error::Storage(s) => Some(&s.detail),
            _ => None,
        }
    }

    /// The JSON-RPC error response, echoing `id` (null when none could be read).
    pub fn to_json(&self, id: &Json, era: Option<Era>) -> Json {
        jsonrpc::error(id, self.code(era), self.message(), self.data())
    }
}

/// A store failure, as a read's until `in_tool` says which tool ran: only tools write. A batch
/// refused because the request's OAuth grant was revoked is not a storage failure: the
/// credential is refused.
impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Revoked => {
                return Error::InvalidToken("this grant was revoked; authorize again")
            }
            StoreError::TokenRevoked => {
                return Error::InvalidToken(
                    "this project token was revoked, or its project deleted; ask the project's owner for a new one",
                )
            }
            _ => {}
        }
        Error::Storage(Box::new(StorageFailure {
            failure: Failure::from(&e),
            asked: Asked::Read,
            detail: e.to_string(),
        }))
    }
}

/// The one sentence a storage failure is told in: whether anything was written, and whether
/// asking again is safe. A read writes nothing whatever happened; a write refused wrote nothing
/// (the batch rolled back whole); a write that failed in passing, or whose answer could not be
/// read, may have committed (the model is told it failed while saving either way), and is safe
/// to send again because every write is recorded once (store/retry.rs says why).
fn told(failure: Failure, asked: Asked) -> String {
    let again = match asked {
        Asked::Read => "asking again".to_owned(),
        Asked::Tool { name, .. } => format!("calling {name} again"),
    };
    match (asked, failure) {
        (Asked::Tool { writes: true, .. }, Failure::Refused) => format!(
            "The database refused the change; nothing was written, and {again} is safe but may \
             be refused the same way."
        ),
        (Asked::Tool { writes: true, .. }, _) => format!(
            "The database failed while saving; the change may or may not have been saved, and \
             {again} with the same arguments is safe: it is recorded once."
        ),
        (_, Failure::Passing) => format!(
            "The database could not be read just now; nothing was written, and {again} is safe."
        ),
        (_, _) => format!(
            "The database could not be read; nothing was written, and {again} is safe but may \
             fail the same way."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One of every variant: the walk below must name each, so a new variant fails to compile
    /// here until its code, status and message are pinned.
    fn every_variant() -> Vec<Error> {
        let all = vec![
            Error::Parse,
            Error::InvalidRequest("why".into()),
            Error::TooLarge { limit: 10 },
            Error::UnsupportedMediaType {
                expected: "application/json",
            },
            Error::MethodNotAllowed { allow: &["POST"] },
            Error::ForbiddenOrigin,
            Error::Unauthorized,
            Error::InvalidToken("expired"),
            Error::AmbiguousAuthorization,
            Error::TooManyFailures,
            Error::Misconfigured,
            Error::MethodNotFound("x/y".into()),
            Error::InvalidParams("bad".into()),
            Error::BadMeta("meta".into()),
            Error::HeaderMismatch("hdr".into()),
            Error::UnsupportedVersion {
                requested: "v9".into(),
            },
            Error::BadVersionHeader("ver".into()),
            Error::ResourceNotFound {
                uri: "u://x".into(),
            },
            Error::Internal {
                detail: "D1_ERROR: SELECT secret".into(),
            },
            Error::Storage(Box::new(StorageFailure {
                failure: Failure::Refused,
                asked: Asked::Read,
                detail: "D1_ERROR: SELECT secret".into(),
            })),
        ];
        for e in &all {
            // Exhaustive: adding a variant without listing it above is a compile error here.
            match e {
                Error::Parse
                | Error::InvalidRequest(_)
                | Error::TooLarge { .. }
                | Error::UnsupportedMediaType { .. }
                | Error::MethodNotAllowed { .. }
                | Error::ForbiddenOrigin
                | Error::Unauthorized
                | Error::InvalidToken(_)
                | Error::AmbiguousAuthorization
                | Error::TooManyFailures
                | Error::Misconfigured
                | Error::MethodNotFound(_)
                | Error::InvalidParams(_)
                | Error::BadMeta(_)
                | Error::HeaderMismatch(_)
                | Error::UnsupportedVersion { .. }
                | Error::BadVersionHeader(_)
                | Error::ResourceNotFound { .. }
                | Error::Internal { .. }
                | Error::Storage(_) => {}
            }
        }
        all
    }

    #[test]
    fn every_variant_has_its_code_status_and_public_message() {
        let stateless = Some(Era::Stateless);
        let handshake = Some(Era::Handshake("2025-11-25"));
        let expected: Vec<(i64, u16, u16, i64, u16)> = vec![
            // (code stateless, status stateless, status handshake, code handshake, status as a web page)
            (-32700, 400, 400, -32700, 400),
            (-32600, 400, 400, -32600, 400),
            (-32600, 413, 413, -32600, 413),
            (-32000, 415, 415, -32000, 415),
            (-32000, 405, 405, -32000, 405),
            (-32000, 403, 403, -32000, 403),
            (-32000, 401, 401, -32000, 401),
            (-32000, 401, 401, -32000, 401),
            (-32600, 400, 400, -32600, 400),
            (-32000, 429, 429, -32000, 429),
            (-32000, 503, 503, -32000, 503),
            (-32601, 404, 200, -32601, 400),
            (-32602, 200, 200, -32602, 400),
            (-32602, 400, 400, -32602, 400),
            (-32020, 400, 400, -32020, 400),
            (-32022, 400, 400, -32022, 400),
            (-32000, 400, 400, -32000, 400),
            (-32602, 200, 200, -32002, 400),
            (-32603, 200, 200, -32603, 500),
            (-32603, 200, 200, -32603, 500),
        ];
        let all = every_variant();
        assert_eq!(all.len(), expected.len());
        for (e, (code, status, handshake_status, handshake_code, page)) in all.iter().zip(expected)
        {
            assert_eq!(e.page_status(), page, "{e:?}");
            assert_eq!(e.code(stateless), code, "{e:?}");
            assert_eq!(e.status(stateless), status, "{e:?}");
            assert_eq!(e.status(handshake), handshake_status, "{e:?}");
            assert_eq!(e.code(handshake), handshake_code, "{e:?}");
            let body = e.to_json(&json!(7), stateless).to_string();
            assert!(
                !body.contains("secret") && !body.contains("D1_ERROR"),
                "{body}"
            );
            assert!(!e.message().is_empty());
            assert_eq!(
                e.diagnostic().is_some(),
                matches!(e, Error::Internal { .. } | Error::Storage(_))
            );
        }
    }

    /// Every storage failure, told for each kind of request: what was written and whether asking
    /// again is safe, in one sentence, and nothing of the detail.
    #[test]
    fn a_storage_failure_is_told_in_one_honest_sentence() {
        let read = "get_state";
        let write = "set_focus";
        let cases = [
            (Failure::Passing, Asked::Read, "The database could not be read just now; nothing was written, and asking again is safe."),
            (Failure::Refused, Asked::Read, "The database could not be read; nothing was written, and asking again is safe but may fail the same way."),
            (Failure::Unreadable, Asked::Read, "The database could not be read; nothing was written, and asking again is safe but may fail the same way."),
            (Failure::Passing, Asked::Tool { name: read, writes: false }, "The database could not be read just now; nothing was written, and calling get_state again is safe."),
            (Failure::Refused, Asked::Tool { name: read, writes: false }, "The database could not be read; nothing was written, and calling get_state again is safe but may fail the same way."),
            (Failure::Unreadable, Asked::Tool { name: read, writes: false }, "The database could not be read; nothing was written, and calling get_state again is safe but may fail the same way."),
            (Failure::Passing, Asked::Tool { name: write, writes: true }, "The database failed while saving; the change may or may not have been saved, and calling set_focus again with the same arguments is safe: it is recorded once."),
            (Failure::Refused, Asked::Tool { name: write, writes: true }, "The database refused the change; nothing was written, and calling set_focus again is safe but may be refused the same way."),
            (Failure::Unreadable, Asked::Tool { name: write, writes: true }, "The database failed while saving; the change may or may not have been saved, and calling set_focus again with the same arguments is safe: it is recorded once."),
        ];
        for (failure, asked, sentence) in cases {
            let e = Error::Storage(Box::new(StorageFailure {
                failure,
                asked,
                detail: "D1_ERROR: Network connection lost.".into(),
            }));
            assert_eq!(e.message(), sentence);
            assert_eq!(e.tool_failure().is_some(), asked != Asked::Read);
            assert_eq!(e.diagnostic(), Some("D1_ERROR: Network connection lost."));
        }
    }

    /// A store error becomes a read's failure of its class; `in_tool` makes it the tool's and
    /// names the tool in the log, and leaves every other error as it was.
    #[test]
    fn a_store_error_is_told_as_the_tool_that_met_it() {
        let classes = [
            (StoreError::Transient("lost".into()), Failure::Passing),
            (StoreError::Overloaded("busy".into()), Failure::Passing),
            (StoreError::Backend("refused".into()), Failure::Refused),
            (StoreError::Decode("shape"), Failure::Unreadable),
        ];
        assert_eq!(
            Error::from(StoreError::Revoked),
            Error::InvalidToken("this grant was revoked; authorize again")
        );
        for (store, failure) in classes {
            let detail = store.to_string();
            let e = Error::from(store);
            assert_eq!(
                e,
                Error::Storage(Box::new(StorageFailure {
                    failure,
                    asked: Asked::Read,
                    detail: detail.clone()
                }))
            );
            assert_eq!(e.tool_failure(), None);
            let asked = Asked::Tool {
                name: "add_task",
                writes: true,
            };
            let e = e.in_tool("add_task", true);
            assert_eq!(
                e,
                Error::Storage(Box::new(StorageFailure {
                    failure,
                    asked,
                    detail: format!("add_task: {detail}")
                }))
            );
            assert_eq!(e.tool_failure(), Some(told(failure, asked)));
        }
        // A handler's errors are storage failures; any other error passes as it was.
        for other in [
            Error::InvalidParams("bad".into()),
            Error::Internal {
                detail: "no history".into(),
            },
        ] {
            assert_eq!(other.clone().in_tool("get_state", false), other);
            assert_eq!(other.tool_failure(), None);
        }
    }

    #[test]
    fn the_reply_shape() {
        let e = Error::UnsupportedVersion {
            requested: "2027-01-01".into(),
        };
        assert_eq!(
            e.to_json(&json!(4), Some(Era::Stateless)),
            json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": [version::STATELESS], "requested": "2027-01-01"}}})
        );
        assert_eq!(
            Error::MethodNotAllowed {
                allow: &["GET", "POST"]
            }
            .headers(),
            [("allow", "GET, POST".to_string())]
        );
        assert_eq!(
            Error::Unauthorized.headers(),
            [("www-authenticate", "Bearer".to_string())]
        );
        assert_eq!(
            Error::TooManyFailures.headers(),
            [("retry-after", "60".to_string())]
        );
        assert_eq!(
            Error::TooManyFailures.to_json(&Json::Null, None),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
                "message": "Too Many Requests: too many wrong tokens from this address; try again in a minute"}})
        );
        assert_eq!(
            Error::Misconfigured.to_json(&Json::Null, None),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
                "message": "Service Unavailable: the server is misconfigured; its operator can read which setting at /healthz"}})
        );
    }
}
