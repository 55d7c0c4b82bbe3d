//! Sharing a project from its page, for its owner: the form that makes a project token and the
//! page that shows it, once, with everything a teammate needs to connect (`shared`); each
//! token's Revoke button; and deleting the project, its id typed to confirm. The rules are
//! `sharing`'s; a refusal is the project's page again with its sentence. Every path here is a
//! POST from this server's own page (`route` checks the Origin). No SQL and no escaping by hand.

use super::html::{html, page, refusal, Refused};
use crate::config::Config;
use crate::context::Ctx;
use crate::error::Error;
use crate::form;
use crate::http::Response;
use crate::sharing::{self, Shared};

/// What a sharing form came to: its answer, or the project's page to draw again with the
/// refusal.
pub enum Outcome {
    Answered(Response),
    Refused(Refused),
}

/// The form's fields, or the page that says it cannot be read.
fn fields(body: &[u8]) -> Result<Vec<(String, String)>, Outcome> {
    form::decode(body).map_err(|why| {
        let error = Error::InvalidRequest(format!("the form cannot be read: {why}"));
        Outcome::Answered(refusal(&error))
    })
}

/// A refusal of a sharing form, drawn on the project's page (`tool` names the form).
fn refused(tool: &'static str, why: sharing::Refused, fields: Vec<(String, String)>) -> Outcome {
    let sentence = match why {
        sharing::Refused::NotOwner => sharing::NOT_OWNER.to_owned(),
        sharing::Refused::Sentence(sentence) => sentence,
        sharing::Refused::Failed(error) => return Outcome::Answered(refusal(&error)),
    };
    Outcome::Refused(Refused {
        tool,
        sentence,
        fields,
    })
}

/// The share form's post: a new token, shown once on a page of its own with what a teammate
/// needs, or the project's page with the refusal.
pub async fn share(
    ctx: &Ctx<'_>,
    config: &Config,
    project: &str,
    origin: &str,
    body: &[u8],
) -> Outcome {
    let fields = match fields(body) {
        Ok(fields) => fields,
        Err(outcome) => return outcome,
    };
    let label = form::field(&fields, "label").unwrap_or_default();
    let write = form::field(&fields, "access") != Some("read");
    match sharing::make(ctx, config, project, label, write).await {
        Ok(shared) => Outcome::Answered(html(200, shared_page(project, origin, &shared, config))),
        Err(why) => refused("share", why, fields),
    }
}

/// A Revoke button's post: the token ends now; back to the project's list of tokens, whose
/// fragment (an element inside the closed disclosure) makes the browser open it.
pub async fn revoke(ctx: &Ctx<'_>, project: &str, token: &str) -> Outcome {
    if let Err(why) = sharing::revoke(ctx, project, token).await {
        return refused("share", why, Vec::new());
    }
    let mut response = html(303, String::new());
    response
        .headers
        .push(("location", format!("../../../projects/{project}#tokens")));
    Outcome::Answered(response)
}

/// The delete form's post: the project is gone, and a page says so; or the project's page
/// with the refusal (the id was not typed right).
pub async fn delete(ctx: &Ctx<'_>, project: &str, body: &[u8]) -> Outcome {
    let fields = match fields(body) {
        Ok(fields) => fields,
        Err(outcome) => return outcome,
    };
    let confirm = form::field(&fields, "confirm").unwrap_or_default();
    if let Err(why) = sharing::delete(ctx, project, confirm).await {
        return refused("delete", why, fields);
    }
    let body = page("Deleted", |h| {
        h.fill(
            "<nav aria-label=Pages><a href=\"../../\">← All projects</a></nav>\
             <h1>Project {} is deleted</h1><p>Its North Star, focus, tasks and history are gone, \
             and so are its tokens; its connected clients were revoked.</p>",
            &[project],
        );
    });
    Outcome::Answered(html(200, body))
}

/// The one page that shows a new token: the token, then the block to send whoever it is for,
/// with this server's origin as the browser reached it.
fn shared_page(project: &str, origin: &str, shared: &Shared, config: &Config) -> String {
    let access = match shared.write {
        true => "read and write",
        false => "read only",
    };
    let marketplace = config
        .marketplace
        .as_deref()
        .unwrap_or("<the handoff-mcp repository: its git URL, or owner/repo>");
    // claude.ai's connectors are called from Anthropic's servers, which reach no local server.
    let remote = match origin.starts_with("https://") {
        true => "",
        false => " (from a deployed server's https URL only: they cannot reach this one)",
    };
    let token = shared.token.as_str();
    page("A new project token", |h| {
        h.fill(
            "<nav aria-label=Pages><a href=\"../../projects/{}\">← Project {}</a></nav>\
             <h1>A token for {}</h1><p><b>Copy it now: this page is the only place it is \
             shown.</b> The server keeps only a keyed hash of it. It reaches project {}, {}, until \
             it is revoked on the project's page.</p><pre class=tok id=token>{}</pre>\
             <h2>What to send {}</h2><p>Everything needed to connect, in one block:</p>",
            &[
                project,
                project,
                &shared.label,
                project,
                access,
                token,
                &shared.label,
            ],
        );
        h.fill(
            "<pre class=tok id=share>handoff-mcp: project {}, {}, for {}.\n\n\
             Claude Code with the plugin (the project's state in every session from its start):\n\
             \x20 export HANDOFF_URL={}\n  export HANDOFF_TOKEN={}\n\
             \x20 claude plugin marketplace add {}\n  claude plugin install handoff@handoff-mcp\n\
             The token reaches this project alone, so no .handoff file is needed.\n\n\
             Claude Code, the server alone:\n\
             \x20 claude mcp add --transport http --scope user handoff {}/mcp --header \
             \"Authorization: Bearer {}\"\n\n\
             claude.ai, Claude Desktop and the Claude mobile apps{}: Settings &gt; Connectors &gt; \
             Add custom connector, this URL, no OAuth fields (the apps use the claude.ai \
             account's connectors):\n  {}/{}/mcp\n\n\
             In a browser: {}/{}/</pre>",
            &[
                project,
                access,
                &shared.label,
                origin,
                token,
                marketplace,
                origin,
                token,
                remote,
                origin,
                token,
                origin,
                token,
            ],
        );
    })
}
