//! The HTTP rules of every MCP route, as pure functions. `plan` reads a request's method, path
//! and headers and says what to do: answer now, or read the body and serve it as Streamable
//! HTTP, or open or feed an SSE session. The shell carries the plan out and decides nothing.
//!
//! One set of rules for both transports: the Origin check (403), the method (405 with `Allow`),
//! `Content-Type: application/json` (415), the 1 MiB limit (413, announced or actual), and JSON
//! (−32700), each answered with the same JSON-RPC error body. Where they must differ, and why:
//! - `/sse/message` answers `202` at once and sends the JSON-RPC reply on the session's stream,
//!   because that is what the 2024-11-05 transport is;
//! - only `/sse/message` names a session, so only it can answer 400 for a missing or malformed
//!   `sessionId` and 404 for a session that is not open;
//! - `GET /sse` opens a stream, where `GET /mcp` is 405 (this server offers no GET stream).
//!
//! No `worker::*` here.

use serde_json::Value as Json;

use crate::config::Config;
use crate::context::Ctx;
use crate::dispatch::{self, Handled, McpHeaders, Reply};
use crate::error::Error;
use crate::sse;
use crate::web;

/// Largest accepted POST body. Every tool argument fits many times over.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Request headers, names lower-cased.
#[derive(Debug, Default, Clone)]
pub struct Headers(Vec<(String, String)>);

impl Headers {
    pub fn new<K: AsRef<str>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Headers(
            pairs
                .into_iter()
                .map(|(k, v)| (k.as_ref().to_ascii_lowercase(), v.into()))
                .collect(),
        )
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the shell knows of a request before reading its body.
pub struct Request<'a> {
    pub method: &'a str,
    pub path: &'a str,
    /// The query string, without `?`.
    pub query: Option<&'a str>,
    pub headers: &'a Headers,
    /// This server's own origin as the request URL names it (`https://host[:port]`): the
    /// `Origin` a page of ours posts its forms with.
    pub own_origin: &'a str,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    /// For the operator's log only; never sent.
    pub diagnostic: Option<String>,
}

impl Response {
    pub fn text(status: u16, body: &str) -> Response {
        Response {
            status,
            headers: vec![("content-type", "text/plain; charset=utf-8".into())],
            body: body.into(),
            diagnostic: None,
        }
    }

    pub fn json(status: u16, body: &Json) -> Response {
        Response {
            status,
            headers: vec![("content-type", "application/json".into())],
            body: body.to_string(),
            diagnostic: None,
        }
    }

    /// The bare 404 for every path that is not ours, whatever the reason.
    pub fn not_found() -> Response {
        Response::text(404, "Not Found")
    }

    /// A refusal before any JSON-RPC message was read: its JSON-RPC error with a null id.
    pub fn refusal(error: &Error) -> Response {
        from_handled(dispatch::refuse(error, &Json::Null, None))
    }
}

/// What the shell must do with a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Send this response; nothing else happens.
    Respond(Response),
    /// Read the body (the announced length is within the limit) and pass it to `serve_mcp`.
    Mcp,
    /// Open an SSE stream whose `endpoint` event names this path with a fresh session id
    /// appended (`sse::endpoint_path`).
    OpenSse { endpoint_prefix: String },
    /// Read the body and hand it, with `forwarded_headers`, to this session's stream holder,
    /// which checks it with `parse_body` and answers with `sse::respond`.
    SseMessage { session: String },
    /// A web page or form: read the body if `reads_body` says so (the announced length is
    /// within the limit), then hand it to `web::serve`.
    Web(web::Action),
}

/// Where a path goes. Only `plan` acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Healthz,
    Mcp,
    Sse,
    SseMessage,
    /// The human view's pages and forms; `web::plan` routes within them.
    Web,
    NotFound,
}

/// Routes a path. MCP paths start with the token; a wrong, missing or partial token, or no
/// configured token at all, is `NotFound`, indistinguishable from any unknown path.
pub fn route(path: &str, config: &Config) -> Route {
    if path == "/healthz" {
        return Route::Healthz;
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Route::NotFound;
    };
    let (segment, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let Some(token) = &config.token else {
        return Route::NotFound;
    };
    if !constant_time_eq(segment.as_bytes(), token.as_bytes()) {
        return Route::NotFound;
    }
    match tail {
        "mcp" => Route::Mcp,
        "sse" => Route::Sse,
        "sse/message" => Route::SseMessage,
        // `/<token>/` is the list; `/<token>` alone is nothing.
        _ if rest.contains('/') && web::is_web_path(tail) => Route::Web,
        _ => Route::NotFound,
    }
}

/// The plan for a request: every rule that needs no body is applied here.
pub fn plan(req: &Request<'_>, config: &Config) -> Plan {
    let route = route(req.path, config);
    let allow: &'static [&'static str] = match route {
        Route::Healthz => return Plan::Respond(Response::text(200, "ok")),
        Route::NotFound => return Plan::Respond(Response::not_found()),
        Route::Web => return web::plan(req),
        Route::Mcp | Route::SseMessage => &["POST"],
        Route::Sse => &["GET", "POST"],
    };
    if !origin_allowed(req.headers.get("origin"), config) {
        return Plan::Respond(Response::refusal(&Error::ForbiddenOrigin));
    }
    if !allow.contains(&req.method) {
        return Plan::Respond(Response::refusal(&Error::MethodNotAllowed { allow }));
    }
    if route == Route::Sse && req.method == "GET" {
        let token = config.token.as_deref().unwrap_or_default();
        return Plan::OpenSse {
            endpoint_prefix: sse::endpoint_prefix(token),
        };
    }
    if let Some(refusal) = body_headers_refusal(req.headers, "application/json") {
        return Plan::Respond(Response::refusal(&refusal));
    }
    match route {
        Route::SseMessage => match sse::session_from_query(req.query) {
            Ok(session) => Plan::SseMessage {
                session: session.to_owned(),
            },
            Err(refusal) => Plan::Respond(refusal),
        },
        // POST /sse is Streamable HTTP, so an old /sse URL works whichever transport a client picks.
        _ => Plan::Mcp,
    }
}

/// The Content-Type must be `expected` (parameters aside), and an announced length must be
/// within the limit, so an oversize body is refused before it is buffered. MCP bodies are JSON;
/// the web pages' forms are form-encoded.
pub fn body_headers_refusal(headers: &Headers, expected: &'static str) -> Option<Error> {
    let content_type = headers.get("content-type").unwrap_or_default();
    if !content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .eq_ignore_ascii_case(expected)
    {
        return Some(Error::UnsupportedMediaType { expected });
    }
    let announced = headers
        .get("content-length")
        .and_then(|n| n.trim().parse::<usize>().ok());
    announced
        .is_some_and(|n| n > MAX_BODY_BYTES)
        .then_some(Error::TooLarge {
            limit: MAX_BODY_BYTES,
        })
}

/// Compares in time that depends only on the token's length, not on where a guess goes wrong.
pub fn constant_time_eq(given: &[u8], secret: &[u8]) -> bool {
    let mut diff = u8::from(given.len() != secret.len());
    for (i, s) in secret.iter().enumerate() {
        diff |= s ^ given.get(i).copied().unwrap_or(!s);
    }
    diff == 0
}

/// Origin rule (DNS-rebinding defence): no Origin passes (non-browser clients); loopback
/// origins pass (wrangler dev); anything else must be in ALLOWED_ORIGINS.
pub fn origin_allowed(origin: Option<&str>, config: &Config) -> bool {
    let Some(origin) = origin else {
        return true;
    };
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    if config.allowed_origins.contains(&origin) {
        return true;
    }
    let Some(host_port) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false; // "null", other schemes, garbage
    };
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split_once(']').map(|(h, _)| h)
    } else {
        Some(host_port.split(':').next().unwrap_or_default())
    };
    matches!(host, Some("localhost" | "127.0.0.1" | "::1"))
}

/// The body rules both transports share: the size limit (413) and JSON (−32700).
pub fn parse_body(body: &[u8]) -> Result<Json, Response> {
    if body.len() > MAX_BODY_BYTES {
        return Err(Response::refusal(&Error::TooLarge {
            limit: MAX_BODY_BYTES,
        }));
    }
    serde_json::from_slice(body).map_err(|_| Response::refusal(&Error::Parse))
}

/// Every request header the core reads after planning, so the SSE path forwards exactly these
/// to the session's object: the MCP routing headers and the `User-Agent` (attribution).
pub fn forwarded_headers(headers: &Headers) -> Vec<(&'static str, &str)> {
    dispatch::headers::NAMES
        .iter()
        .chain(&["user-agent"])
        .filter_map(|&name| headers.get(name).map(|v| (name, v)))
        .collect()
}

/// The routing headers dispatch reads.
pub fn mcp_headers(headers: &Headers) -> McpHeaders {
    McpHeaders::read(|name| headers.get(name))
}

/// Serves a planned `/mcp` body: stateless Streamable HTTP for both eras.
pub async fn serve_mcp(headers: &Headers, body: &[u8], ctx: &Ctx<'_>) -> Response {
    let body = match parse_body(body) {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    from_handled(dispatch::handle(&body, &mcp_headers(headers), ctx).await)
}

pub fn from_handled(handled: Handled) -> Response {
    let mut response = match handled.reply {
        Reply::Accepted => Response {
            status: 202,
            headers: Vec::new(),
            body: String::new(),
            diagnostic: None,
        },
        Reply::Json {
            status,
            body,
            headers,
        } => {
            let mut response = Response::json(status, &body);
            response.headers.extend(headers);
            response
        }
    };
    response.diagnostic = handled.diagnostic;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config {
            token: Some("tok-123".into()),
            allowed_origins: vec!["https://app.example".into()],
            ..Config::default()
        }
    }

    #[test]
    fn routes_need_the_exact_token() {
        let c = config();
        assert_eq!(route("/tok-123/mcp", &c), Route::Mcp);
        assert_eq!(route("/tok-123/sse", &c), Route::Sse);
        assert_eq!(route("/tok-123/sse/message", &c), Route::SseMessage);
        assert_eq!(route("/healthz", &c), Route::Healthz);
        for page in [
            "/tok-123/",
            "/tok-123/projects/p",
            "/tok-123/projects/p/set_focus",
        ] {
            assert_eq!(route(page, &c), Route::Web, "{page}");
        }
        for path in [
            "/tok-12/",
            "/tok-12/projects/p",
            "/tok-123/projectsx",
            "/tok-123/projects",
            "/tok-12/mcp",
            "/tok-1234/mcp",
            "/mcp",
            "/",
            "",
            "//mcp",
            "/tok-123/mcp/",
            "/TOK-123/mcp",
            "/tok-123",
        ] {
            assert_eq!(route(path, &c), Route::NotFound, "{path}");
        }
        assert_eq!(route("/tok-123/mcp", &Config::default()), Route::NotFound);
    }

    fn plan_of(method: &str, path: &str, headers: &[(&str, &str)]) -> Plan {
        let headers = Headers::new(headers.iter().copied());
        let req = Request {
            method,
            path,
            query: Some("sessionId=0123456789abcdef0123456789abcdef"),
            headers: &headers,
            own_origin: "https://mcp.example",
        };
        plan(&req, &config())
    }

    fn status(plan: Plan) -> u16 {
        match plan {
            Plan::Respond(r) => r.status,
            other => panic!("expected a response, got {other:?}"),
        }
    }

    #[test]
    fn one_set_of_rules_for_both_transports() {
        let json = [("content-type", "application/json")];
        for path in ["/tok-123/mcp", "/tok-123/sse/message"] {
            assert_eq!(status(plan_of("GET", path, &json)), 405, "{path}");
            assert_eq!(status(plan_of("POST", path, &[])), 415, "{path}");
            let evil = [
                ("content-type", "application/json"),
                ("origin", "https://evil.example"),
            ];
            assert_eq!(status(plan_of("POST", path, &evil)), 403, "{path}");
            let big = [
                ("content-type", "application/json"),
                ("content-length", "1048577"),
            ];
            assert_eq!(status(plan_of("POST", path, &big)), 413, "{path}");
        }
        assert_eq!(plan_of("POST", "/tok-123/mcp", &json), Plan::Mcp);
        assert_eq!(plan_of("POST", "/tok-123/sse", &json), Plan::Mcp);
        assert_eq!(
            plan_of("POST", "/tok-123/sse/message", &json),
            Plan::SseMessage {
                session: "0123456789abcdef0123456789abcdef".into()
            }
        );
        assert_eq!(
            plan_of("GET", "/tok-123/sse", &[]),
            Plan::OpenSse {
                endpoint_prefix: "/tok-123/sse/message?sessionId=".into()
            }
        );
        assert_eq!(status(plan_of("GET", "/nope/mcp", &[])), 404);
        for garbage in [&b"{"[..], b"not json"] {
            assert_eq!(parse_body(garbage).unwrap_err().status, 400);
        }
        assert_eq!(
            parse_body(&vec![b' '; MAX_BODY_BYTES + 1])
                .unwrap_err()
                .status,
            413
        );
    }

    #[test]
    fn constant_time_compare() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"ab", b"abc"));
        assert!(!constant_time_eq(b"abcd", b"abc"));
        assert!(!constant_time_eq(b"", b"abc"));
        assert!(!constant_time_eq(b"abd", b"abc"));
    }

    #[test]
    fn origins() {
        let c = config();
        assert!(origin_allowed(None, &c));
        assert!(origin_allowed(Some("http://localhost:8787"), &c));
        assert!(origin_allowed(Some("http://127.0.0.1"), &c));
        assert!(origin_allowed(Some("http://[::1]:3000"), &c));
        assert!(origin_allowed(Some("https://APP.example/"), &c));
        assert!(!origin_allowed(Some("https://evil.example"), &c));
        assert!(!origin_allowed(Some("http://localhost.evil.example"), &c));
        assert!(!origin_allowed(Some("null"), &c));
        assert!(!origin_allowed(Some("file://x"), &c));
    }
}
