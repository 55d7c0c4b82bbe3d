//! The connected clients page (`/<token>/clients`): every live OAuth grant within the reach of
//! the page's token (all of them for a token of every project, a project's for a project
//! token), with its client, what it reaches, when it was made and last used, and a Revoke button
//! (`/<token>/clients/<grant>`) that ends it at once. A grant whose token is no longer
//! configured has ended already and is not listed. Revoking takes a token that may write what the
//! grant reaches.

use super::html::{ago, html, page, refusal, Html};
use crate::auth::scope::Scope;
use crate::config::Config;
use crate::context::Ctx;
use crate::error::Error;
use crate::http::Response;
use crate::store::oauth::{live_grants, revoke_grant, GrantRow};

/// The page of connected clients.
pub async fn list(ctx: &Ctx<'_>, config: &Config) -> Response {
    let scope = &ctx.caller.scope;
    let now = ctx.clock.now_ms();
    let grants = match live_grants(ctx.db, scope.reach(), now).await {
        Ok(grants) => grants,
        Err(error) => return refusal(&Error::from(error)),
    };
    let keys = config
        .oauth
        .as_ref()
        .map_or(&[][..], |oauth| oauth.keys.all());
    let configured = |grant: &GrantRow| {
        let granted = Scope::from_wire(&grant.scope);
        let pasted = config.credentials.as_ref().ok();
        let pasted = pasted.and_then(|credentials| credentials.tagged(&grant.source, keys));
        pasted.is_some_and(|pasted| granted.is_some_and(|granted| pasted.scope.covers(&granted)))
    };
    let grants: Vec<&GrantRow> = grants.iter().filter(|g| configured(g)).collect();
    let body = page("Connected clients", |h| {
        h.raw("<nav><a href=\"./\">Projects</a></nav><h1>Connected clients</h1>");
        match &config.oauth {
            Ok(_) => h.raw(
                "<p class=m>Apps connected through OAuth to what this token reaches. Revoking one \
                 ends its access at once; to use it again, connect it again.</p>",
            ),
            Err(off) => h
                .raw("<p class=m>OAuth is off on this server (")
                .text(&off.to_string())
                .raw("), so no app connects through it.</p>"),
        };
        if grants.is_empty() {
            h.raw("<p class=m>No connected clients.</p>");
            return;
        }
        h.raw("<ul>");
        for grant in &grants {
            row(h, grant, scope, now);
        }
        h.raw("</ul>");
    });
    html(200, body)
}

/// One grant's row, with its Revoke button when the token may write what it reaches.
fn row(h: &mut Html, grant: &GrantRow, scope: &Scope, now: i64) {
    let granted = Scope::from_wire(&grant.scope);
    let reach = match &granted {
        Some(Scope::All) => "every project, read and write".to_owned(),
        Some(Scope::AllReadOnly) => "every project, read only".to_owned(),
        Some(Scope::Project { id, write: true }) => format!("project {id}, read and write"),
        Some(Scope::Project { id, write: false }) => format!("project {id}, read only"),
        None => "nothing (malformed)".to_owned(),
    };
    h.fill(
        "<li><b>{}</b> <span class=k>{}</span><div class=m>connected {} · last used {}</div>",
        &[
            &grant.client_name,
            &reach,
            &ago(grant.created_at, now),
            &ago(grant.last_used_at, now),
        ],
    );
    // A metadata document's URL says who the client is; a registration is only its own claim.
    match grant.client_id.starts_with("http") {
        true => h.fill(
            "<div class=m>identified by {}</div>",
            &[&crate::render::clip(&grant.client_id, 120)],
        ),
        false => h.raw("<div class=m>registered itself under this name</div>"),
    };
    // The list holds only grants within the token's reach, so a token that may write may
    // revoke each (the store checks the reach again).
    if scope.write_reach().is_some() {
        h.fill(
            "<form method=post action=\"clients/{}\"><button>Revoke</button></form>",
            &[&grant.id],
        );
    }
    h.raw("</li>");
}

/// A Revoke button's post: the grant ends now if the token may write what it reaches; back to
/// the list either way (a grant already ended, or out of reach, is simply not there).
pub async fn revoke(ctx: &Ctx<'_>, grant: &str) -> Response {
    let Some(reach) = ctx.caller.scope.write_reach() else {
        return refusal(&Error::InvalidRequest(
            "this token is read-only: it cannot revoke a client".into(),
        ));
    };
    if let Err(error) = revoke_grant(ctx.db, grant, reach, ctx.clock.now_ms()).await {
        return refusal(&Error::from(error));
    }
    let mut response = html(303, String::new());
    response.headers.push(("location", "../clients".into()));
    response
}
