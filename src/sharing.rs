//! Sharing a project and taking it back, for its owner: making a project token (read-write or
//! read-only, with a label), listing and revoking the project's tokens, and deleting the
//! project with everything it holds. The project's page (`web::sharing`) and the owner's HTTP
//! API (`owner`) both run these, so the rules are one: only the owner's credential (a
//! full-access token, `Credential::is_owner`) may, a label is one line of 1 to `LABEL_MAX`
//! characters, and a token is made only while OAuth's key is set (it seals the token). Each
//! refusal is a sentence a person can act on, and writes nothing. No HTTP and no markup here.

use crate::auth::scope::{Scope, Writable};
use crate::auth::seal::ProjectToken;
use crate::config::Config;
use crate::context::Ctx;
use crate::error::Error;
use crate::render;
use crate::store::tokens::{self, Made, NewToken, TokenRow, MADE_PER_HOUR, TOKENS_PER_PROJECT};

/// The longest label, in characters: enough for "Aiko's laptop (work)", short enough to fit a
/// list's line and the history's "by" beside a client's name.
pub const LABEL_MAX: usize = 40;

/// Why a sharing action was not carried out: the credential is not the owner's, a sentence for
/// the person (nothing was written), or a failure of storage.
#[derive(Debug)]
pub enum Refused {
    NotOwner,
    Sentence(String),
    Failed(Error),
}

/// The sentence of `Refused::NotOwner`.
pub const NOT_OWNER: &str = "Only the owner's full-access token (AUTH_TOKEN) shares a project, \
takes a share back or deletes a project; this credential cannot. Nothing was changed.";

impl From<Error> for Refused {
    fn from(error: Error) -> Self {
        Refused::Failed(error)
    }
}

/// The proof of writing the project, for its owner alone.
fn owners<'a>(ctx: &Ctx<'_>, project: &'a str) -> Result<Writable<'a>, Refused> {
    let owner = ctx.caller.grant.is_none() && ctx.caller.minted.is_none();
    match (owner, ctx.caller.scope.writable(project)) {
        (true, Some(proof)) if ctx.caller.scope == Scope::All => Ok(proof),
        _ => Err(Refused::NotOwner),
    }
}

/// A new project token, shown once: the token and its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    pub token: String,
    pub id: String,
    pub label: String,
    pub write: bool,
}

/// Makes a token of `project` labelled `label`, read-write when `write`.
pub async fn make(
    ctx: &Ctx<'_>,
    config: &Config,
    project: &str,
    label: &str,
    write: bool,
) -> Result<Shared, Refused> {
    let proof = owners(ctx, project)?;
    let label = label.trim();
    let count = label.chars().count();
    let sentence = |why: String| Err(Refused::Sentence(format!("{why} Nothing was made.")));
    if render::is_blank(label) {
        return sentence("A token needs a label, such as who or which machine it is for.".into());
    }
    if count > LABEL_MAX || label.chars().any(char::is_control) {
        return sentence(format!(
            "A label is one line of at most {LABEL_MAX} characters (this one: {count}, \
             \"{}\").",
            render::preview(label)
        ));
    }
    let Ok(oauth) = &config.oauth else {
        return sentence(
            "Making a project token needs OAuth's key (the OAUTH_KEY secret, and PUBLIC_URL), which \
             seals it; scripts/deploy and scripts/dev set both."
                .into(),
        );
    };
    let scope = Scope::Project {
        id: project.to_owned(),
        write,
    };
    let id = ctx.ids.new_id().replace('-', "");
    let sealed = ProjectToken {
        id: id.clone(),
        scope: scope.to_wire(),
        label: label.to_owned(),
    };
    let (token, hash) = sealed.seal(&oauth.keys);
    let new = NewToken {
        id: &id,
        label,
        scope: &sealed.scope,
        hash: &hash,
        now_ms: ctx.clock.now_ms(),
    };
    match tokens::make(ctx.db, proof, &new)
        .await
        .map_err(Error::from)?
    {
        Made::Made => Ok(Shared {
            token,
            id,
            label: label.to_owned(),
            write,
        }),
        Made::NoProject => sentence(format!(
            "There is no project \"{project}\" to share; set_north_star creates it."
        )),
        Made::Full => sentence(format!(
            "Project \"{project}\" has {TOKENS_PER_PROJECT} live tokens, the most it may have: \
             revoke one it no longer needs first."
        )),
        Made::TooMany => sentence(format!(
            "{MADE_PER_HOUR} tokens were made for project \"{project}\" within the hour, the most \
             an hour allows: try again later."
        )),
    }
}

/// The project's live tokens, for its owner.
pub async fn list(ctx: &Ctx<'_>, project: &str) -> Result<Vec<TokenRow>, Refused> {
    let proof = owners(ctx, project)?;
    Ok(tokens::live(ctx.db, proof).await.map_err(Error::from)?)
}

/// Revokes one of the project's tokens at once; one already revoked or of another project
/// changes nothing.
pub async fn revoke(ctx: &Ctx<'_>, project: &str, token: &str) -> Result<(), Refused> {
    let proof = owners(ctx, project)?;
    let now = ctx.clock.now_ms();
    Ok(tokens::revoke(ctx.db, proof, token, now)
        .await
        .map_err(Error::from)?)
}

/// Deletes the project and everything it holds, when `confirm` is its id typed again.
pub async fn delete(ctx: &Ctx<'_>, project: &str, confirm: &str) -> Result<(), Refused> {
    let proof = owners(ctx, project)?;
    if confirm.trim() != project {
        return Err(Refused::Sentence(format!(
            "To delete project \"{project}\", type its id, {project}, to confirm (this said \"{}\"). \
             Nothing was deleted.",
            render::preview(confirm)
        )));
    }
    match tokens::delete_project(ctx.db, proof, ctx.clock.now_ms())
        .await
        .map_err(Error::from)?
    {
        true => Ok(()),
        false => Err(Refused::Sentence(format!(
            "There is no project \"{project}\"; nothing was deleted."
        ))),
    }
}

/// Whether a token's scope (`Scope`'s wire form) may write.
pub fn writes(scope: &str) -> bool {
    Scope::from_wire(scope).is_some_and(|scope| !scope.read_only())
}
