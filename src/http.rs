//! Streamable HTTP as pure functions: routes and the token, Origin, method, content type and
//! size rules, then one call into dispatch. No `worker::*` here; the shell converts its request
//! into `Request` and our `Response` back.

use serde_json::{json, Value as Json};

use crate::config::Config;
use crate::dispatch::{self, Ctx, Handled, McpHeaders, Reply};
use crate::store::Sql;
use crate::tools::NewId;

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

pub struct Request<'a> {
    pub method: &'a str,
    pub headers: &'a Headers,
    pub body: &'a [u8],
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
}

/// Where a request goes. Only the shell acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Healthz,
    Mcp,
    Sse,
    SseMessage,
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
        _ => Route::NotFound,
    }
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

/// The checks every MCP-facing route makes first: a disallowed Origin is 403, a method the route
/// does not serve is 405 with `Allow`. `None` means go on.
pub fn guard(method: &str, headers: &Headers, config: &Config, allow: &[&str]) -> Option<Response> {
    if !origin_allowed(headers.get("origin"), config) {
        return Some(Response::json(
            403,
            &json!({"jsonrpc": "2.0", "error": {"code": -32000, "message": "Forbidden: Origin not allowed"}}),
        ));
    }
    if !allow.contains(&method) {
        let mut response = Response::json(
            405,
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": format!(
                "Method Not Allowed: this endpoint takes {} only",
                allow.join(", ")
            )}}),
        );
        response.headers.push(("allow", allow.join(", ")));
        return Some(response);
    }
    None
}

/// The headers dispatch reads.
pub fn mcp_headers(headers: &Headers) -> McpHeaders {
    McpHeaders {
        protocol_version: headers.get("mcp-protocol-version").map(str::to_owned),
        method: headers.get("mcp-method").map(str::to_owned),
        name: headers.get("mcp-name").map(str::to_owned),
    }
}

/// Serves `/<token>/mcp` (and POST `/<token>/sse`): stateless Streamable HTTP for both eras.
pub async fn serve_mcp(
    req: &Request<'_>,
    config: &Config,
    db: &impl Sql,
    ids: &impl NewId,
) -> Response {
    if let Some(refusal) = guard(req.method, req.headers, config, &["POST"]) {
        return refusal;
    }
    let content_type = req.headers.get("content-type").unwrap_or_default();
    if !content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .eq_ignore_ascii_case("application/json")
    {
        return Response::json(
            415,
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Unsupported Media Type: Content-Type must be application/json"}}),
        );
    }
    if req.body.len() > MAX_BODY_BYTES {
        return too_large();
    }
    let Ok(body) = serde_json::from_slice::<Json>(req.body) else {
        return reply_to_response(dispatch::parse_error().into());
    };
    let headers = mcp_headers(req.headers);
    let ctx = Ctx {
        db,
        ids,
        headers: &headers,
    };
    reply_to_response(dispatch::handle(&body, &ctx).await)
}

pub fn too_large() -> Response {
    Response::json(
        413,
        &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": format!("Request too large: the limit is {MAX_BODY_BYTES} bytes")}}),
    )
}

pub fn reply_to_response(handled: Handled) -> Response {
    let mut response = match handled.reply {
        Reply::Accepted => Response {
            status: 202,
            headers: Vec::new(),
            body: String::new(),
            diagnostic: None,
        },
        Reply::Json { status, body } => Response::json(status, &body),
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
        }
    }

    #[test]
    fn routes_need_the_exact_token() {
        let c = config();
        assert_eq!(route("/tok-123/mcp", &c), Route::Mcp);
        assert_eq!(route("/tok-123/sse", &c), Route::Sse);
        assert_eq!(route("/tok-123/sse/message", &c), Route::SseMessage);
        assert_eq!(route("/healthz", &c), Route::Healthz);
        for path in [
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
