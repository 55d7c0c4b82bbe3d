//! add_task: stores a task; cleanup and record tasks are deferred (demoted = 1).

use super::args::{Args, Param, Rule, BODY_MAX, PROJECT_ID};
use super::{Annotations, Handler, ToolDef, ToolResult};
use crate::auth::scope::Writable;
use crate::context::Ctx;
use crate::error::Error;
use crate::model::OPEN_DEFERRED_MAX;
use crate::store::{self, Added};

const BODY: Param = Param {
    name: "body",
    description: "the task must say what is to be done.",
    rule: Rule::Text {
        blank_ok: false,
        max: BODY_MAX,
    },
    required: true,
};
const KIND: Param = Param {
    name: "kind",
    description: "main, cleanup or record.",
    rule: Rule::Kind,
    required: true,
};

pub const DEF: ToolDef = ToolDef {
    name: "add_task",
    title: "Add a task",
    description: &["Records deferred work before the chat ends: cleanup, record or main tasks. \
                    It adds a task to the project and returns its id. kind is main (work toward the \
                    North Star; stored but not listed by get_state, where the focus is the one thing \
                    to do), cleanup or record (deferred: listed by get_state under 後処理 and not to \
                    be started until the North Star is reached). Safe to retry: if an open task of \
                    the same kind and body exists, its id is returned and nothing is added."],
    params: &[PROJECT_ID, BODY, KIND],
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
    let kind = args.kind(&KIND);
    let task_id = ctx.ids.new_id();
    let body = args.get(&BODY);
    let anchor = match store::add_task(ctx.db, &task_id, project, body, kind, ctx.change()).await? {
        Added::New(anchor) => anchor,
        Added::Existing(existing, anchor) => {
            return Ok(ToolResult::written(
                format!(
                    "An open {} task with this body was already there: task {existing} in project \
                     \"{project_id}\". Nothing was added; use that id.",
                    kind.as_str()
                ),
                &anchor,
            ))
        }
        Added::Full => {
            return Ok(ToolResult::error(format!(
                "Project \"{project_id}\" already has {OPEN_DEFERRED_MAX} open deferred tasks, the \
                 most it keeps, so this {} task was not added and nothing was written. Complete one \
                 that is really done (get_state lists their ids), or fold this into one of them.",
                kind.as_str()
            )))
        }
        Added::NoProject => {
            return Ok(ToolResult::error(format!(
                "No project \"{project_id}\" yet, so nothing was written. Call set_north_star with this \
                 project_id first, then add_task."
            )))
        }
    };
    let sentence = if kind.demoted() {
        format!(
            "Added {} task {task_id} to project \"{project_id}\". It is deferred: get_state lists it \
             under 後処理 until complete_task, and it waits until the North Star is reached.",
            kind.as_str()
        )
    } else {
        format!(
            "Added main task {task_id} to project \"{project_id}\". Main tasks are stored but get_state \
             does not list them; the focus stays the one thing to do now."
        )
    };
    Ok(ToolResult::written(sentence, &anchor))
}
