//! Prompts: `resume`, which opens a new chat on a project with its state and the fixed
//! instruction. Argument rules and the bodies; errors come back as `PromptError` for dispatch.

use serde_json::{json, Value as Json};

use crate::render;
use crate::store::{self, Sql, StoreError};
use crate::tools;

pub const RESUME: &str = "resume";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptError {
    UnknownPrompt(String),
    /// A missing or malformed argument, as a sentence.
    BadArgument(String),
    UnknownProject(String),
    Store(String),
}

impl From<StoreError> for PromptError {
    fn from(e: StoreError) -> Self {
        PromptError::Store(e.to_string())
    }
}

pub fn list() -> Json {
    json!({"prompts": [{
        "name": RESUME,
        "title": "Resume a project",
        "description": "Start a new chat on a project: its North Star, focus and deferred tasks, with the instruction to state the North Star and advance the one focus.",
        "arguments": [{
            "name": "project_id",
            "description": "The project's id, e.g. \"handoff-mcp\".",
            "required": true,
        }],
    }]})
}

/// prompts/get: the resume message for a project.
pub async fn get(db: &impl Sql, name: &str, arguments: Option<&Json>) -> Result<Json, PromptError> {
    if name != RESUME {
        return Err(PromptError::UnknownPrompt(name.chars().take(64).collect()));
    }
    let project_id = arguments
        .and_then(|a| a.get("project_id"))
        .and_then(Json::as_str)
        .ok_or_else(|| PromptError::BadArgument("resume needs the argument project_id".into()))?;
    if !tools::is_project_id(project_id) {
        return Err(PromptError::BadArgument(format!(
            "project_id must be 1-{} characters of ASCII letters, digits, '-', '_' or '.', starting with a letter or digit",
            tools::PROJECT_ID_MAX
        )));
    }
    let state = store::load_state(db, project_id)
        .await?
        .ok_or_else(|| PromptError::UnknownProject(project_id.to_owned()))?;
    let text = format!(
        "Continue project \"{project_id}\". Its state (handoff-mcp get_state):\n\n{}\n\n{}\n\n{}",
        render::render(&state),
        render::reference(&state),
        render::DESCRIPTION_TAIL
    );
    Ok(json!({
        "description": format!("Resume project {project_id}"),
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }))
}
