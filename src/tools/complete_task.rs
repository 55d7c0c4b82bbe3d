//! complete_task: marks a task done, which takes it off get_state's deferred list.

use super::args::{Args, Param, Rule, TEXT_MAX};
use super::{Annotations, Handler, ToolDef, ToolResult};
use crate::auth::scope::WriteReach;
use crate::context::Ctx;
use crate::error::Error;
use crate::render::preview;
use crate::store::{self, Completion};

const TASK_ID: Param = Param {
    name: "task_id",
    description:
        "The task's id: add_task returned it, and get_state's reference data lists it as task_id=….",
    rule: Rule::TaskId,
    required: true,
};

const EVIDENCE: Param = Param {
    name: "evidence",
    description:
        "Optional: what shows the task is done (a commit, a PR, a test run). The history keeps it.",
    rule: Rule::Text {
        blank_ok: true,
        max: TEXT_MAX,
    },
    required: false,
};

pub const DEF: ToolDef = ToolDef {
    name: "complete_task",
    title: "Complete a task",
    description: &[
        "Marks a finished task done, by its id from add_task or get_state. The id is \
                    add_task's answer or a task_id line of get_state's reference data. A completed task is no longer listed; evidence, if given, is kept \
                    in the history. Completing it again changes nothing.",
    ],
    params: &[TASK_ID, EVIDENCE],
    annotations: Annotations {
        read_only: false,
        destructive: false,
        idempotent: true,
    },
    ui: None,
    always_load: false,
    handler: Handler::WriteReach(|args, reach, ctx| Box::pin(run(args, reach, ctx))),
};

async fn run(args: &Args, reach: WriteReach<'_>, ctx: &Ctx<'_>) -> Result<ToolResult, Error> {
    let task_id = args.get(&TASK_ID);
    // No project_id argument: a scoped caller's one project rides in the store's WHERE, so a task
    // of another project reads as unknown, exactly like one that does not exist.
    let (project_id, kind, anchor, changed) =
        match store::complete_task(ctx.db, task_id, args.opt(&EVIDENCE), ctx.change(), reach)
            .await?
        {
            Completion::Unknown => {
                return Ok(ToolResult::error(format!(
                    "No task \"{}\". Task ids come from add_task, and get_state's reference data \
                 lists each open deferred task as task_id=….",
                    preview(task_id)
                )))
            }
            Completion::Completed {
                project_id,
                kind,
                anchor,
            } => (project_id, kind, anchor, true),
            Completion::AlreadyDone {
                project_id,
                kind,
                anchor,
            } => (project_id, kind, anchor, false),
        };
    let sentence = if changed {
        format!(
            "Completed {} task {task_id} in project \"{project_id}\"; get_state no longer lists it.",
            kind.as_str()
        )
    } else {
        format!("Task {task_id} in project \"{project_id}\" was already done; nothing changed.")
    };
    Ok(ToolResult::written(sentence, &anchor))
}
