//! set_focus: replaces the project's one focus (本丸) with a single UPSERT.

use super::{Annotations, Args, Outcome, Param, Rule, ToolDef};
use crate::store::{self, Sql, StoreError};

pub const DEF: ToolDef = ToolDef {
    name: "set_focus",
    title: "Set the focus",
    description: &[
        "Sets the project's focus (本丸): the one thing to do now toward the North Star, \
                    with an optional reason. A project has exactly one focus; this replaces the \
                    previous one. The project must exist (set_north_star creates it).",
    ],
    params: &[
        Param {
            name: "project_id",
            description: "The project's id, e.g. \"handoff-mcp\".",
            rule: Rule::ProjectId,
            required: true,
        },
        Param {
            name: "statement",
            description: "the focus must name the one thing to do now.",
            rule: Rule::Text { blank_ok: false },
            required: true,
        },
        Param {
            name: "why",
            description: "Optional: why this is the thing to do now. Empty means no reason.",
            rule: Rule::Text { blank_ok: true },
            required: false,
        },
    ],
    annotations: Annotations {
        read_only: false,
        destructive: false,
        idempotent: true,
    },
};

pub async fn run(args: &Args, db: &impl Sql) -> Result<Outcome, StoreError> {
    let project_id = args.get("project_id");
    let written = store::set_focus(db, project_id, args.get("statement"), args.opt("why")).await?;
    let Some(anchor) = written else {
        return Ok(Outcome::error(format!(
            "No project \"{project_id}\" yet, so nothing was written. Call set_north_star with this \
             project_id first, then set_focus."
        )));
    };
    Ok(Outcome::written(
        format!(
            "Set the focus (本丸) of project \"{project_id}\"; it replaces any previous focus."
        ),
        &anchor,
    ))
}
