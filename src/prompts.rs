//! Prompts: `resume`, which opens a new chat on a project with its state and the fixed
//! instruction, for a project the caller's scope reaches. Argument rules and the bodies;
//! refusals are `Error`s for dispatch to reply with.

use serde_json::{json, Value as Json};

use crate::context::Ctx;
use crate::error::Error;
use crate::json_read::Node;
use crate::model::{self, PROJECT_ID_MAX};
use crate::render;
use crate::store;
use crate::tools;

pub const RESUME: &str = "resume";

pub fn list() -> Json {
    json!({"prompts": [{
        "name": RESUME,
        "title": "Resume a project",
        "description": "Start a new chat on a project: its North Star, focus and deferred tasks, with the instruction to state the North Star and advance the one focus.",
        "arguments": [{
            "name": "project_id",
            "description": "The project's id, e.g. \"handoff-mcp\". May be left out when the connection reaches one project.",
            "required": false,
        }],
    }]})
}

/// prompts/get: the resume message for a project.
pub async fn get(ctx: &Ctx<'_>, name: &str, arguments: Option<&Node<'_>>) -> Result<Json, Error> {
    if name != RESUME {
        return Err(Error::InvalidParams(format!(
            "Unknown prompt \"{}\"; the prompts are: {RESUME}",
            render::clip(name, 64)
        )));
    }
    let scope = &ctx.caller.scope;
    let project_id = arguments
        .and_then(|a| a.get("project_id"))
        .and_then(Node::as_str)
        .filter(|id| !id.is_empty())
        .or(scope.project())
        .ok_or_else(|| {
            Error::InvalidParams(
                "resume needs the argument project_id: this connection reaches several projects"
                    .into(),
            )
        })?;
    if !model::is_project_id(project_id) {
        return Err(Error::InvalidParams(format!(
            "project_id must be 1-{PROJECT_ID_MAX} characters of ASCII letters, digits, '-', '_' or '.', starting with a letter or digit"
        )));
    }
    let project = scope
        .readable(project_id)
        .ok_or_else(|| Error::InvalidParams(tools::out_of_reach(scope, project_id)))?;
    let state = store::load_state(ctx.db, project).await?.ok_or_else(|| {
        Error::InvalidParams(format!(
            "No project {project_id:?} yet: call the set_north_star tool with this project_id first"
        ))
    })?;
    let [contract, reference] =
        render::state_texts(&state, ctx.clock.now_ms(), ctx.focus_stale_days);
    let text = format!(
        "Continue project \"{project_id}\". Its state (handoff-mcp get_state):\n\n{contract}\n{reference}\n\n{}",
        render::DESCRIPTION_TAIL
    );
    Ok(json!({
        "description": format!("Resume project {project_id}"),
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }))
}
