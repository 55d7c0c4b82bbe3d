//! Resources: each project's state, `handoff://projects/{project_id}/state`, and its history,
//! `handoff://projects/{project_id}/history`.
//! URI parsing, the template and the list/read bodies, within the caller's scope: a scoped
//! token lists its one project, and any other project's resources read as not found, exactly
//! like those of one that does not exist. Refusals are `Error`s for dispatch to reply with; no
//! wire envelope and no SQL here.

use serde_json::{json, Value as Json};

use crate::auth::scope::Scope;
use crate::context::Ctx;
use crate::error::Error;
use crate::model;
use crate::protocol::card;
use crate::render;
use crate::store::{self, Sql};

pub const URI_PREFIX: &str = "handoff://projects/";
pub const URI_SUFFIX: &str = "/state";
pub const HISTORY_SUFFIX: &str = "/history";
pub const TEMPLATE: &str = "handoff://projects/{project_id}/state";
/// The state and the history of the one project a credential reaches, without its id.
pub const OWN_STATE: &str = "handoff://state";
pub const OWN_HISTORY: &str = "handoff://history";
pub const HISTORY_TEMPLATE: &str = "handoff://projects/{project_id}/history";

/// Which resource of a project a URI names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    State,
    History,
}
/// Projects per resources/list page.
pub const PAGE: usize = 100;

pub fn uri(project_id: &str) -> String {
    format!("{URI_PREFIX}{project_id}{URI_SUFFIX}")
}

/// The project id a URI names and which of its resources, if it is one of ours with a
/// well-formed id.
pub fn parse(uri: &str) -> Option<(&str, Kind)> {
    let rest = uri.strip_prefix(URI_PREFIX)?;
    let (id, kind) = match rest.strip_suffix(URI_SUFFIX) {
        Some(id) => (id, Kind::State),
        None => (rest.strip_suffix(HISTORY_SUFFIX)?, Kind::History),
    };
    model::is_project_id(id).then_some((id, kind))
}

/// The project id a URI names, if it is one of ours with a well-formed id.
pub fn project_of(uri: &str) -> Option<&str> {
    parse(uri).map(|(id, _)| id)
}

pub fn templates() -> Json {
    json!({"resourceTemplates": [{
        "uriTemplate": TEMPLATE,
        "name": "project-state",
        "title": "Project state",
        "description": "A project's North Star, focus and open deferred tasks: get_state's fixed-format text, then its reference data (each deferred task's id for complete_task).",
        "mimeType": "text/plain",
    }, {
        "uriTemplate": HISTORY_TEMPLATE,
        "name": "project-history",
        "title": "Project history",
        "description": "A project's North Star changes, focus changes and task completions, newest first, one line each with its UTC time, the why or evidence, and the client that made it.",
        "mimeType": "text/plain",
    }]})
}

/// One page of the known projects the scope reaches, after `cursor` (the last id of the
/// previous page).
pub async fn list(db: &dyn Sql, scope: &Scope, cursor: Option<&str>) -> Result<Json, Error> {
    if cursor.is_some_and(|c| !model::is_project_id(c)) {
        return Err(Error::InvalidParams("Invalid cursor".into()));
    }
    let mut ids = store::project_ids(db, cursor, PAGE + 1, scope.reach()).await?;
    let next = (ids.len() > PAGE).then(|| {
        ids.truncate(PAGE);
        ids.last().cloned().unwrap_or_default()
    });
    let resources: Vec<Json> = ids
        .iter()
        .map(|id| {
            json!({
                "uri": uri(id),
                "name": id,
                "title": format!("State of project {id}"),
                "mimeType": "text/plain",
            })
        })
        .collect();
    let mut body = json!({ "resources": resources });
    if let Some(next) = next {
        body["nextCursor"] = json!(next);
    }
    Ok(body)
}

/// A resource the URI names. A project's state is get_state's two texts, the contract and the
/// reference block, as one text separated by a blank line (one content item per resource, as
/// clients expect; `render::state_texts` starts the block with its line break); its history
/// is `render::history`. get_state's MCP Apps card is read here too, though resources/list
/// leaves it out (hosts find it through the tool, as the extension allows).
pub async fn read(ctx: &Ctx<'_>, uri: &str) -> Result<Json, Error> {
    if uri == card::URI {
        return Ok(card::read());
    }
    let not_found = || Error::ResourceNotFound {
        uri: uri.to_owned(),
    };
    let scope = &ctx.caller.scope;
    let named = match uri {
        OWN_STATE => scope.project().map(|id| (id, Kind::State)),
        OWN_HISTORY => scope.project().map(|id| (id, Kind::History)),
        _ => parse(uri),
    };
    let (project, kind) = named
        .and_then(|(id, kind)| Some((scope.readable(id)?, kind)))
        .ok_or_else(not_found)?;
    let text = match kind {
        Kind::State => {
            let state = store::load_state(ctx.db, project)
                .await?
                .ok_or_else(not_found)?;
            let [contract, reference] =
                render::state_texts(&state, ctx.clock.now_ms(), ctx.focus_stale_days);
            format!("{contract}\n{reference}")
        }
        Kind::History => {
            let history = store::load_history(ctx.db, project)
                .await?
                .ok_or_else(not_found)?;
            render::history(&history)
        }
    };
    Ok(json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}))
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert_eq!(uri("p-1"), "handoff://projects/p-1/state");
        assert_eq!(project_of("handoff://projects/p-1/state"), Some("p-1"));
        assert_eq!(
            parse("handoff://projects/p-1/history"),
            Some(("p-1", Kind::History))
        );
        for bad in [
            "handoff://projects//history",
            "handoff://projects/p/historyx",
            "handoff://projects//state",
            "handoff://projects/a b/state",
            "handoff://projects/p",
            "test://x",
            "handoff://projects/p/state/x",
        ] {
            assert_eq!(project_of(bad), None, "{bad}");
        }
    }
}
