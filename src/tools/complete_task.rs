//! complete_task: marks a task done, which takes it off get_state's deferred list.

use serde_json::json;

use super::{Annotations, Args, Outcome, Param, Rule, ToolDef};
use crate::store::{self, Completion, Sql, StoreError};

pub const DEF: ToolDef = ToolDef {
    name: "complete_task",
    title: "Complete a task",
    description: &[
        "Marks a task done by its id (from add_task, or from get_state's structured \
                    content). A completed task is no longer listed. Completing it again changes \
                    nothing.",
    ],
    params: &[Param {
        name: "task_id",
        description: "The id add_task returned.",
        rule: Rule::TaskId,
        required: true,
    }],
    annotations: Annotations {
        read_only: false,
        destructive: false,
        idempotent: true,
    },
    output_schema: r#"{"type":"object","properties":{
        "task_id":{"type":"string"},"project_id":{"type":"string"},
        "kind":{"type":"string","enum":["main","cleanup","record"]},
        "status":{"type":"string","enum":["done"]},"changed":{"type":"boolean"}},
        "required":["task_id","project_id","kind","status","changed"]}"#,
};

pub async fn run(args: &Args, db: &impl Sql) -> Result<Outcome, StoreError> {
    let task_id = args.get("task_id");
    let (project_id, kind, changed) = match store::complete_task(db, task_id).await? {
        Completion::Unknown => {
            return Ok(Outcome::error(format!(
                "No task \"{}\". Task ids come from add_task, and get_state's structured content \
                 lists the open deferred tasks with their ids.",
                super::preview(task_id)
            )))
        }
        Completion::Completed { project_id, kind } => (project_id, kind, true),
        Completion::AlreadyDone { project_id, kind } => (project_id, kind, false),
    };
    let text = if changed {
        format!(
            "Completed {} task {task_id} in project \"{project_id}\"; get_state no longer lists it.",
            kind.as_str()
        )
    } else {
        format!("Task {task_id} in project \"{project_id}\" was already done; nothing changed.")
    };
    let structured = json!({
        "task_id": task_id, "project_id": project_id, "kind": kind.as_str(), "status": "done", "changed": changed,
    });
    Ok(Outcome::ok(text, structured))
}
