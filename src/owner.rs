//! The owner's HTTP API: a project's tokens and the project itself, with the owner's
//! full-access token in `Authorization: Bearer` (docs/http.md, "Sharing one project with a
//! teammate"). The same actions as the project page's sharing forms, run by `sharing` under the
//! same rules, for scripts: `GET /projects/<id>/tokens` lists the live tokens, `POST` (a form: `label`, and
//! `access` = `write` or `read`) makes one and shows it once, `DELETE /projects/<id>/tokens/<token
//! id>` revokes one, and `DELETE /projects/<id>?confirm=<id>` deletes the project with everything
//! it holds. Answers are JSON; a refusal is `{"error": <sentence>}` with its status. No SQL, no
//! markup, no `worker::*` here.

use serde_json::json;

use crate::config::Config;
use crate::context::Ctx;
use crate::error::Error;
use crate::form;
use crate::http::Response;
use crate::json_write;
use crate::sharing::{self, Refused};

/// What the owner asked of a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    List {
        project: String,
    },
    Make {
        project: String,
    },
    Revoke {
        project: String,
        token: String,
    },
    /// `confirm`: the query's `confirm=`, which must be the project's id.
    Delete {
        project: String,
        confirm: String,
    },
}

impl Call {
    /// Whether the shell must read the body (a new token's form).
    pub fn reads_body(&self) -> bool {
        matches!(self, Call::Make { .. })
    }
}

/// Its answer: JSON that no cache keeps.
fn answer(status: u16, body: &serde_json::Value) -> Response {
    let mut response = Response::json(status, json_write::to_text(body));
    response.headers.push(("cache-control", "no-store".into()));
    response
}

/// A refusal as this API answers it: the sentence as `{"error": …}`, with 403 for a credential
/// that is not the owner's and 400 for the rest, or the error's own status; its detail to the
/// log only.
pub fn refusal(error: &Error) -> Response {
    answer(error.page_status(), &json!({"error": error.message()})).refusing(error)
}

fn refused(why: Refused) -> Response {
    match why {
        Refused::NotOwner => answer(403, &json!({ "error": sharing::NOT_OWNER })),
        Refused::Sentence(sentence) => answer(400, &json!({ "error": sentence })),
        Refused::Failed(error) => refusal(&error),
    }
}

/// Carries out the owner's call.
pub async fn serve(call: &Call, body: &[u8], ctx: &Ctx<'_>, config: &Config) -> Response {
    let outcome = match call {
        Call::List { project } => sharing::list(ctx, project).await.map(|tokens| {
            let tokens: Vec<serde_json::Value> = tokens
                .iter()
                .map(|t| {
                    json!({"id": t.id, "label": t.label, "access": access(sharing::writes(&t.scope)),
                           "created_at": t.created_at, "last_used_at": t.last_used_at})
                })
                .collect();
            answer(200, &json!({"project": project, "tokens": tokens}))
        }),
        Call::Make { project } => {
            let fields = match form::decode(body) {
                Ok(fields) => fields,
                Err(why) => {
                    let error = Error::InvalidRequest(format!("the form cannot be read: {why}"));
                    return refusal(&error);
                }
            };
            let label = form::field(&fields, "label").unwrap_or_default();
            let write = form::field(&fields, "access") != Some("read");
            sharing::make(ctx, config, project, label, write).await.map(|shared| {
                answer(
                    201,
                    &json!({"project": project, "id": shared.id, "label": shared.label,
                            "access": access(shared.write), "token": shared.token}),
                )
            })
        }
        Call::Revoke { project, token } => sharing::revoke(ctx, project, token)
            .await
            .map(|()| answer(200, &json!({"project": project, "revoked": token}))),
        Call::Delete { project, confirm } => sharing::delete(ctx, project, confirm)
            .await
            .map(|()| answer(200, &json!({ "deleted": project }))),
    };
    outcome.unwrap_or_else(refused)
}

fn access(write: bool) -> &'static str {
    match write {
        true => "write",
        false => "read",
    }
}
