//! set_north_star: creates the project or replaces its North Star.

use super::args::{Args, Param, Rule, PROJECT_ID, TEXT_MAX};
use super::{Annotations, Handler, ToolDef, ToolResult};
use crate::auth::scope::Writable;
use crate::context::Ctx;
use crate::error::Error;
use crate::store::{self, Upsert};

const TEXT: Param = Param {
    name: "text",
    description: "the North Star must say what the project is for, in a sentence.",
    rule: Rule::Text {
        blank_ok: false,
        max: TEXT_MAX,
    },
    required: true,
};

pub const DEF: ToolDef = ToolDef {
    name: "set_north_star",
    title: "Set the North Star",
    description: &[
        "Sets the project's North Star: the one goal everything else serves. Creates the \
                    project if it does not exist yet, otherwise replaces the North Star. The text \
                    must not be empty.",
    ],
    params: &[PROJECT_ID, TEXT],
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
    let (upsert, anchor) =
        store::set_north_star(ctx.db, project, args.get(&TEXT), ctx.change()).await?;
    let sentence = match upsert {
        Upsert::Created => format!(
            "Created project \"{project_id}\" with its North Star. Next, set_focus names the one thing to do now."
        ),
        Upsert::Updated => format!("Updated the North Star of project \"{project_id}\"."),
    };
    Ok(ToolResult::written(sentence, &anchor))
}
