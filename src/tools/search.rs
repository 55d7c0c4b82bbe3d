//! search: finds what was decided and done (North Star and focus changes, tasks and their
//! evidence) by a piece of its text, read-only, in one statement. The answer is records, not a
//! to-do list; get_state's contract is untouched.

use super::args::{Args, Param, Rule, TEXT_MAX};
use super::{Annotations, Handler, ToolDef, ToolResult};
use crate::auth::scope::Reach;
use crate::context::Ctx;
use crate::error::Error;
use crate::render::{self, Searched};
use crate::store::{self, Search};

/// Most hits one call shows, newest first.
pub const LIMIT: usize = 20;

/// The kinds of record a search can be narrowed to.
pub const KINDS: &[&str] = &["north_star", "focus", "main", "cleanup", "record"];

const QUERY: Param = Param {
    name: "query",
    description: "the text to find, in any language (e.g. \"Redis\", \"ログイン画面\"); matched \
                  as written, case aside, anywhere in a statement, why, done-when, task body or \
                  evidence.",
    rule: Rule::Text {
        blank_ok: false,
        max: TEXT_MAX,
    },
    required: true,
};
const PROJECT: Param = Param {
    name: "project_id",
    description: "Optional: search this project only (default: every project this token reaches).",
    rule: Rule::ProjectId,
    required: false,
};
const KIND: Param = Param {
    name: "kind",
    description: "Optional: only North Star changes (north_star), focus changes (focus), or tasks \
                  of one kind (main, cleanup, record).",
    rule: Rule::OneOf(KINDS),
    required: false,
};

pub const DEF: ToolDef = ToolDef {
    name: "search",
    title: "Search decisions and tasks",
    description: &[
        "Finds why and when things were decided, in the project's history. It searches \
                    the North Star and focus changes (with their why and done-when) and the tasks (with their evidence) whose text \
                    holds the query, newest first, at most 20, each with its date, project and \
                    client. Read-only. The lines are records of the past, not tasks to do: \
                    get_state says what to do now.",
    ],
    params: &[QUERY, PROJECT, KIND],
    annotations: Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
    },
    ui: None,
    always_load: false,
    handler: Handler::Reach(|args, reach, ctx| Box::pin(run(args, reach, ctx))),
};

async fn run(args: &Args, reach: Reach<'_>, ctx: &Ctx<'_>) -> Result<ToolResult, Error> {
    // `tools::call` has refused a project outside the scope; with none named, a scoped token
    // searches its own project and a full one every project.
    let project = reach.only();
    let searched = Searched {
        query: args.get(&QUERY),
        project,
        kind: args.opt(&KIND),
    };
    let hits = store::search(
        ctx.db,
        Search {
            query: searched.query,
            reach,
            kind: searched.kind,
            limit: LIMIT,
        },
    )
    .await?;
    Ok(ToolResult::ok(render::records(&searched, &hits)))
}
