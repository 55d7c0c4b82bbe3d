//! The path table: every path the Worker answers, with its methods and where its credential is
//! (`TABLE`), the plan for a request (`plan`: every rule that needs no body), and the one
//! function that carries out a plan the core serves (`serve`), which both shells call: the
//! Worker (`src/worker/`) and the native harness (`sqlite.rs`). The transports plug in below it
//! and none imports another: Streamable HTTP (`streamable`), the legacy HTTP+SSE transport
//! (`sse`) and the human view (`web`); the types and guards they share are in `http`.
//!
//! Credentials first: a misconfigured credential table answers everything but /healthz with
//! 503; a token path (`/<token>/mcp`) is decided by its token alone (a wrong one is the bare
//! 404, and an `Authorization` header is ignored there); a path without a token (`/mcp`) needs
//! `Authorization: Bearer <token>` (401 with `WWW-Authenticate: Bearer` otherwise). A token
//! that was presented and is wrong is counted against the client's address, and past the limit
//! the answer is 429 (`Plan::Denied`, `auth::check::too_many_failures`); an accepted one is never
//! counted. A path that is in no row is the bare 404 whatever its token, and counts nothing.
//!
//! One set of rules for both MCP transports: the Origin check (403), the method (405 with
//! `Allow`), `Content-Type: application/json` (415), the 1 MiB limit (413, announced or not: the
//! shell reads no more than `http::READ_CAP`), and JSON (−32700), each answered with the same
//! JSON-RPC error body. Where they must differ, and why:
//! - `/sse/message` answers `202` at once and sends the JSON-RPC reply on the session's stream,
//!   because that is what the 2024-11-05 transport is;
//! - only `/sse/message` names a session, so only it can answer 400 for a missing or malformed
//!   `sessionId` and 404 for a session that is not open;
//! - `GET /sse` opens a stream, where `GET /mcp` is 405 (this server offers no GET stream).
//!
//! The pages have their own rules: a GET is a link (no Origin to check), a POST must come from
//! this server's own origin with a form body, and every refusal is a page.
//!
//! No `worker::*`, no SQL and no JSON written here.

mod serve;
mod table;

pub use serve::{serve, serve_oauth};
pub use table::{find, is_grant_id, Found, Route, Row, TABLE};

use crate::auth::check::{self, Denial};
use crate::auth::oauth::{self, Step};
use crate::auth::scope::Credential;
use crate::config::Config;
use crate::error::Error;
use crate::form;
use crate::http::{self, Request, Response};
use crate::owner;
use crate::plain;
use crate::sse;
use crate::web::{self, Page};

/// What the shell must do with a request. Every plan that serves a request carries its
/// credential, which the shell puts into the request context.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Send this response; nothing else happens.
    Respond(Response),
    /// A credential was presented and matches none (a wrong path token, a wrong bearer token):
    /// count the failure against the client's address (`auth::check::failure_key`), then answer this
    /// response, or past the limit `auth::check::too_many_failures`. Nothing else is read; a request
    /// that fails in any other way, or whose credential is accepted, is never counted.
    Denied(Response),
    /// Read the body if `endpoint.reads_body()` says so (an announced length is within the
    /// limit), then hand it to `serve`.
    Serve {
        endpoint: Endpoint,
        credential: Credential,
    },
    /// Open an SSE stream whose `endpoint` event names this path with a fresh session id
    /// appended (`sse::endpoint_path`). The session serves this credential only.
    OpenSse {
        endpoint_prefix: String,
        credential: Credential,
    },
    /// Read the body and hand it, with `http::forwarded_headers` and the credential, to this
    /// session's stream holder, which parses it (`http::parse_json`) and answers with
    /// `sse::respond`.
    SseMessage {
        session: String,
        credential: Credential,
    },
    /// An OAuth request, which carries no credential of its own: read the body if
    /// `step.reads_body()`, fetch the client's metadata document when `fetch` names one (within
    /// `oauth::DOCUMENT_MAX` bytes, a few seconds, no redirects), then hand both to
    /// `serve_oauth`.
    OAuth { step: Step, fetch: Option<String> },
}

/// What the core serves, once planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A Streamable HTTP body, on /mcp or POST /sse.
    Mcp,
    /// A page or a form of the human view.
    Web(Page),
    /// A project's state as plain text (`plain`): the one named, else the credential's one.
    State { project: Option<String> },
    /// A call of the owner's API (`owner`).
    Owner(owner::Call),
}

impl Endpoint {
    /// Whether the shell must read the body before `serve`.
    pub fn reads_body(&self) -> bool {
        match self {
            Endpoint::Mcp => true,
            Endpoint::Web(action) => action.reads_body(),
            Endpoint::State { .. } => false,
            Endpoint::Owner(call) => call.reads_body(),
        }
    }

    /// A refusal as this endpoint answers one: a JSON-RPC error, or a page.
    fn refusal(&self, error: &Error) -> Response {
        match self {
            Endpoint::Mcp => Response::refusal(error),
            Endpoint::Web(_) => web::refusal(error),
            Endpoint::State { .. } => plain::refusal(error),
            Endpoint::Owner(_) => owner::refusal(error),
        }
    }
}

/// The plan for a request: every rule that needs no body is applied here. With OAuth on, a
/// 401 names the protected-resource metadata (`with_metadata`), which is what starts a client's
/// OAuth flow.
pub fn plan(req: &Request<'_>, config: &Config) -> Plan {
    match plan_of(req, config) {
        Plan::Respond(response) => Plan::Respond(with_metadata(response, config)),
        Plan::Denied(response) => Plan::Denied(with_metadata(response, config)),
        other => other,
    }
}

fn plan_of(req: &Request<'_>, config: &Config) -> Plan {
    let found = find(req.path);
    match found.as_ref().map(|found| found.route) {
        Some(Route::Healthz) => return Plan::Respond(healthz(config)),
        Some(Route::Help) => return Plan::Respond(help(config)),
        _ => {}
    }
    let Ok(credentials) = &config.credentials else {
        return Plan::Respond(Response::refusal(&Error::Misconfigured));
    };
    let Some(found) = found else {
        return Plan::Respond(Response::not_found());
    };
    if let Some(step) = oauth_step(req, &found) {
        return oauth_plan(req, config, &found, step);
    }
    let oauth = config.oauth.as_ref().ok();
    // A refused credential is answered as its surface answers: text on state.txt (which a
    // hook reads), JSON-RPC elsewhere; a path that is not ours is the bare 404 either way.
    let refuse = |error: Option<Error>| match (error, found.route) {
        (None, _) => Response::not_found(),
        (Some(error), Route::State) => plain::refusal(&error),
        (Some(error), Route::OwnerTokens | Route::OwnerToken | Route::OwnerProject) => {
            owner::refusal(&error)
        }
        (Some(error), _) => Response::refusal(&error),
    };
    let credential =
        match check::authenticate(found.token, req.headers, credentials, oauth, req.now_ms) {
            Ok(credential) => credential,
            Err(Denial::Refused(error)) => return Plan::Respond(refuse(error)),
            Err(Denial::Guess(error)) => return Plan::Denied(refuse(error)),
        };
    match found.route {
        Route::Mcp | Route::Sse | Route::SseMessage => mcp_plan(req, config, &found, credential),
        Route::State => state_plan(req, &found, credential),
        Route::OwnerTokens | Route::OwnerToken | Route::OwnerProject => {
            owner_plan(req, &found, credential)
        }
        _ => web_plan(req, &found, credential),
    }
}

/// `/healthz`, for the operator and scripts/deploy: `ok`, or a line `unusable: …` for each
/// setting that is set and cannot be used (`Config::unusable`: named, never shown) with 503;
/// then the version and whether OAuth is on (and if not, why).
#[inline(never)]
fn healthz(config: &Config) -> Response {
    let mut body = String::new();
    for unusable in config.unusable() {
        body.push_str("unusable: ");
        body.push_str(&unusable);
        body.push('\n');
    }
    let status = match body.is_empty() {
        true => {
            body.push_str("ok\n");
            200
        }
        false => 503,
    };
    body.push_str("version: ");
    body.push_str(crate::protocol::SERVER_VERSION);
    match &config.oauth {
        Ok(_) => body.push_str("\noauth: on\n"),
        Err(off) => body += &format!("\noauth: off ({off})\n"),
    }
    Response::text(status, &body)
}

/// `/help`, which every page a person is refused on links to: a redirect to
/// docs/troubleshooting.md in the repository this server was deployed from
/// (`Config::troubleshooting`), or, with no repository known, where to find it.
#[inline(never)]
fn help(config: &Config) -> Response {
    match config.troubleshooting() {
        Some(url) => {
            let mut response = Response::text(302, "");
            response.headers.push(("location", url));
            response
        }
        None => Response::text(200, crate::config::TROUBLESHOOTING_UNLINKED),
    }
}

/// A 401 as OAuth's clients need it once OAuth is on: its `WWW-Authenticate` names the
/// protected-resource metadata (RFC 9728 §5.1) and the scopes to ask for (RFC 6750 §3, which
/// the MCP spec has clients use first). Off, it stays the bare scheme, so no client starts a
/// flow this server would not finish.
pub(crate) fn with_metadata(mut response: Response, config: &Config) -> Response {
    let Ok(oauth) = &config.oauth else {
        return response;
    };
    if response.status != 401 {
        return response;
    }
    let url = oauth::resource_metadata_url(oauth);
    let head = format!(
        "Bearer resource_metadata=\"{url}\", scope=\"{} {}\"",
        oauth::READ_SCOPE,
        oauth::WRITE_SCOPE
    );
    for (name, value) in &mut response.headers {
        let bearer = value
            .strip_prefix("Bearer")
            .filter(|_| *name == "www-authenticate");
        if let Some(params) = bearer {
            *value = match params.trim_start() {
                "" => head.clone(),
                params => format!("{head}, {params}"),
            };
        }
    }
    response
}

/// The OAuth step of a path and method, if the path is one of OAuth's.
fn oauth_step(req: &Request<'_>, found: &Found<'_>) -> Option<Step> {
    let post = req.method == "POST";
    Some(match found.route {
        _ if req.method == "OPTIONS" && found.allow.contains(&"OPTIONS") => Step::Preflight,
        Route::ResourceMetadata => Step::ResourceMetadata,
        Route::ServerMetadata => Step::ServerMetadata,
        Route::Register => Step::Register,
        Route::Authorize if post => Step::Consent,
        Route::Authorize => Step::Authorize,
        Route::Token => Step::Token,
        Route::Revocation => Step::Revocation,
        _ => return None,
    })
}

/// The rules of OAuth's endpoints: the bare 404 while OAuth is off (as if they were not there),
/// the method, then per step the body's type (form-encoded, JSON for a registration) and, for
/// the consent form, this server's own origin. Never inlined, as `web_plan`: an MCP request
/// compiles neither (V8 compiles a wasm function whole, on its first call).
#[inline(never)]
fn oauth_plan(req: &Request<'_>, config: &Config, found: &Found<'_>, step: Step) -> Plan {
    if config.oauth.is_err() {
        return Plan::Respond(Response::not_found());
    }
    let page = step == Step::Consent || step == Step::Authorize;
    let refuse = |error: &Error| match page {
        true => web::refusal(error),
        false => oauth::refusal(error),
    };
    if !found.allow.contains(&req.method) {
        let allow = found.allow;
        return Plan::Respond(refuse(&Error::MethodNotAllowed { allow }));
    }
    if step == Step::Consent && !http::same_origin(req) {
        return Plan::Respond(refuse(&Error::ForbiddenOrigin));
    }
    let expected = match step {
        Step::Register => "application/json",
        _ => web::FORM_TYPE,
    };
    if step.reads_body() {
        if let Some(error) = http::body_headers_refusal(req.headers, expected) {
            return Plan::Respond(refuse(&error));
        }
    }
    Plan::OAuth {
        step,
        fetch: oauth::fetch_for(step, req.query, config),
    }
}

/// The rules of /mcp and /sse, whose credential is accepted.
fn mcp_plan(req: &Request<'_>, config: &Config, found: &Found<'_>, credential: Credential) -> Plan {
    if !http::origin_allowed(req.headers.get("origin"), config) {
        return Plan::Respond(Response::refusal(&Error::ForbiddenOrigin));
    }
    if !found.allow.contains(&req.method) {
        let allow = found.allow;
        return Plan::Respond(Response::refusal(&Error::MethodNotAllowed { allow }));
    }
    if found.route == Route::Sse && req.method == "GET" {
        return Plan::OpenSse {
            endpoint_prefix: endpoint_prefix(found.token),
            credential,
        };
    }
    if let Some(refusal) = http::body_headers_refusal(req.headers, "application/json") {
        return Plan::Respond(Response::refusal(&refusal));
    }
    match found.route {
        Route::SseMessage => match sse::session_from_query(req.query) {
            Ok(session) => Plan::SseMessage {
                session: session.to_owned(),
                credential,
            },
            Err(refusal) => Plan::Respond(refusal),
        },
        _ => Plan::Serve {
            endpoint: Endpoint::Mcp,
            credential,
        },
    }
}

/// The rule of the plain-text state, whose credential is accepted: a GET (405 otherwise). As a
/// page's GET it is a link, with no Origin to check; no era's MCP headers apply to it.
#[inline(never)]
fn state_plan(req: &Request<'_>, found: &Found<'_>, credential: Credential) -> Plan {
    if !found.allow.contains(&req.method) {
        let allow = found.allow;
        return Plan::Respond(plain::refusal(&Error::MethodNotAllowed { allow }));
    }
    Plan::Serve {
        endpoint: Endpoint::State {
            project: Some(found.project.to_owned()).filter(|id| !id.is_empty()),
        },
        credential,
    }
}

/// The rules of the owner's API, whose credential (a bearer header) is accepted: the method
/// (405), a form body for a new token (415, 413); whose credential it is, `sharing` decides.
#[inline(never)]
fn owner_plan(req: &Request<'_>, found: &Found<'_>, credential: Credential) -> Plan {
    let refuse = |error: &Error| Plan::Respond(owner::refusal(error));
    if !found.allow.contains(&req.method) {
        let allow = found.allow;
        return refuse(&Error::MethodNotAllowed { allow });
    }
    let project = found.project.to_owned();
    let call = match (found.route, req.method) {
        (Route::OwnerTokens, "GET") => owner::Call::List { project },
        (Route::OwnerTokens, _) => {
            if let Some(error) = http::body_headers_refusal(req.headers, web::FORM_TYPE) {
                return refuse(&error);
            }
            owner::Call::Make { project }
        }
        (Route::OwnerToken, _) => owner::Call::Revoke {
            project,
            token: found.grant.to_owned(),
        },
        _ => {
            let fields = form::decode(req.query.unwrap_or_default().as_bytes()).unwrap_or_default();
            owner::Call::Delete {
                project,
                confirm: form::field(&fields, "confirm")
                    .unwrap_or_default()
                    .to_owned(),
            }
        }
    };
    Plan::Serve {
        endpoint: Endpoint::Owner(call),
        credential,
    }
}

/// The rules of the pages, whose credential (a path token) is accepted.
#[inline(never)]
fn web_plan(req: &Request<'_>, found: &Found<'_>, credential: Credential) -> Plan {
    let action = match web_action(req, found) {
        Ok(action) => action,
        Err(error) => return Plan::Respond(web::refusal(&error)),
    };
    if !found.allow.contains(&req.method) {
        let allow = found.allow;
        return Plan::Respond(web::refusal(&Error::MethodNotAllowed { allow }));
    }
    if req.method == "POST" {
        if !http::same_origin(req) {
            return Plan::Respond(web::refusal(&Error::ForbiddenOrigin));
        }
        if let Some(error) = http::body_headers_refusal(req.headers, web::FORM_TYPE) {
            return Plan::Respond(web::refusal(&error));
        }
    }
    Plan::Serve {
        endpoint: Endpoint::Web(action),
        credential,
    }
}

/// The page a matched web path asks for, with what its query string says.
fn web_action(req: &Request<'_>, found: &Found<'_>) -> Result<Page, Error> {
    let project = found.project.to_owned();
    Ok(match found.route {
        Route::List => Page::Index {
            after: web::index_cursor(req.query)?,
        },
        Route::Search => Page::Search {
            project: None,
            fields: web::search_fields(req.query)?,
        },
        Route::Import => Page::Import {
            post: req.method == "POST",
        },
        Route::Project => Page::Project { id: project },
        Route::ProjectSearch => Page::Search {
            project: Some(project),
            fields: web::search_fields(req.query)?,
        },
        Route::ExportJson | Route::ExportMarkdown => Page::Export {
            project,
            markdown: found.route == Route::ExportMarkdown,
        },
        Route::Form => Page::Form {
            project,
            tool: found.tool,
        },
        Route::Clients => Page::Clients,
        Route::Revoke => Page::Revoke {
            grant: found.grant.to_owned(),
        },
        Route::Share => Page::Share {
            project,
            origin: req.own_origin.to_owned(),
        },
        Route::RevokeToken => Page::RevokeToken {
            project,
            token: found.grant.to_owned(),
        },
        Route::Delete => Page::Delete { project },
        Route::Healthz
        | Route::Help
        | Route::State
        | Route::OwnerTokens
        | Route::OwnerToken
        | Route::OwnerProject
        | Route::Mcp
        | Route::Sse
        | Route::SseMessage
        | Route::ResourceMetadata
        | Route::ServerMetadata
        | Route::Register
        | Route::Authorize
        | Route::Token
        | Route::Revocation => {
            return Err(Error::Internal {
                detail: "a route that is not a page was planned as one".into(),
            })
        }
    })
}

/// Where a session's client must POST its messages, less the session id. A session opened on
/// a token path keeps the token in it; one opened with an Authorization header names no token,
/// and each POST must carry the header. Either way the session id alone is useless to anyone
/// who does not hold a token.
pub fn endpoint_prefix(path_token: Option<&str>) -> String {
    match path_token {
        Some(token) => format!("/{token}/sse/message?sessionId="),
        None => "/sse/message?sessionId=".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::scope::Scope;
    use crate::http::tests::config;
    use crate::http::Headers;

    #[test]
    fn routes_and_where_their_credential_is() {
        let route = |path| find(path).map(|found| (found.route, found.token));
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
            ("/help", Route::Help, None),
            ("/tok-123/", Route::List, Some("tok-123")),
            ("/tok-123/search", Route::Search, Some("tok-123")),
            ("/tok-123/import", Route::Import, Some("tok-123")),
            ("/tok-123/projects/p", Route::Project, Some("tok-123")),
            (
                "/tok-123/projects/p/search",
                Route::ProjectSearch,
                Some("tok-123"),
            ),
            (
                "/tok-123/projects/p/export.json",
                Route::ExportJson,
                Some("tok-123"),
            ),
            (
                "/tok-123/projects/p/export.md",
                Route::ExportMarkdown,
                Some("tok-123"),
            ),
            (
                "/tok-123/projects/p/set_focus",
                Route::Form,
                Some("tok-123"),
            ),
            (
                "/tok-123/projects/p/state.txt",
                Route::State,
                Some("tok-123"),
            ),
            ("/projects/p/state.txt", Route::State, None),
            ("/state.txt", Route::State, None),
            ("/projects/p", Route::OwnerProject, None),
            ("/projects/p/tokens", Route::OwnerTokens, None),
            ("/projects/p/tokens/t1", Route::OwnerToken, None),
            ("/tok-123/projects/p/tokens", Route::Share, Some("tok-123")),
            (
                "/tok-123/projects/p/tokens/t1",
                Route::RevokeToken,
                Some("tok-123"),
            ),
            ("/tok-123/projects/p/delete", Route::Delete, Some("tok-123")),
            ("/tok-123/state.txt", Route::State, Some("tok-123")),
            // The list of a token that happens to be "mcp"; it is as wrong as any other.
            ("/mcp/", Route::List, Some("mcp")),
        ] {
            assert_eq!(route(path), Some((route_to, token)), "{path}");
        }
        for path in [
            "/",
            "",
            "mcp",
            "/tok-123/mcp/",
            "/tok-123",
            "/a/b/mcp",
            "/projects/a b",
            "/tok-123/projects",
            "/tok-123/projectsx",
            "/tok-123/projects/",
            "/tok-123/projects/a b",
            "/tok-123/projects/p/get_state",
            "/tok-123/projects/p/search/x",
            "/projects/a b/state.txt",
            "/projects/p/state.txt/",
            "/tok-123/projects/p/state.md",
        ] {
            assert_eq!(route(path), None, "{path}");
        }
        assert_eq!(
            find("/t/projects/p/add_task").map(|f| (f.project, f.tool)),
            Some(("p", "add_task"))
        );
    }

    /// The Worker reads a body only where `serve` uses one: /mcp's, a form's, an import's.
    #[test]
    fn the_shell_reads_a_body_for_mcp_and_forms_only() {
        let project = || "p".to_owned();
        assert!(Endpoint::Mcp.reads_body());
        let form = Page::Form {
            project: project(),
            tool: "add_task",
        };
        assert!(Endpoint::Web(form).reads_body());
        assert!(!Endpoint::Web(Page::Project { id: project() }).reads_body());
        assert!(!Endpoint::State {
            project: Some(project())
        }
        .reads_body());
    }

    #[test]
    fn every_write_tool_has_its_form_and_no_reader_does() {
        for def in crate::tools::ALL {
            let path = format!("/t/projects/p/{}", def.name);
            let form = find(&path).is_some_and(|found| found.route == Route::Form);
            assert_eq!(form, def.handler.writes(), "{}", def.name);
        }
    }

    fn plan_of(method: &str, path: &str, headers: &[(&str, &str)]) -> Plan {
        let headers = Headers::new(headers.iter().copied());
        let req = Request {
            method,
            path,
            query: Some("sessionId=0123456789abcdef0123456789abcdef"),
            headers: &headers,
            own_origin: "https://mcp.example",
            now_ms: 0,
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
    fn path_tokens_must_be_exact_and_header_tokens_bearer() {
        let json = ("content-type", "application/json");
        for path in ["/tok-12/mcp", "/tok-1234/mcp", "/TOK-123/mcp", "//mcp"] {
            assert_eq!(denied(plan_of("POST", path, &[json])), 404, "{path}");
        }
        let with = |auth: &str| plan_of("POST", "/mcp", &[json, ("authorization", auth)]);
        let mcp = Plan::Serve {
            endpoint: Endpoint::Mcp,
            credential: Credential::token(Scope::All),
        };
        for good in [
            "Bearer tok-123",
            "bearer tok-123",
            "BEARER   tok-123",
            " Bearer tok-123 ",
        ] {
            assert_eq!(with(good), mcp, "{good:?}");
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
        // A path in no row is the bare 404 before any token is looked at, and counts nothing.
        assert_eq!(
            status(plan_of("GET", "/tok-12/projects/p/get_state", &[])),
            404
        );
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
                now_ms: 0,
            };
            assert_eq!(status(plan(&req, &none)), 404, "{path}");
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
        let mcp = || Plan::Serve {
            endpoint: Endpoint::Mcp,
            credential: Credential::token(Scope::All),
        };
        assert_eq!(plan_of("POST", "/tok-123/mcp", &json), mcp());
        assert_eq!(plan_of("POST", "/tok-123/sse", &json), mcp());
        assert_eq!(
            plan_of("POST", "/tok-123/sse/message", &json),
            Plan::SseMessage {
                session: "0123456789abcdef0123456789abcdef".into(),
                credential: Credential::token(Scope::All),
            }
        );
        assert_eq!(
            plan_of("GET", "/tok-123/sse", &[]),
            Plan::OpenSse {
                endpoint_prefix: "/tok-123/sse/message?sessionId=".into(),
                credential: Credential::token(Scope::All),
            }
        );
        // Over the header, the endpoint names no token: each POST carries the header instead.
        assert_eq!(
            plan_of("GET", "/sse", &[("authorization", "Bearer tok-123")]),
            Plan::OpenSse {
                endpoint_prefix: "/sse/message?sessionId=".into(),
                credential: Credential::token(Scope::All),
            }
        );
        assert_eq!(denied(plan_of("GET", "/nope/mcp", &[])), 404);
    }
}
