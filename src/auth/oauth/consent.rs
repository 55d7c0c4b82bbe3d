//! The consent page (`GET /authorize`) and its form (`POST /authorize`). Everything in the
//! authorization request is checked before anything is shown (`AuthRequest::read`): the client,
//! its redirect URI, the PKCE challenge (S256 only), the resource; a request that fails is an
//! error page, never a redirect to a URI not yet checked. Then two steps: the person pastes a
//! token they hold (checked in constant time against every configured token; a wrong one is
//! shown the page again and counted like any wrong token), then chooses what the client may
//! reach, never more than that token: every project or one (a pick list when the token reaches
//! several), read-write or read-only. The second step carries a sealed ticket in place of the
//! token, so no page, URL or log line ever holds the token. Allowing redirects with `code`,
//! `state` and `iss` (RFC 9207); denying with `error=access_denied`.

use super::client::{self, Client};
use super::{
    is_our_resource, Fetched, Outcome, Services, CODE_MS, READ_SCOPE, TICKET_MS, WRITE_SCOPE,
};
use crate::auth::credentials::tag_of;
use crate::auth::scope::Scope;
use crate::auth::seal;
use crate::config::{OAuth, TOKEN_MIN};
use crate::form;
use crate::html::{self, Html};
use crate::http::{Request, Response};
use crate::model;
use crate::render::clip;
use crate::store;

/// How many projects the pick list offers at most.
pub const PICK_MAX: usize = 200;

/// A checked authorization request.
struct AuthRequest {
    client: Client,
    redirect_uri: String,
    /// Whether the request named `redirect_uri` (then the code's exchange must too).
    redirect_sent: bool,
    challenge: String,
    state: Option<String>,
    /// Whether the client asked for writes (`handoff:write`, or no scope of ours at all).
    wants_write: bool,
}

/// A PKCE verifier or challenge: 43 to 128 of RFC 7636's unreserved characters.
pub fn is_pkce_value(value: &str) -> bool {
    (43..=128).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

impl AuthRequest {
    /// The request in the query string, checked, or the sentence saying what is wrong.
    fn read(
        req: &Request<'_>,
        fetched: Option<&Fetched>,
        oauth: &OAuth,
    ) -> Result<AuthRequest, String> {
        let fields = form::decode(req.query.unwrap_or_default().as_bytes())
            .map_err(|why| format!("its query string cannot be read: {why}"))?;
        let get = |name| form::field(&fields, name);
        let client_id = get("client_id").ok_or("client_id is missing")?;
        let client = resolve(client_id, fetched, oauth)?;
        let redirect_uri = match get("redirect_uri") {
            Some(given) => client.redirect(given).map(str::to_owned).ok_or_else(|| {
                format!(
                    "redirect_uri \"{}\" is not one {} registered",
                    clip(given, 80),
                    client.name
                )
            })?,
            None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
            None => return Err("redirect_uri is missing".into()),
        };
        // A registration sealed while private-use schemes were allowed is held to today's rule.
        client::check_redirect(&redirect_uri, oauth.app_redirects)?;
        if get("response_type") != Some("code") {
            return Err("response_type must be code".into());
        }
        let challenge = get("code_challenge")
            .ok_or("code_challenge is missing: this server requires PKCE with S256")?;
        if get("code_challenge_method") != Some("S256") {
            return Err("code_challenge_method must be S256 (plain is not accepted)".into());
        }
        if !is_pkce_value(challenge) {
            return Err("code_challenge is not a PKCE challenge (43 to 128 characters)".into());
        }
        if let Some(resource) = get("resource") {
            if !is_our_resource(resource, oauth) {
                return Err(format!(
                    "resource \"{}\" is not this server's ({})",
                    clip(resource, 80),
                    oauth.resource
                ));
            }
        }
        let scopes: Vec<&str> = get("scope").unwrap_or_default().split(' ').collect();
        let ours = scopes.contains(&READ_SCOPE) || scopes.contains(&WRITE_SCOPE);
        Ok(AuthRequest {
            redirect_uri,
            redirect_sent: get("redirect_uri").is_some(),
            challenge: challenge.to_owned(),
            state: get("state").map(str::to_owned),
            wants_write: !ours || scopes.contains(&WRITE_SCOPE),
            client,
        })
    }

    /// The redirect back to the client with these parameters, `state` and `iss` appended.
    fn redirect(&self, params: &[(&str, &str)], oauth: &OAuth) -> Response {
        let mut url = self.redirect_uri.clone();
        let mut separator = if url.contains('?') { '&' } else { '?' };
        let state = self.state.as_deref().map(|s| ("state", s));
        for (name, value) in params
            .iter()
            .copied()
            .chain(state)
            .chain([("iss", oauth.issuer.as_str())])
        {
            url.push(separator);
            url.push_str(name);
            url.push('=');
            url.push_str(&form::encode(value));
            separator = '&';
        }
        let mut response = Response::text(303, "");
        response.headers = vec![
            ("location", url),
            ("cache-control", "no-store".into()),
            ("referrer-policy", "no-referrer".into()),
        ];
        response
    }
}

/// The client a client id names: one of Claude's built in, a fetched metadata document, or a
/// sealed registration.
fn resolve(client_id: &str, fetched: Option<&Fetched>, oauth: &OAuth) -> Result<Client, String> {
    if let Some(claude) = client::known(client_id) {
        return Ok(claude);
    }
    let url = match client::document(client_id, oauth) {
        Ok(url) => url,
        Err(Some(why)) => {
            return Err(format!(
                "client_id \"{}\" names a metadata document on {why}; this server fetches them from public https hosts only",
                clip(client_id, 80)
            ))
        }
        Err(None) => "",
    };
    if !url.is_empty() {
        return match fetched {
            Some(Fetched::Answer { status: 200, body }) => {
                client::from_document(url, body, oauth.app_redirects)
            }
            Some(Fetched::Answer { status, .. }) => Err(format!(
                "the client's metadata document ({}) answered HTTP {status}",
                clip(url, 80)
            )),
            Some(Fetched::Failed(why)) => Err(format!(
                "the client's metadata document ({}) could not be read: {why}",
                clip(url, 80)
            )),
            None => Err("the client's metadata document was not fetched".into()),
        };
    }
    client::registered(client_id, oauth).ok_or_else(|| {
        format!(
            "client_id \"{}\" is not known here: a client registers at /register, or names the https URL of its client ID metadata document",
            clip(client_id, 60)
        )
    })
}

/// `GET /authorize`: the first step, or the error page.
pub fn page(req: &Request<'_>, fetched: Option<&Fetched>, oauth: &OAuth) -> Response {
    match AuthRequest::read(req, fetched, oauth) {
        Ok(auth) => token_step(&auth, 200, None),
        Err(why) => error_page(&why),
    }
}

/// `POST /authorize`: the pasted token (first step), or the choice (second step).
pub async fn post(
    req: &Request<'_>,
    body: &[u8],
    fetched: Option<&Fetched>,
    oauth: &OAuth,
    services: &Services<'_>,
) -> Outcome {
    let auth = match AuthRequest::read(req, fetched, oauth) {
        Ok(auth) => auth,
        Err(why) => return error_page(&why).into(),
    };
    let fields = match form::decode(body) {
        Ok(fields) => fields,
        Err(why) => return token_step(&auth, 400, Some(&format!("The form {why}."))).into(),
    };
    if let Some(ticket) = form::field(&fields, "ticket") {
        return choice(req, &auth, ticket, &fields, oauth, services)
            .await
            .into();
    }
    let token = form::field(&fields, "token").unwrap_or_default().trim();
    // Held to the rule the configured tokens are (`config::token_min`): on a public deployment
    // (an issuer that is not `http://`, which is loopback only) a shorter one is no token of this
    // server's, and the sentence says why.
    if token.len() < TOKEN_MIN && !oauth.issuer.starts_with("http:") {
        let sentence = "A token of this server is 32 characters or more.";
        return Outcome {
            response: token_step(&auth, 401, Some(sentence)),
            denied: !token.is_empty(),
        };
    }
    let Some(scope) = services.credentials.scope_of(token) else {
        let sentence = "That is not a token this server accepts. Paste the whole token, as it is in AUTH_TOKEN or PROJECT_TOKENS.";
        return Outcome {
            response: token_step(&auth, 401, Some(sentence)),
            denied: !token.is_empty(),
        };
    };
    let ticket = seal::Ticket {
        client_id: auth.client.id.clone(),
        redirect_uri: auth.redirect_uri.clone(),
        challenge: auth.challenge.clone(),
        tag: tag_of(token, &oauth.keys.all()[0]),
        expires_at: req.now_ms + TICKET_MS,
    }
    .seal(&oauth.keys);
    choice_step(&auth, scope, &ticket, None, services)
        .await
        .into()
}

/// The second step's post: the ticket must be this request's and fresh, the token it stands
/// for still configured, and the choice within that token's reach.
async fn choice(
    req: &Request<'_>,
    auth: &AuthRequest,
    ticket: &str,
    fields: &[(String, String)],
    oauth: &OAuth,
    services: &Services<'_>,
) -> Response {
    let opened = seal::Ticket::open(&oauth.keys, ticket).filter(|t| {
        t.client_id == auth.client.id
            && t.redirect_uri == auth.redirect_uri
            && t.challenge == auth.challenge
            && req.now_ms < t.expires_at
    });
    let Some(opened) = opened else {
        let sentence = "This page has expired or is not this request's. Paste the token again.";
        return token_step(auth, 400, Some(sentence));
    };
    let Some(token) = services.credentials.tagged(&opened.tag, oauth.keys.all()) else {
        let sentence = "The token pasted before is no longer accepted. Paste a current one.";
        return token_step(auth, 400, Some(sentence));
    };
    let token_scope = token.scope;
    if form::field(fields, "decision") == Some("deny") {
        return auth.redirect(&[("error", "access_denied")], oauth);
    }
    let write = form::field(fields, "access") != Some("read") && auth.wants_write;
    let chosen = match form::field(fields, "reach") {
        Some("all") => match write {
            true => Scope::All,
            false => Scope::AllReadOnly,
        },
        _ => match form::field(fields, "project").map(str::trim) {
            Some(id) if model::is_project_id(id) => Scope::Project {
                id: id.to_owned(),
                write,
            },
            _ => {
                let sentence = "Choose a project: its id is 1-64 letters, digits, '-', '_' or '.'.";
                return choice_step(auth, token_scope, ticket, Some(sentence), services).await;
            }
        },
    };
    if !token_scope.covers(&chosen) {
        let sentence = "That is more than the pasted token reaches. Choose within it.";
        return choice_step(auth, token_scope, ticket, Some(sentence), services).await;
    }
    let code = seal::Code {
        client_id: auth.client.id.clone(),
        redirect_uri: auth.redirect_uri.clone(),
        redirect_sent: auth.redirect_sent,
        challenge: auth.challenge.clone(),
        resource: oauth.resource.clone(),
        scope: chosen.to_wire(),
        tag: token.tag.to_owned(),
        client: auth.client.name.clone(),
        nonce: services.ids.new_id(),
        expires_at: req.now_ms + CODE_MS,
    }
    .seal(&oauth.keys);
    auth.redirect(&[("code", &code)], oauth)
}

/// The page's headers: the human view's, with the client's redirect origin allowed as a form
/// target (a browser holds the redirect after a form post to `form-action` too).
fn headers(auth: Option<&AuthRequest>) -> Vec<(&'static str, String)> {
    html::HEADERS
        .iter()
        .map(|&(name, value)| match (name, auth) {
            ("content-security-policy", Some(auth)) => {
                let target = form_target(&auth.redirect_uri);
                (
                    name,
                    value.replace(
                        "form-action 'self'",
                        &format!("form-action 'self' {target}"),
                    ),
                )
            }
            _ => (name, value.to_owned()),
        })
        .collect()
}

/// The CSP source of a redirect URI: its origin (`https://host:port`), or its scheme (`app:`).
fn form_target(uri: &str) -> String {
    match uri.split_once("://") {
        Some((scheme, rest)) => {
            let authority = rest.split(['/', '?']).next().unwrap_or_default();
            format!("{scheme}://{authority}")
        }
        None => uri.split(':').next().unwrap_or_default().to_owned() + ":",
    }
}

fn respond(status: u16, body: String, auth: Option<&AuthRequest>) -> Response {
    Response {
        status,
        headers: headers(auth),
        body,
        diagnostic: None,
    }
}

/// The page of a request that cannot be served: nothing was granted and nothing redirects.
fn error_page(why: &str) -> Response {
    let body = html::page("Cannot connect", |h| {
        h.raw("<h1>This connection cannot be made</h1><p class=err>")
            .text("The authorization request cannot be served: ")
            .text(why)
            .raw(". Nothing was granted.</p><p class=m>Start again from the app that sent you here; \
                  <a href=/help#this-connection-cannot-be-made>Troubleshooting</a> says more.</p>");
    });
    respond(400, body, None)
}

/// The head of both steps: who asks, and where the browser goes afterwards.
fn intro(h: &mut Html, auth: &AuthRequest) {
    h.raw("<h1>")
        .text("Connect ")
        .text(&auth.client.name)
        .raw(" to handoff-mcp</h1><p>")
        .text(&auth.client.name)
        .text(" asks to use this server's projects. Afterwards your browser goes back to ")
        .raw("<b>")
        .text(client::shown_host(&auth.redirect_uri))
        .raw("</b>.</p>");
    // A client ID metadata document's URL is who the client is (its site serves it); a client
    // that registered itself chose its own name, which nothing here can vouch for.
    match (
        client::known_as(&auth.client.id),
        auth.client.id.starts_with("http"),
    ) {
        (Some(what), _) => h
            .raw("<p class=m>This is <b>")
            .text(what)
            .raw("</b>, whose published client id this server knows.</p>"),
        (None, true) => h
            .raw("<p class=m>Identified by <b>")
            .text(&clip(&auth.client.id, 120))
            .raw("</b>, which its own site publishes.</p>"),
        (None, false) => h.raw(
            "<p class=m>The app registered itself under this name; the name is its own claim.</p>",
        ),
    };
    if client::loopback_only(&auth.client) {
        h.raw("<p><b>Check first:</b> ")
            .text(&auth.client.name)
            .text(" returns to a program on this computer, and any program here can use that name. Allow it only if you started it yourself just now.")
            .raw("</p>");
    }
}

/// The first step: paste a token.
fn token_step(auth: &AuthRequest, status: u16, said: Option<&str>) -> Response {
    let body = html::page("Connect a client", |h| {
        intro(h, auth);
        if let Some(sentence) = said {
            h.raw("<p class=err role=alert>").text(sentence).raw("</p>");
        }
        h.raw(
            "<form method=post><label for=token>Your handoff-mcp token</label>\
             <p class=m>A token you already hold: AUTH_TOKEN, or one of PROJECT_TOKENS. It is checked \
             here and never given to the client, which gets access of its own that you can revoke \
             on the projects page.</p>\
             <input id=token name=token type=password autocomplete=off required>\
             <button>Continue</button></form>",
        );
    });
    respond(status, body, Some(auth))
}

/// The second step: what the client may reach, within the pasted token's reach.
async fn choice_step(
    auth: &AuthRequest,
    token_scope: &Scope,
    ticket: &str,
    said: Option<&str>,
    services: &Services<'_>,
) -> Response {
    let projects = match token_scope.project() {
        Some(only) => vec![only.to_owned()],
        None => match store::project_ids(services.db, None, PICK_MAX, token_scope.reach()).await {
            Ok(ids) => ids,
            Err(error) => {
                let mut page = error_page("the database did not answer; try again");
                page.status = 503;
                page.diagnostic = Some(format!("consent page: {error}"));
                return page;
            }
        },
    };
    let every = token_scope.project().is_none();
    let may_write = !token_scope.read_only() && auth.wants_write;
    let body = html::page("Connect a client", |h| {
        intro(h, auth);
        if let Some(sentence) = said {
            h.raw("<p class=err role=alert>").text(sentence).raw("</p>");
        }
        h.raw("<form method=post>")
            .fill("<input type=hidden name=ticket value=\"{}\">", &[ticket])
            .raw("<fieldset><legend>What it may reach</legend>");
        if every {
            h.raw("<label><input type=radio name=reach value=all checked> Every project</label>");
            h.raw("<label><input type=radio name=reach value=project> One project:</label>");
            if projects.is_empty() {
                h.raw("<input name=project aria-label=\"Project id\" placeholder=\"project id\">");
            } else {
                h.raw("<select name=project aria-label=\"Project\">");
                for id in &projects {
                    h.fill("<option value=\"{}\">{}</option>", &[id, id]);
                }
                h.raw("</select>");
            }
        } else {
            let id = &projects[0];
            h.raw("<input type=hidden name=reach value=\"project\">")
                .fill("<input type=hidden name=project value=\"{}\">", &[id])
                .fill(
                    "<p>The project <b>{}</b> (the token reaches it alone).</p>",
                    &[id],
                );
        }
        h.raw("</fieldset><fieldset><legend>What it may do</legend>");
        if may_write {
            h.raw(
                "<label><input type=radio name=access value=write checked> Read and write</label>\
                 <label><input type=radio name=access value=read> Read only</label>",
            );
        } else {
            h.raw("<input type=hidden name=access value=\"read\"><p>Read only.</p>");
        }
        h.raw(
            "</fieldset><p class=m>It keeps this access while in use; revoke it any time on the \
             projects page, under Connected clients.</p>\
             <button name=decision value=allow>Allow</button> \
             <button name=decision value=deny>Deny</button></form>",
        );
    });
    respond(200, body, Some(auth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_may_post_to_the_redirect_origin_only() {
        assert_eq!(
            form_target("https://claude.ai/api/mcp/auth_callback"),
            "https://claude.ai"
        );
        assert_eq!(
            form_target("http://127.0.0.1:3334/cb?x=1"),
            "http://127.0.0.1:3334"
        );
        assert_eq!(form_target("com.example.app:/cb"), "com.example.app:");
        assert!(is_pkce_value(&"a".repeat(43)));
        assert!(!is_pkce_value(&"a".repeat(42)));
        assert!(!is_pkce_value(&"a".repeat(129)));
        assert!(!is_pkce_value(&format!("{}+", "a".repeat(43))));
    }
}
