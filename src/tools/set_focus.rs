//! set_focus: replaces the project's one focus (本丸) with a single UPSERT.

use super::args::{Args, Param, Rule, PROJECT_ID, TEXT_MAX};
use super::{Annotations, Handler, ToolDef, ToolResult};
use crate::auth::scope::Writable;
use crate::context::Ctx;
use crate::error::Error;
use crate::store::{self, NewFocus};

const STATEMENT: Param = Param {
    name: "statement",
    description: "the focus must name the one thing to do now.",
    rule: Rule::Text {
        blank_ok: false,
        max: TEXT_MAX,
    },
    required: true,
};
const WHY: Param = Param {
    name: "why",
    description: "Optional: why this is the thing to do now. Empty means no reason.",
    rule: Rule::Text {
        blank_ok: true,
        max: TEXT_MAX,
    },
    required: false,
};
const DONE_WHEN: Param = Param {
    name: "done_when",
    description: "Optional: the exit criterion, when this focus counts as done (e.g. \"the wire tests pass on CI\"). get_state shows it with the focus.",
    rule: Rule::Text {
        blank_ok: true,
        max: TEXT_MAX,
    },
    required: false,
};

pub const DEF: ToolDef = ToolDef {
    name: "set_focus",
    title: "Set the focus",
    description: &[
        "Records where the focus moved, before the chat ends: the one thing to do now. \
                    It sets the project's focus (本丸) toward the North Star, with an optional \
                    reason and exit criterion. A project has exactly one focus; this \
                    replaces the previous one (the history keeps it). Setting the same focus again \
                    confirms it. The project must exist (set_north_star creates it).",
    ],
    params: &[PROJECT_ID, STATEMENT, WHY, DONE_WHEN],
    annotations: Annotations {
        read_only: false,
        destructive: false,
        idempotent: true,
    },
    ui: None,
    always_load: false,
    handler: Handler::Write(|args, project, ctx| Box::pin(run(args, project, ctx))),
};

async fn run(args: &Args, project: Writable<'_>, ctx: &Ctx<'_>) -> Result<ToolResult, Error> {
    let project_id = project.id();
    let focus = NewFocus {
        statement: args.get(&STATEMENT),
        why: args.opt(&WHY),
        done_when: args.opt(&DONE_WHEN),
    };
    let written = store::set_focus(ctx.db, project, focus, ctx.change()).await?;
    let Some(anchor) = written else {
        return Ok(ToolResult::error(format!(
            "No project \"{project_id}\" yet, so nothing was written. Call set_north_star with this \
             project_id first, then set_focus."
        )));
    };
    Ok(ToolResult::written(
        format!(
            "Set the focus (本丸) of project \"{project_id}\"; it replaces any previous focus."
        ),
        &anchor,
    ))
}
