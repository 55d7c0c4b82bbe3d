//! Raw HTTP: the target's URLs, bounded agents and replies read whole; nothing here knows JSON-RPC.

use std::io::Read;
use std::time::Duration;

use crate::checks::clip;

/// Every call is bounded so a hung server fails the run instead of stalling it.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The server never opens a session, so this header must be absent on every response.
pub const SESSION_HEADER: &str = "Mcp-Session-Id";

/// How much of a body a failure report quotes.
const QUOTED_BODY: usize = 1500;

/// Bodies are read up to this size; a smoke reply is small, and a runaway one must not exhaust memory.
const MAX_BODY: u64 = 1 << 20;

/// The server under test, split from `http://host:port/<token>` once so each check builds its URLs.
/// With `bearer`, the MCP URLs carry no token and every request sends it in
/// `Authorization: Bearer <token>` instead.
#[derive(Debug, Clone)]
pub struct Target {
    base: String,
    origin: String,
    token: String,
    bearer: bool,
}

impl Target {
    /// Accepts `http://host:port/<token>`; a trailing slash is forgiven because shells and people add one.
    pub fn parse(raw: &str) -> Result<Target, String> {
        let base = raw.trim_end_matches('/');
        let rest = base
            .strip_prefix("http://")
            .ok_or_else(|| format!("BASE_URL must start with http:// (got {raw:?})"))?;
        match rest.split_once('/') {
            Some((host, token)) if !host.is_empty() && !token.is_empty() => Ok(Target {
                base: base.to_string(),
                origin: format!("http://{host}"),
                token: token.to_string(),
                bearer: false,
            }),
            _ => Err(format!(
                "BASE_URL must be http://host:port/<token> (got {raw:?})"
            )),
        }
    }

    /// The same server, reached with the token in the Authorization header instead of the path.
    pub fn with_bearer(mut self) -> Target {
        self.bearer = true;
        self
    }

    pub fn bearer(&self) -> bool {
        self.bearer
    }

    /// Where the MCP paths start: behind the token, or at the root in bearer mode.
    fn root(&self) -> &str {
        if self.bearer {
            &self.origin
        } else {
            &self.base
        }
    }

    /// Where the human view's pages start: behind the token (a path-token target).
    pub fn page_root(&self) -> &str {
        &self.base
    }

    /// The Streamable HTTP endpoint.
    pub fn mcp(&self) -> String {
        format!("{}/mcp", self.root())
    }

    /// The legacy HTTP+SSE endpoint.
    pub fn sse(&self) -> String {
        format!("{}/sse", self.root())
    }

    /// The path the `endpoint` event must name, less the session id: the token stays in it on a
    /// token path, and is absent in bearer mode (each POST carries the header instead).
    pub fn endpoint_prefix(&self) -> String {
        let root = if self.bearer {
            String::new()
        } else {
            format!("/{}", self.token)
        };
        format!("{root}/sse/message?sessionId=")
    }

    /// The headers every MCP request of this target carries: the bearer token, in bearer mode.
    pub fn auth(&self) -> Vec<(&'static str, String)> {
        if self.bearer {
            vec![("Authorization", format!("Bearer {}", self.token))]
        } else {
            Vec::new()
        }
    }

    /// `scheme://host:port` with no token, for routes that sit outside it.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    pub fn token(&self) -> &str {
        &self.token
    }
}

/// What the server records as the client of every write this smoke client makes.
pub const USER_AGENT: &str = "handoff-smoke/0.1";

/// One agent per logical client, so separate clients share no connection pool.
pub fn agent() -> ureq::Agent {
    // Redirects are not followed: a redirect is wire behaviour to assert, not to hide.
    // A fixed User-Agent: the server attributes 2025-era writes to its product token.
    ureq::AgentBuilder::new()
        .timeout(TIMEOUT)
        .redirects(0)
        .user_agent(USER_AGENT)
        .build()
}

/// An HTTP response of any status, read whole.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    /// The first value of a header, matched case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The Content-Type without parameters, lowercased, or `None` when the header is missing.
    pub fn media_type(&self) -> Option<String> {
        self.header("content-type")
            .map(|value| value.split(';').next().unwrap_or("").trim().to_lowercase())
    }

    /// The reply as a failure report quotes it: status, content type and (clipped) body.
    pub fn describe(&self) -> String {
        let media = self.header("content-type").unwrap_or("no content-type");
        format!(
            "HTTP {} [{media}] {}",
            self.status,
            clip(&self.body, QUOTED_BODY)
        )
    }

    /// Every response from this server must be sessionless.
    pub fn expect_no_session(&self) -> Result<(), String> {
        match self.header(SESSION_HEADER) {
            None => Ok(()),
            Some(value) => Err(format!(
                "unexpected {SESSION_HEADER}: {value:?} on {}",
                self.describe()
            )),
        }
    }
}

/// Sends one request and returns the reply whatever its status; only a transport failure is an error.
pub fn send(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<Reply, String> {
    let mut request = agent.request(method, url);
    for (name, value) in headers {
        request = request.set(name, value);
    }
    let sent = match body {
        Some(body) => request.send_string(body),
        None => request.call(),
    };
    let response = match sent {
        Ok(response) => response,
        // ureq treats 4xx and 5xx as errors; here they are ordinary replies to assert on.
        Err(ureq::Error::Status(_, response)) => response,
        Err(ureq::Error::Transport(transport)) => {
            // ureq names the URL in its transport errors, so it is not repeated here.
            return Err(format!("{method} failed: {transport}"));
        }
    };
    let status = response.status();
    let headers = response
        .headers_names()
        .into_iter()
        .filter_map(|name| {
            let value = response.header(&name)?.to_string();
            Some((name, value))
        })
        .collect::<Vec<_>>();
    let mut reply = Reply {
        status,
        headers,
        body: String::new(),
    };
    // A stream may stay open until the timeout; it is reported by its content type instead of read.
    if reply.media_type().as_deref() == Some("text/event-stream") {
        reply.body = "<text/event-stream body not read>".to_string();
        return Ok(reply);
    }
    let mut bytes = Vec::new();
    response
        .into_reader()
        .take(MAX_BODY)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("{method} {url}: HTTP {status}, reading the body failed: {err}"))?;
    reply.body = String::from_utf8(bytes)
        .map_err(|err| format!("{method} {url}: HTTP {status}, body is not UTF-8: {err}"))?;
    Ok(reply)
}
