//! The OAuth 2.1 authorization server inside the Worker, for clients that connect with nothing
//! but the server's URL (claude.ai, Claude Desktop's connectors, the mobile apps, mcp-remote):
//! discovery (RFC 9728's protected-resource metadata, RFC 8414's authorization-server metadata),
//! client registration (client ID metadata documents, and RFC 7591's dynamic registration as the
//! fallback), the consent page (`consent`), and the token endpoint (codes with PKCE S256,
//! refresh tokens rotated on every use). `route` plans each request (`Step`), the shell fetches a
//! client's metadata document when the step needs one (`document_url`), and `serve` answers.
//!
//! What a person grants is a `Scope` no wider than the token they paste on the consent page
//! (there are no accounts: that token is who they are). Access tokens, codes and registrations
//! are sealed (`seal`), not stored; a grant and its refresh token's hash are the only rows
//! (`store::oauth`). No `worker::*`, no SQL and no sentence that holds a token here.

mod client;
mod consent;
mod token;

use serde_json::{json, Value as Json};

use crate::auth::credentials::Credentials;
use crate::auth::seal;
use crate::config::{Config, OAuth, MOST_ACCESS_SECONDS};
use crate::context::NewId;
use crate::error::Error;
use crate::form;
use crate::http::{Request, Response};
use crate::json_read::Node;
use crate::json_write;
use crate::store::Sql;

pub use client::{document_url, DOCUMENT_MAX};

/// How long an authorization code lives: the client exchanges it at once.
pub const CODE_MS: i64 = 60_000;
/// How long the consent page's ticket lives: the person picks a project meanwhile.
pub const TICKET_MS: i64 = 15 * 60_000;
/// How long a grant lives unused; each refresh moves it on, so a client in use never asks the
/// person to log in again. No access token lives longer (`config::MOST_ACCESS_SECONDS`).
pub const GRANT_MS: i64 = MOST_ACCESS_SECONDS * 1000;

/// What the scopes mean: `handoff:read` the read-only tools, `handoff:write` the write tools.
/// Which projects a grant reaches is chosen on the consent page, not by scope.
pub const READ_SCOPE: &str = "handoff:read";
pub const WRITE_SCOPE: &str = "handoff:write";

/// An OAuth request, as planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// RFC 9728 metadata of the MCP endpoint.
    ResourceMetadata,
    /// RFC 8414 metadata of this authorization server.
    ServerMetadata,
    /// `POST /register`.
    Register,
    /// `GET /authorize`: the consent page.
    Authorize,
    /// `POST /authorize`: the consent page's form.
    Consent,
    /// `POST /token`.
    Token,
    /// `POST /revoke` (RFC 7009).
    Revocation,
    /// `OPTIONS` on any of them: a browser's CORS preflight.
    Preflight,
}

impl Step {
    /// Whether the shell must read the body before `serve`.
    pub fn reads_body(self) -> bool {
        matches!(
            self,
            Step::Register | Step::Consent | Step::Token | Step::Revocation
        )
    }
}

/// What fetching a client's metadata document came to, as the shell hands it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The answer: its status and its body, read up to `DOCUMENT_MAX` bytes.
    Answer { status: u16, body: String },
    /// No usable answer: too slow, too large, a redirect, no connection. Why, in a few words.
    Failed(&'static str),
}

/// What `serve` came to: a response, and whether it refused a token that was presented (a
/// wrong token pasted on the consent page), which the shell counts as it counts a wrong token
/// anywhere.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub response: Response,
    pub denied: bool,
}

impl From<Response> for Outcome {
    fn from(response: Response) -> Self {
        Outcome {
            response,
            denied: false,
        }
    }
}

/// What `serve` needs from outside: storage, fresh values and the configured tokens.
pub struct Services<'a> {
    pub db: &'a dyn Sql,
    pub ids: &'a dyn NewId,
    pub credentials: &'a Credentials,
}

/// Answers a planned OAuth request. `fetched` is the client's metadata document when
/// `document_url` named one for this request.
pub async fn serve(
    step: Step,
    req: &Request<'_>,
    body: &[u8],
    fetched: Option<&Fetched>,
    oauth: &OAuth,
    services: &Services<'_>,
) -> Outcome {
    match step {
        Step::ResourceMetadata => public_json(200, &resource_metadata(oauth)).into(),
        Step::ServerMetadata => public_json(200, &server_metadata(oauth)).into(),
        Step::Register => register(body, oauth, req.now_ms).into(),
        Step::Authorize => consent::page(req, fetched, oauth).into(),
        Step::Consent => consent::post(req, body, fetched, oauth, services).await,
        Step::Token | Step::Revocation => {
            token::serve(step, req, body, oauth, services).await.into()
        }
        Step::Preflight => preflight().into(),
    }
}

/// The metadata document URL a request's client id names, for the shell to fetch before
/// `serve`: on the consent steps only, for a client id that is such a URL.
pub fn fetch_for(step: Step, query: Option<&str>, config: &Config) -> Option<String> {
    let oauth = config.oauth.as_ref().ok()?;
    if !matches!(step, Step::Authorize | Step::Consent) {
        return None;
    }
    let fields = form::decode(query.unwrap_or_default().as_bytes()).ok()?;
    let client_id = form::field(&fields, "client_id")?;
    document_url(client_id, oauth).map(str::to_owned)
}

/// How long a client metadata document may take to arrive.
pub const DOCUMENT_TIMEOUT_MS: u32 = 5_000;

/// What `worker/fetch.js` answered for the metadata document at `url`
/// (`<status>\n<cache-control>\n<body>`, or `!<why>`), and how long the shell may keep it: a
/// document answered 200 that passes every check of `client::from_document` as its
/// `Cache-Control` allows (`cache_ms`), anything else not at all, so a broken document is read
/// again at the next request rather than refused for a day.
pub fn fetched(url: &str, text: &str, oauth: &OAuth) -> (Fetched, i64) {
    let failed = |why| (Fetched::Failed(why), 0);
    match text {
        "!slow" => failed("it took longer than 5 seconds"),
        "!redirect" => failed("it answered with a redirect, which is not followed"),
        "!large" => failed("it is larger than 5 KB"),
        _ if text.starts_with('!') => failed("it could not be reached"),
        _ => {
            let mut lines = text.splitn(3, '\n');
            let status = lines.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            let cache_control = lines.next().filter(|c| !c.is_empty());
            let body = lines.next().unwrap_or_default().to_owned();
            let valid =
                status == 200 && client::from_document(url, &body, oauth.app_redirects).is_ok();
            let keep = match valid {
                true => cache_ms(cache_control),
                false => 0,
            };
            (Fetched::Answer { status, body }, keep)
        }
    }
}

/// How many client metadata documents an isolate keeps.
pub const DOCUMENTS_KEPT: usize = 16;

/// The client metadata documents an isolate fetched lately, newest first: each URL, until when
/// it may be used, and what the fetch came to.
#[derive(Default)]
pub struct Documents(Vec<(String, i64, Fetched)>);

impl Documents {
    pub const fn new() -> Self {
        Documents(Vec::new())
    }

    /// What fetching `url` came to, while it may still be used at `now`.
    pub fn kept(&self, url: &str, now: i64) -> Option<&Fetched> {
        self.0
            .iter()
            .find(|(known, until, _)| known == url && now < *until)
            .map(|(_, _, fetched)| fetched)
    }

    /// Keeps what fetching `url` at `now` came to for `keep_ms` (`fetched`'s second value;
    /// nothing when it is 0), in place of an earlier fetch of it, the least recently fetched
    /// making room.
    pub fn keep(&mut self, url: &str, now: i64, keep_ms: i64, fetched: &Fetched) {
        if keep_ms <= 0 {
            return;
        }
        self.0.retain(|(known, _, _)| known != url);
        self.0.truncate(DOCUMENTS_KEPT - 1);
        self.0
            .insert(0, (url.to_owned(), now + keep_ms, fetched.clone()));
    }
}

/// How long the shell may keep a fetched metadata document, from its `Cache-Control`: its
/// `max-age`, at most a day; nothing for `no-store` or `no-cache`; five minutes without either.
pub fn cache_ms(cache_control: Option<&str>) -> i64 {
    const DEFAULT_MS: i64 = 5 * 60_000;
    const MOST_MS: i64 = 86_400_000;
    let Some(value) = cache_control else {
        return DEFAULT_MS;
    };
    let mut max_age = None;
    for directive in value.split(',').map(str::trim) {
        let lower = directive.to_ascii_lowercase();
        if lower == "no-store" || lower == "no-cache" {
            return 0;
        }
        if let Some(seconds) = lower.strip_prefix("max-age=") {
            max_age = seconds.trim_matches('"').parse::<i64>().ok();
        }
    }
    max_age.map_or(DEFAULT_MS, |s| (s.max(0) * 1000).min(MOST_MS))
}

/// Whether a client's `resource` is this server's (RFC 8707): the scheme and the host compared
/// case-insensitively (RFC 3986 §6.2.2.1, as a client may spell them), the port and the path
/// exactly.
pub fn is_our_resource(given: &str, oauth: &OAuth) -> bool {
    // Ours is `<origin>/mcp`, so the path is the same when it ends so and the rest is alike.
    given.ends_with("/mcp") && given.eq_ignore_ascii_case(&oauth.resource)
}

/// The URL of the protected-resource metadata of `/mcp`, which a 401 names.
pub fn resource_metadata_url(oauth: &OAuth) -> String {
    format!("{}/.well-known/oauth-protected-resource/mcp", oauth.issuer)
}

/// RFC 9728: the MCP endpoint, its one authorization server (this Worker), the scopes.
pub fn resource_metadata(oauth: &OAuth) -> Json {
    json!({
        "resource": oauth.resource,
        "authorization_servers": [oauth.issuer],
        "scopes_supported": [READ_SCOPE, WRITE_SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "handoff-mcp",
    })
}

/// RFC 8414. Claude's connector dialog uses client ID metadata documents only when both
/// `client_id_metadata_document_supported` and `"none"` among the auth methods are here.
pub fn server_metadata(oauth: &OAuth) -> Json {
    let at = |path: &str| format!("{}{path}", oauth.issuer);
    json!({
        "issuer": oauth.issuer,
        "authorization_endpoint": at("/authorize"),
        "token_endpoint": at("/token"),
        "registration_endpoint": at("/register"),
        "revocation_endpoint": at("/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": client::AUTH_METHODS,
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
        "scopes_supported": [READ_SCOPE, WRITE_SCOPE],
    })
}

/// The CORS headers of every OAuth answer: these endpoints are public, and a browser-based
/// client reads them from its own origin.
const CORS: [(&str, &str); 1] = [("access-control-allow-origin", "*")];

/// A JSON answer with the CORS header and no caching.
fn public_json(status: u16, body: &Json) -> Response {
    let mut response = Response::json(status, json_write::to_text(body));
    response
        .headers
        .extend(CORS.iter().map(|&(k, v)| (k, v.to_owned())));
    response
        .headers
        .push(("cache-control", "no-store".to_owned()));
    response
}

/// An OAuth error answer (RFC 6749 §5.2): its code and a sentence.
fn oauth_error(status: u16, error: &str, description: &str) -> Response {
    public_json(
        status,
        &json!({ "error": error, "error_description": description }),
    )
}

/// A refusal before a request reaches its step (a method, a content type, a body too large),
/// as OAuth's JSON error: `invalid_request` with the refusal's sentence and status, its headers,
/// and its detail for the log only.
pub fn refusal(error: &Error) -> Response {
    oauth_error(error.page_status(), "invalid_request", &error.message()).refusing(error)
}

fn preflight() -> Response {
    let mut response = Response::text(204, "");
    response.headers = vec![
        ("access-control-allow-origin", "*".into()),
        ("access-control-allow-methods", "GET, POST, OPTIONS".into()),
        (
            "access-control-allow-headers",
            "authorization, content-type, mcp-protocol-version".into(),
        ),
        ("access-control-max-age", "86400".into()),
    ];
    response
}

/// RFC 7591 registration: the metadata is checked and sealed into the client id, so nothing is
/// written, and the registration lasts as long as the key that sealed it.
fn register(body: &[u8], oauth: &OAuth, now_ms: i64) -> Response {
    let invalid = |error: &str, why: String| oauth_error(400, error, &why);
    let Ok(doc) = Node::parse(body) else {
        return invalid("invalid_client_metadata", "the body is not JSON".into());
    };
    if !doc.is_object() {
        return invalid(
            "invalid_client_metadata",
            "the body is not a JSON object".into(),
        );
    }
    let redirect_uris = match client::redirect_uris(doc.get("redirect_uris"), oauth.app_redirects) {
        Ok(uris) => uris,
        Err(why) => return invalid("invalid_redirect_uri", why),
    };
    let method = match doc.get("token_endpoint_auth_method") {
        // RFC 7591 §2: without one, client_secret_basic.
        None | Some(Node::Null) => "client_secret_basic",
        Some(given) => match given.as_str().filter(|m| client::AUTH_METHODS.contains(m)) {
            Some(method) => method,
            None => {
                return invalid(
                    "invalid_client_metadata",
                    format!(
                        "token_endpoint_auth_method must be one of {}",
                        client::AUTH_METHODS.join(", ")
                    ),
                )
            }
        },
    };
    let listed = |member: &str, allowed: &[&str], needed: &str| match doc.get(member) {
        None | Some(Node::Null) => Ok(()),
        Some(Node::Array(items)) => {
            let words: Option<Vec<&str>> = items.iter().map(Node::as_str).collect();
            match words {
                Some(words)
                    if words.contains(&needed) && words.iter().all(|w| allowed.contains(w)) =>
                {
                    Ok(())
                }
                _ => Err(format!(
                    "{member} must include {needed} and hold only {}",
                    allowed.join(", ")
                )),
            }
        }
        Some(_) => Err(format!("{member} must be an array")),
    };
    let kinds = listed(
        "grant_types",
        &["authorization_code", "refresh_token"],
        "authorization_code",
    )
    .and_then(|()| listed("response_types", &["code"], "code"));
    if let Err(why) = kinds {
        return invalid("invalid_client_metadata", why);
    }
    let name = client::name(doc.get("client_name"))
        .unwrap_or_else(|| format!("a client of {}", client::shown_host(&redirect_uris[0])));
    let sealed = seal::Client {
        name: name.clone(),
        redirect_uris: redirect_uris.clone(),
        auth_method: method.to_owned(),
        issued_at: now_ms,
    };
    let client_id = sealed.seal(&oauth.keys);
    let mut answer = json!({
        "client_id": client_id,
        "client_id_issued_at": now_ms / 1000,
        "client_name": name,
        "redirect_uris": redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    });
    if method != "none" {
        answer["client_secret"] = json!(client::secret(&client_id, &oauth.keys.all()[0]));
        answer["client_secret_expires_at"] = json!(0);
    }
    public_json(201, &answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shells_fetch_answer_reads_as_what_it_came_to() {
        let oauth = crate::config::Config::from_lookup(|k| match k {
            crate::config::OAUTH_KEY_VAR => Some("k".repeat(32)),
            crate::config::PUBLIC_URL_VAR => Some("https://mcp.example".into()),
            _ => None,
        })
        .oauth
        .unwrap();
        let url = "https://app.example/c.json";
        let fetched = |text: &str| fetched(url, text, &oauth);
        let answer = |status, body: &str| Fetched::Answer {
            status,
            body: body.into(),
        };
        let good = format!(
            r#"{{"client_id":"{url}","client_name":"App","redirect_uris":["https://app.example/cb"]}}"#
        );
        assert_eq!(
            fetched(&format!("200\nmax-age=60\n{good}")),
            (answer(200, &good), 60_000)
        );
        assert_eq!(
            fetched(&format!("200\n\n{good}")),
            (answer(200, &good), 5 * 60_000)
        );
        // Only a document that passes every check is kept: one that fails is read again.
        let unnamed = good.replace(r#""client_name":"App","#, "");
        for broken in [
            "{\"a\":\n1}",
            "{}",
            &unnamed,
            &good.replace(url, "https://b.example/c"),
        ] {
            let (read, keep) = fetched(&format!("200\nmax-age=60\n{broken}"));
            assert_eq!((read, keep), (answer(200, broken), 0), "{broken}");
        }
        assert_eq!(fetched("404\nmax-age=60\n"), (answer(404, ""), 0));
        assert_eq!(fetched("junk"), (answer(0, ""), 0));
        for (why, sentence) in [
            ("!slow", "it took longer than 5 seconds"),
            (
                "!redirect",
                "it answered with a redirect, which is not followed",
            ),
            ("!large", "it is larger than 5 KB"),
            ("!unreachable", "it could not be reached"),
        ] {
            assert_eq!(fetched(why), (Fetched::Failed(sentence), 0));
        }
        assert_eq!(DOCUMENT_TIMEOUT_MS, 5_000, "the sentence says 5 seconds");
    }

    #[test]
    fn documents_are_kept_as_their_cache_headers_say() {
        assert_eq!(cache_ms(None), 300_000);
        assert_eq!(cache_ms(Some("max-age=60")), 60_000);
        assert_eq!(cache_ms(Some("public, MAX-AGE=\"120\"")), 120_000);
        assert_eq!(cache_ms(Some("max-age=999999999")), 86_400_000);
        assert_eq!(cache_ms(Some("no-store")), 0);
        assert_eq!(cache_ms(Some("max-age=60, no-cache")), 0);
        assert_eq!(cache_ms(Some("max-age=-5")), 0);
        assert_eq!(cache_ms(Some("private")), 300_000);
    }

    #[test]
    fn documents_are_kept_while_their_time_allows_the_oldest_fetch_making_room() {
        let answer = |n: u16| Fetched::Answer {
            status: 200,
            body: n.to_string(),
        };
        let mut documents = Documents::new();
        documents.keep("https://c.example/0", 1_000, 0, &answer(0));
        assert_eq!(
            documents.kept("https://c.example/0", 1_000),
            None,
            "0 keeps nothing"
        );
        documents.keep("https://c.example/0", 1_000, 500, &answer(0));
        assert_eq!(
            documents.kept("https://c.example/0", 1_499),
            Some(&answer(0))
        );
        assert_eq!(
            documents.kept("https://c.example/0", 1_500),
            None,
            "expired"
        );
        documents.keep("https://c.example/0", 2_000, 500, &answer(1));
        assert_eq!(
            documents.kept("https://c.example/0", 2_100),
            Some(&answer(1)),
            "replaced"
        );
        for n in 1..DOCUMENTS_KEPT as u16 {
            documents.keep(&format!("https://c.example/{n}"), 2_000, 500, &answer(n));
        }
        assert_eq!(documents.0.len(), DOCUMENTS_KEPT);
        assert!(documents.kept("https://c.example/0", 2_100).is_some());
        documents.keep("https://c.example/new", 2_000, 500, &answer(99));
        assert_eq!(documents.0.len(), DOCUMENTS_KEPT);
        assert_eq!(
            documents.kept("https://c.example/0", 2_100),
            None,
            "the oldest fetch left"
        );
        assert!(documents.kept("https://c.example/1", 2_100).is_some());
        assert_eq!(
            documents.kept("https://c.example/new", 2_100),
            Some(&answer(99))
        );
    }
}
