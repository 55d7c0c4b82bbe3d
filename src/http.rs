//! The floor every transport stands on: the request and response types (`Request`, `Headers`,
//! `Response`), the request's head as the shell hands it over (`split_head`, `path_and_query`,
//! `origin_of`), and the guards that need no transport: the Origin rules (`origin_allowed` for
//! MCP, `same_origin` for the pages' forms), the content type and announced length
//! (`body_headers_refusal`), the one size rule of a body as read (`too_large`) and JSON
//! (`parse_json`). The credential is `auth::check`'s; which path goes where is `route`'s; this
//! file imports no transport and no route.
//!
//! No `worker::*` here.

use serde_json::Value as Json;

use crate::config::Config;
use crate::dispatch::{self, Dispatched, McpHeaders, Reply};
use crate::error::Error;
use crate::json_read::Node;

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

/// `scheme://host[:port]` of a serialized URL: what a browser sends as the `Origin` of a page
/// served from it.
pub fn origin_of(url: &str) -> &str {
    let authority = url.find("://").map_or(0, |i| i + 3);
    let end = url[authority..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| authority + i);
    &url[..end]
}

/// The path and the query of a serialized URL, as the runtime hands it over: the fragment cut
/// off first (a client never sends one, but `?` inside it is no query), the query after the
/// first `?` without it, the path from the first `/` after the host up to the query (`/` when
/// there is none). Parsing it with `url` would link that crate and its IDNA tables (about 70 KB
/// of wasm) for this.
pub fn path_and_query(url: &str) -> (&str, Option<&str>) {
    let url = url.split('#').next().unwrap_or_default();
    let (url, query) = match url.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (url, None),
    };
    let after_host = url.find("://").map_or(0, |i| i + 3);
    let path = url[after_host..]
        .find('/')
        .map_or("/", |i| &url[after_host + i..]);
    (path, query)
}

/// The method, the URL and the headers the core reads of a request's head as the shell reads
/// it in one crossing (`worker/head.js`): the method, the URL, then the value of each header of
/// `READ_HEADERS` on a line of its own, `\0` for one absent. A line missing at the end (never,
/// from `head.js`) reads as absent.
pub fn split_head(head: &str) -> (&str, &str, Headers) {
    let mut lines = head.split('\n');
    let method = lines.next().unwrap_or_default();
    let url = lines.next().unwrap_or_default();
    let headers = Headers::new(
        READ_HEADERS
            .iter()
            .zip(lines)
            .filter(|(_, value)| *value != "\0"),
    );
    (method, url, headers)
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
    /// When the request arrived (ms since the epoch, UTC): an access token's expiry is read
    /// against it.
    pub now_ms: i64,
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

    /// A response with a surface's fixed headers (the pages' security headers, state.txt's).
    pub fn with_headers(status: u16, headers: &[(&'static str, &str)], body: String) -> Response {
        Response {
            status,
            headers: headers.iter().map(|&(k, v)| (k, v.to_owned())).collect(),
            body,
            diagnostic: None,
        }
    }

    /// An error answered by a surface of its own (a page, state.txt): `self` holds the error's
    /// public sentence as that surface draws it, and gets the error's headers (`Allow`,
    /// `WWW-Authenticate`) and its detail for the log only.
    pub fn refusing(mut self, error: &Error) -> Response {
        self.headers.extend(error.headers());
        self.diagnostic = error.diagnostic().map(str::to_owned);
        self
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

/// The one size rule of a body as read: the 413 when it passes the limit. The shell reads at
/// most `READ_CAP` bytes, so a body it cut short is refused here. `route::serve` applies it to
/// every body the core serves, and the Worker to a /sse message before it forwards it.
pub fn too_large(body: &[u8]) -> Option<Error> {
    (body.len() > MAX_BODY_BYTES).then_some(Error::TooLarge {
        limit: MAX_BODY_BYTES,
    })
}

/// A body as JSON, or the −32700 refusal both MCP transports answer (its size was checked).
pub fn parse_json(body: &[u8]) -> Result<Node<'_>, Response> {
    Node::parse(body).map_err(|_| Response::refusal(&Error::Parse))
}

/// A form post must carry this server's own origin: a browser sends `Origin` with every POST,
/// and a page of ours (whose referrer policy is `same-origin`) sends our origin itself, so an
/// absent Origin, `null`, or any other origin is a post we did not serve the form for.
pub fn same_origin(req: &Request<'_>) -> bool {
    req.headers
        .get("origin")
        .is_some_and(|origin| origin.trim().eq_ignore_ascii_case(req.own_origin))
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

/// A dispatched message as the HTTP response that carries it.
pub fn from_handled(handled: Dispatched) -> Response {
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
pub(crate) mod tests {
    use super::*;

    /// A configuration with one full token and one allowed origin, for the rules' tests.
    pub(crate) fn config() -> Config {
        Config::from_lookup(|name| match name {
            "AUTH_TOKEN" => Some("tok-123".into()),
            "ALLOWED_ORIGINS" => Some("https://app.example".into()),
            _ => None,
        })
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

    #[test]
    fn bodies_past_the_limit_and_bodies_not_json() {
        for garbage in [&b"{"[..], b"not json"] {
            assert_eq!(parse_json(garbage).unwrap_err().status, 400);
        }
        assert_eq!(too_large(&vec![b' '; MAX_BODY_BYTES]), None);
        assert_eq!(
            too_large(&vec![b' '; MAX_BODY_BYTES + 1]),
            Some(Error::TooLarge {
                limit: MAX_BODY_BYTES
            })
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

    #[test]
    fn a_head_in_its_lines_with_absent_headers_left_out() {
        let mut head = String::from("POST\nhttps://h.example/mcp");
        for name in READ_HEADERS {
            head.push('\n');
            head.push_str(match name {
                "authorization" => "Bearer t",
                "origin" => "",
                _ => "\0",
            });
        }
        let (method, url, headers) = split_head(&head);
        assert_eq!((method, url), ("POST", "https://h.example/mcp"));
        assert_eq!(headers.get("authorization"), Some("Bearer t"));
        assert_eq!(headers.get("origin"), Some(""), "an empty value is a value");
        assert_eq!(headers.get("content-type"), None);
        let (method, url, headers) = split_head("GET");
        assert_eq!((method, url, headers.get("user-agent")), ("GET", "", None));
    }

    #[test]
    fn the_path_query_and_origin_of_a_url_as_the_runtime_serializes_it() {
        let cases = [
            ("https://h.example/mcp", "/mcp", None, "https://h.example"),
            ("https://h.example", "/", None, "https://h.example"),
            (
                "https://h.example?x=1",
                "/",
                Some("x=1"),
                "https://h.example",
            ),
            (
                "http://127.0.0.1:8787/a/b?c=d#f",
                "/a/b",
                Some("c=d"),
                "http://127.0.0.1:8787",
            ),
            ("http://[::1]:8787/p#f?g", "/p", None, "http://[::1]:8787"),
            (
                "https://h.example/p%3Fq?",
                "/p%3Fq",
                Some(""),
                "https://h.example",
            ),
            (
                "https://h.example/a?b=/c?d",
                "/a",
                Some("b=/c?d"),
                "https://h.example",
            ),
            (
                "https://h.example?b=/c",
                "/",
                Some("b=/c"),
                "https://h.example",
            ),
        ];
        for (url, path, query, origin) in cases {
            assert_eq!(path_and_query(url), (path, query), "{url}");
            assert_eq!(origin_of(url), origin, "{url}");
        }
    }
}
