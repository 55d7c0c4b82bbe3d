//! get_state: the project's North Star, focus and open deferred tasks, as the contract text,
//! then the reference block with each deferred task's id.

use super::args::PROJECT_ID;
use super::{Annotations, Handler, ToolDef, ToolResult};
use crate::auth::scope::Readable;
use crate::context::Ctx;
use crate::error::Error;
use crate::protocol::card;
use crate::render;
use crate::store;

pub const DEF: ToolDef = ToolDef {
    name: "get_state",
    title: "Get project state",
    description: &[
        "The project's North Star, focus and tasks: call it first in every chat. It returns \
         where the project stands, in a fixed format: its North Star (🎯), the one focus to work \
         on now (▶ 本丸), and the deferred cleanup/record tasks (後処理) that wait until the North \
         Star is reached. A second text, reference data, gives each deferred task's id for \
         complete_task. ",
        render::DESCRIPTION_TAIL,
    ],
    params: &[PROJECT_ID],
    annotations: Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
    },
    ui: Some(card::URI),
    // The tool every chat starts with: Claude Code lists it loaded, never behind tool search.
    always_load: true,
    handler: Handler::Read(|_, project, ctx| Box::pin(run(project, ctx))),
};

async fn run(project: Readable<'_>, ctx: &Ctx<'_>) -> Result<ToolResult, Error> {
    let project_id = project.id();
    let Some(state) = store::load_state(ctx.db, project).await? else {
        return Ok(ToolResult::error(no_project(project_id)));
    };
    let texts = render::state_texts(&state, ctx.clock.now_ms(), ctx.focus_stale_days);
    Ok(ToolResult::ok_texts(texts.into()))
}

/// get_state's refusal of a project that does not exist (state.txt answers it too).
pub fn no_project(project_id: &str) -> String {
    format!(
        "No project \"{project_id}\" yet. Call set_north_star with this project_id to create it."
    )
}
