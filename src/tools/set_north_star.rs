//! set_north_star: creates the project or replaces its North Star.

use super::{Annotations, Args, Outcome, Param, Rule, ToolDef};
use crate::store::{self, Sql, StoreError, Upsert};

pub const DEF: ToolDef = ToolDef {
    name: "set_north_star",
    title: "Set the North Star",
    description: &[
        "Sets the project's North Star: the one goal everything else serves. Creates the \
                    project if it does not exist yet, otherwise replaces the North Star. The text \
                    must not be empty.",
    ],
    params: &[
        Param {
            name: "project_id",
            description: "The project's id, e.g. \"handoff-mcp\".",
            rule: Rule::ProjectId,
            required: true,
        },
        Param {
            name: "text",
            description: "the North Star must say what the project is for, in a sentence.",
            rule: Rule::Text { blank_ok: false },
            required: true,
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
    let (upsert, anchor) = store::set_north_star(db, project_id, args.get("text")).await?;
    let sentence = match upsert {
        Upsert::Created => format!(
            "Created project \"{project_id}\" with its North Star. Next, set_focus names the one thing to do now."
        ),
        Upsert::Updated => format!("Updated the North Star of project \"{project_id}\"."),
    };
    Ok(Outcome::written(sentence, &anchor))
}
