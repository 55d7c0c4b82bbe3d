//! The HTTP rules of every MCP route, as pure functions. `plan` reads a request's method, path
//! and headers and says what to do: answer now, or read the body and serve it as Streamable
//! HTTP, or open or feed an SSE session, with the scope the credential grants. The shell
//! carries the plan out and decides nothing.
//!
//! Credentials first: a misconfigured credential table answers everything but /healthz with
//! 503; a token path (`/<token>/mcp`) is decided by its token alone (a wrong one is the bare
//! 404, and an `Authorization` header is ignored there); a path without a token (`/mcp`) needs
//! `Authorization: Bearer <token>` (401 with `WWW-Authenticate: Bearer` otherwise). A token
//! that was presented and is wrong is counted against the client's address, and past the limit
//! the answer is 429 (`Plan::Denied`, `too_many_failures`); an accepted one is never counted.
//!
//! One set of rules for both transports: the Origin check (403), the method (405 with `Allow`),
//! `Content-Type: application/json` (415), the 1 MiB limit (413, announced or not: the shell
//! reads no more than `READ_CAP`), and JSON (−32700), each answered with the same JSON-RPC
//! error body. Where they must differ, and why:
//! - `/sse/message` answers `202` at once and sends the JSON-RPC reply on the session's stream,
//!   because that is what the 2024-11-05 transport is;
//! - only `/sse/message` names a session, so only it can answer 400 for a missing or malformed
//!   `sessionId` and 404 for a session that is not open;
//! - `GET /sse` opens a stream, where `GET /mcp` is 405 (this server offers no GET stream).
//!
//! No `worker::*` here.

use serde_json::Value as Json;

use crate::config::{Config, Credentials};
use crate::context::Ctx;
use crate::dispatch::{self, Handled, McpHeaders, Reply};
use crate::error::Error;
use crate::node::Node;
use crate::scope::Scope;
use crate::sse;
use crate::web;

/// Largest accepted POST body. Every tool argument fits many times over. It holds whether or
/// not the length is announced: the shell reads at most one byte past it (`READ_CAP`), so a body
/// sent without a Content-Length is refused as soon as it passes the limit, never read whole.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// How much of a body the shell reads at most: one byte past the limit is enough for the rules
/// below (`too_large`) to refuse it, and no more need ever be held.
pub const READ_CAP: usize = MAX_BODY_BYTES + 1;
/// How much more of a body cut short the shell reads and drops after answering 413: a client
/// still sending a body the server stopped reading can lose the answer when the connection is
/// closed under it, so the rest of a body within this is let in (and forgotten) first. A body
/// that goes on past it is cut off.
pub const DISCARD_CAP: usize = 8 * MAX_BODY_BYTES;
/// The request header that holds the client's address: Cloudflare sets it on every request
/// (wrangler dev sets it to the loopback address), overwriting what a client sent.
pub const CLIENT_ADDRESS_HEADER: &str = "cf-connecting-ip";

/// Every request header the core reads, lower-cased. The Worker fetches these by name (one
/// `Headers.get` each, in JavaScript, all handed over as one string): iterating a request's
/// headers makes the runtime copy every one of them into new strings and arrays
/// (docs/benchmarks-history.md has the profile).
pub const READ_HEADERS: [&str; 8] = [
    "authorization",
    "content-length",
    "content-type",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "origin",
    "user-agent",
];

/// Request headers, names lower-cased, one entry per name, only the names in `READ_HEADERS`.
/// A name given twice holds both values joined with ", ", as the Fetch `Headers` the Worker
/// reads them from delivers it, so tests that build headers by hand see what the Worker sees:
/// a read of a header missing from the list finds nothing in the tests either.
#[derive(Debug, Default, Clone)]
pub struct Headers(Vec<(&'static str, String)>);

impl Headers {
    pub fn new<K: AsRef<str>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let mut headers: Vec<(&'static str, String)> = Vec::new();
        for (name, value) in pairs {
            let Some(&name) = READ_HEADERS
                .iter()
                .find(|read| read.eq_ignore_ascii_case(name.as_ref()))
            else {
                continue;
            };
            let value = value.into();
            match headers.iter_mut().find(|(k, _)| *k == name) {
                Some((_, joined)) => {
                    joined.push_str(", ");
                    joined.push_str(&value);
                }
                None => headers.push((name, value)),
            }
        }
        Headers(headers)
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

    /// A JSON reply, its body already JSON text (as `dispatch::Reply` holds it).
    pub fn json(status: u16, body: String) -> Response {
        Response {
            status,
            headers: vec![("content-type", "application/json".into())],
            body,
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

/// What the shell must do with a request. Every plan that serves MCP carries the scope of the
/// request's credential, which the shell puts into the request context.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Send this response; nothing else happens.
    Respond(Response),
    /// Read the body (the announced length is within the limit) and pass it to `serve_mcp`.
    Mcp { scope: Scope },
    /// Open an SSE stream whose `endpoint` event names this path with a fresh session id
    /// appended (`sse::endpoint_path`). The session serves this scope only.
    OpenSse {
        endpoint_prefix: String,
        scope: Scope,
    },
    /// Read the body and hand it, with `forwarded_headers` and the scope, to this session's
    /// stream holder, which checks it with `parse_body` and answers with `sse::respond`.
    SseMessage { session: String, scope: Scope },
    /// A web page or form: read the body if `reads_body` says so (the announced length is
    /// within the limit), then hand it to `web::serve` with this scope.
    Web { action: web::Action, scope: Scope },
    /// A credential was presented and matches none (a wrong path token, a wrong bearer token):
    /// count the failure against the client's address (`failure_key`), then answer this
    /// response, or past the limit `too_many_failures`. Nothing else is read; a request that
    /// fails in any other way, or whose credential is accepted, is never counted.
    Denied(Response),
}

/// Where a path goes. Only `plan` acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Healthz,
    Mcp,
    Sse,
    SseMessage,
    /// The human view's pages and forms, under a path token only; `web::plan` routes within.
    Web,
    NotFound,
}

/// Routes a path, and says where its credential must be: the token segment of `/<token>/mcp`
/// (not yet checked), or `None` for `/mcp`, whose credential is the Authorization header.
pub fn route(path: &str) -> (Route, Option<&str>) {
    let route_of = |tail: &str| match tail {
        "mcp" => Route::Mcp,
        "sse" => Route::Sse,
        "sse/message" => Route::SseMessage,
        _ => Route::NotFound,
    };
    if path == "/healthz" {
        return (Route::Healthz, None);
    }
    let Some(rest) = path.strip_prefix('/') else {
        return (Route::NotFound, None);
    };
    match route_of(rest) {
        Route::NotFound => {}
        header_route => return (header_route, None),
    }
    match rest.split_once('/') {
        Some((segment, tail)) if route_of(tail) != Route::NotFound => {
            (route_of(tail), Some(segment))
        }
        // `/<token>/` is the list; `/<token>` alone is nothing. A browser cannot send a bearer
        // header with a link, so the pages live under path tokens only.
        Some((segment, tail)) if web::is_web_path(tail) => (Route::Web, Some(segment)),
        _ => (Route::NotFound, None),
    }
}

/// The plan for a request: every rule that needs no body is applied here.
pub fn plan(req: &Request<'_>, config: &Config) -> Plan {
    let (route, path_token) = route(req.path);
    if route == Route::Healthz {
        return Plan::Respond(Response::text(200, "ok"));
    }
    let Ok(credentials) = &config.credentials else {
        return Plan::Respond(Response::refusal(&Error::Misconfigured));
    };
    let allow: &'static [&'static str] = match route {
        Route::Healthz | Route::NotFound => return Plan::Respond(Response::not_found()),
        Route::Web => &["GET", "POST"],
        Route::Mcp | Route::SseMessage => &["POST"],
        Route::Sse => &["GET", "POST"],
    };
    let scope = match authenticate(path_token, req.headers, credentials) {
        Ok(scope) => scope.clone(),
        Err(refused) => return refused,
    };
    if route == Route::Web {
        // The pages' own rules: GETs are links (no Origin to check), posts must be our own.
        return web::plan(req, scope);
    }
    if !origin_allowed(req.headers.get("origin"), config) {
        return Plan::Respond(Response::refusal(&Error::ForbiddenOrigin));
    }
    if !allow.contains(&req.method) {
        return Plan::Respond(Response::refusal(&Error::MethodNotAllowed { allow }));
    }
    if route == Route::Sse && req.method == "GET" {
        return Plan::OpenSse {
            endpoint_prefix: sse::endpoint_prefix(path_token),
            scope,
        };
    }
    if let Some(refusal) = body_headers_refusal(req.headers, "application/json") {
        return Plan::Respond(Response::refusal(&refusal));
    }
    match route {
        Route::SseMessage => match sse::session_from_query(req.query) {
            Ok(session) => Plan::SseMessage {
                session: session.to_owned(),
                scope,
            },
            Err(refusal) => Plan::Respond(refusal),
        },
        // POST /sse is Streamable HTTP, so an old /sse URL works whichever transport a client picks.
        _ => Plan::Mcp { scope },
    }
}

/// The scope of the request's credential, or the plan for a request without an accepted one.
/// On a token path the path token alone decides (an `Authorization` header there is ignored,
/// whatever it holds), and a wrong one is the bare 404 of any unknown path; elsewhere the
/// bearer token decides, and a missing or wrong one is 401. With no token configured at all
/// nothing is ours: 404 either way.
///
/// A token that was presented and matches none is `Plan::Denied`, counted against the client's
/// address: that is what guessing looks like. No header, another scheme or two credentials at
/// once could never have matched, so they are answered without counting.
fn authenticate<'c>(
    path_token: Option<&str>,
    headers: &Headers,
    credentials: &'c Credentials,
) -> Result<&'c Scope, Plan> {
    if credentials.is_empty() {
        return Err(Plan::Respond(Response::not_found()));
    }
    if let Some(token) = path_token {
        return credentials
            .scope_of(token)
            .ok_or_else(|| Plan::Denied(Response::not_found()));
    }
    let token =
        bearer(headers.get("authorization")).map_err(|e| Plan::Respond(Response::refusal(&e)))?;
    credentials
        .scope_of(token)
        .ok_or_else(|| Plan::Denied(Response::refusal(&Error::Unauthorized)))
}

/// What a denied credential (`Plan::Denied`) is answered past the limit of failures from its
/// address, in place of its own refusal: the 429, the same for every token and every route,
/// which says when to try again.
pub fn too_many_failures() -> Response {
    Response::refusal(&Error::TooManyFailures)
}

/// The key a failed credential is counted under: the client's address (`CLIENT_ADDRESS_HEADER`)
/// as Cloudflare writes it, an IPv6 address (RFC 5952's canonical text) by its first four groups,
/// its /64 (one subscriber's prefix: counting the whole address would give each client 2^64 fresh
/// counters); without an address, one key for all. The text is taken as it is, not parsed:
/// std's address parsers cost 2.4 KB of the gzipped Worker (measured), for text that
/// Cloudflare writes and no client can.
pub fn failure_key(address: Option<&str>) -> String {
    let address = address.map(str::trim).unwrap_or_default();
    if address.is_empty() {
        return "unknown".into();
    }
    let (head, tail) = match address.split_once("::") {
        Some(halves) => halves,
        None if address.contains(':') => (address, ""),
        None => return address.to_owned(),
    };
    // The zero groups `::` stands for, between the groups before it and those after it.
    let groups = |part: &str| match part {
        "" => 0,
        part => part.bytes().filter(|&b| b == b':').count() + 1,
    };
    let mut full = head.to_owned();
    for _ in groups(head) + groups(tail)..8 {
        if !full.is_empty() {
            full.push(':');
        }
        full.push('0');
    }
    if !tail.is_empty() {
        full.push(':');
        full.push_str(tail);
    }
    let mut colons = 0;
    let fourth = full.bytes().position(|b| {
        colons += usize::from(b == b':');
        colons == 4
    });
    full.truncate(fourth.unwrap_or(full.len()));
    full + "::/64"
}

/// The token of an `Authorization: Bearer <token>` header: the scheme in any case, then one or
/// more spaces (RFC 9110 §11.4), then the token.
fn bearer(value: Option<&str>) -> Result<&str, Error> {
    let value = value.unwrap_or_default().trim();
    // Fetch joins a repeated header's values with ", " (and so does `Headers::new`), and no
    // accepted token holds a comma (config.rs splits its variables on commas), so a comma here
    // means two Authorization headers, or one listing two credentials: refuse rather than guess.
    if value.contains(',') {
        return Err(Error::AmbiguousAuthorization);
    }
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    let token = token.trim_start_matches(' ');
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(Error::Unauthorized);
    }
    Ok(token)
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

/// The size rule of a body as read: the 413 when it passes the limit. The shell reads at most
/// `READ_CAP` bytes, so a body it cut short is refused here.
pub fn too_large(body: &[u8]) -> Option<Response> {
    (body.len() > MAX_BODY_BYTES).then(|| {
        Response::refusal(&Error::TooLarge {
            limit: MAX_BODY_BYTES,
        })
    })
}

/// The body rules both transports share: the size limit (413) and JSON (−32700).
pub fn parse_body(body: &[u8]) -> Result<Node<'_>, Response> {
    if let Some(refusal) = too_large(body) {
        return Err(refusal);
    }
    Node::parse(body).map_err(|_| Response::refusal(&Error::Parse))
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
            let mut response = Response::json(status, body);
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
        Config::from_lookup(|name| match name {
            "AUTH_TOKEN" => Some("tok-123".into()),
            "ALLOWED_ORIGINS" => Some("https://app.example".into()),
            _ => None,
        })
    }

    #[test]
    fn routes_and_where_their_credential_is() {
        for (path, route_to, token) in [
            ("/tok-123/mcp", Route::Mcp, Some("tok-123")),
            ("/tok-123/sse", Route::Sse, Some("tok-123")),
            ("/tok-123/sse/message", Route::SseMessage, Some("tok-123")),
            ("/x/mcp", Route::Mcp, Some("x")),
            ("//mcp", Route::Mcp, Some("")),
            ("/mcp", Route::Mcp, None),
            ("/sse", Route::Sse, None),
            ("/sse/message", Route::SseMessage, None),
            ("/healthz", Route::Healthz, None),
            ("/tok-123/", Route::Web, Some("tok-123")),
            ("/tok-123/projects/p", Route::Web, Some("tok-123")),
            ("/tok-123/projects/p/set_focus", Route::Web, Some("tok-123")),
            ("/x/projects/", Route::Web, Some("x")),
            // The list of a token that happens to be "mcp"; it is as wrong as any other.
            ("/mcp/", Route::Web, Some("mcp")),
        ] {
            assert_eq!(route(path), (route_to, token), "{path}");
        }
        for path in [
            "/",
            "",
            "mcp",
            "/tok-123/mcp/",
            "/tok-123",
            "/a/b/mcp",
            "/.well-known/oauth-protected-resource",
            "/projects/p",
            "/tok-123/projects",
            "/tok-123/projectsx",
        ] {
            assert_eq!(route(path), (Route::NotFound, None), "{path}");
        }
    }

    #[test]
    fn path_tokens_must_be_exact_and_header_tokens_bearer() {
        let json = ("content-type", "application/json");
        for path in ["/tok-12/mcp", "/tok-1234/mcp", "/TOK-123/mcp", "//mcp"] {
            assert_eq!(denied(plan_of("POST", path, &[json])), 404, "{path}");
        }
        let with = |auth: &str| plan_of("POST", "/mcp", &[json, ("authorization", auth)]);
        for good in [
            "Bearer tok-123",
            "bearer tok-123",
            "BEARER   tok-123",
            " Bearer tok-123 ",
        ] {
            assert_eq!(with(good), Plan::Mcp { scope: Scope::All }, "{good:?}");
        }
        // Only a bearer token that was presented and matches none is counted as a guess.
        for bad in ["", "Bearer", "Bearer ", "tok-123", "Basic tok-123"] {
            assert_eq!(status(with(bad)), 401, "{bad:?}");
        }
        for guess in ["Bearer tok-12", "bearer x"] {
            assert_eq!(denied(with(guess)), 401, "{guess:?}");
        }
        assert_eq!(status(plan_of("POST", "/mcp", &[json])), 401);
        assert_eq!(status(with("Bearer tok-123, Bearer tok-123")), 400);
        // With no token configured at all, nothing is ours.
        let none = Config::from_lookup(|_| None);
        let headers = Headers::new([json, ("authorization", "Bearer x")]);
        for path in ["/mcp", "/x/mcp"] {
            let req = Request {
                method: "POST",
                path,
                query: None,
                headers: &headers,
                own_origin: "https://mcp.example",
            };
            assert_eq!(status(plan(&req, &none)), 404, "{path}");
        }
    }

    #[test]
    fn repeated_headers_are_joined_as_fetch_joins_them() {
        let headers = Headers::new([
            ("Authorization", "a"),
            ("Origin", "1"),
            ("authorization", "b"),
        ]);
        assert_eq!(headers.get("AUTHORIZATION"), Some("a, b"));
        assert_eq!(headers.get("origin"), Some("1"));
    }

    #[test]
    fn the_routing_headers_dispatch_reads_are_kept() {
        for name in crate::dispatch::headers::NAMES {
            assert!(READ_HEADERS.contains(&name), "{name}");
        }
    }

    #[test]
    fn only_the_headers_the_core_reads_are_kept() {
        let headers = Headers::new([("X-Other", "1"), ("Accept", "*/*"), ("User-Agent", "c")]);
        assert_eq!(headers.get("x-other"), None);
        assert_eq!(headers.get("accept"), None);
        assert_eq!(headers.get("user-agent"), Some("c"));
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

    /// The status of a denied credential's refusal (a plan that counts the failure).
    fn denied(plan: Plan) -> u16 {
        match plan {
            Plan::Denied(r) => r.status,
            other => panic!("expected a denied credential, got {other:?}"),
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
        let all = || Scope::All;
        assert_eq!(
            plan_of("POST", "/tok-123/mcp", &json),
            Plan::Mcp { scope: all() }
        );
        assert_eq!(
            plan_of("POST", "/tok-123/sse", &json),
            Plan::Mcp { scope: all() }
        );
        assert_eq!(
            plan_of("POST", "/tok-123/sse/message", &json),
            Plan::SseMessage {
                session: "0123456789abcdef0123456789abcdef".into(),
                scope: all(),
            }
        );
        assert_eq!(
            plan_of("GET", "/tok-123/sse", &[]),
            Plan::OpenSse {
                endpoint_prefix: "/tok-123/sse/message?sessionId=".into(),
                scope: all(),
            }
        );
        // Over the header, the endpoint names no token: each POST carries the header instead.
        assert_eq!(
            plan_of("GET", "/sse", &[("authorization", "Bearer tok-123")]),
            Plan::OpenSse {
                endpoint_prefix: "/sse/message?sessionId=".into(),
                scope: all(),
            }
        );
        assert_eq!(denied(plan_of("GET", "/nope/mcp", &[])), 404);
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
