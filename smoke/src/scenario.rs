//! The acceptance scenario: three separate clients hand one project across chat generations. How a
//! client is opened (era, handshake, transport) is the caller's business, so the same steps serve all.

use serde_json::json;

use crate::checks::Checks;
use crate::client::Session;
use crate::tools;

const NORTH_STAR: &str = "Ship handoff-mcp v1";
const FOCUS: &str = "Write the D1 store";
const WHY: &str = "Everything else depends on it";
const MAIN_TASK: &str = "Draft the README";
const CLEANUP_TASK: &str = "Remove the debug logging";
const RECORD_TASK: &str = "Note the D1 batch limits";

/// get_state after A's writes: both deferred tasks open, oldest first, the main task never listed.
/// The strings are literal on purpose; the smoke client must not share the server's renderer.
const STATE_BEFORE: &str = concat!(
    "🎯 NORTH STAR: Ship handoff-mcp v1\n",
    "▶ 本丸（今やる1つ）: Write the D1 store（理由: Everything else depends on it）\n",
    "— 以下は後処理（北極星達成後・今は着手しない）—\n",
    "  [cleanup] Remove the debug logging\n",
    "  [record] Note the D1 batch limits",
);

/// get_state once B has completed the cleanup task.
const STATE_AFTER: &str = concat!(
    "🎯 NORTH STAR: Ship handoff-mcp v1\n",
    "▶ 本丸（今やる1つ）: Write the D1 store（理由: Everything else depends on it）\n",
    "— 以下は後処理（北極星達成後・今は着手しない）—\n",
    "  [record] Note the D1 batch limits",
);

/// Opens a fresh client named `who`, recording whatever handshake checks its era needs.
pub type Opener<'a> = dyn FnMut(&str, &mut Checks) -> Box<dyn Session> + 'a;

/// Runs A (writes), B (reads, completes the cleanup task) and C (reads again) against one project.
/// `tag` prefixes every check name so runs of different eras or transports stay apart.
pub fn run(checks: &mut Checks, tag: &str, project: &str, open: &mut Opener) {
    let cleanup_id = run_a(checks, tag, project, open);
    run_b(checks, tag, project, cleanup_id, open);
    run_c(checks, tag, project, open);
}

/// A sets the North Star and the focus and adds one task of each kind; returns the cleanup task's id.
fn run_a(checks: &mut Checks, tag: &str, project: &str, open: &mut Opener) -> Option<String> {
    let mut a = open("A", checks);
    let a = a.as_mut();

    let blank = tools::call(
        a,
        "set_north_star",
        json!({"project_id": project, "text": "   "}),
    );
    checks.record(
        &format!("{tag} A: set_north_star with blank text is a tool error"),
        blank.and_then(|result| result.expect_tool_error()),
    );

    let north_star = tools::call(
        a,
        "set_north_star",
        json!({"project_id": project, "text": NORTH_STAR}),
    );
    checks.record(
        &format!("{tag} A: set_north_star"),
        north_star.and_then(|result| result.expect_ok()),
    );

    let focus = tools::call(
        a,
        "set_focus",
        json!({"project_id": project, "statement": FOCUS, "why": WHY}),
    );
    checks.record(
        &format!("{tag} A: set_focus"),
        focus.and_then(|result| result.expect_ok()),
    );

    let mut cleanup_id = None;
    for (kind, body) in [
        ("main", MAIN_TASK),
        ("cleanup", CLEANUP_TASK),
        ("record", RECORD_TASK),
    ] {
        let added = tools::call(
            a,
            "add_task",
            json!({"project_id": project, "body": body, "kind": kind}),
        )
        .and_then(|result| {
            result.expect_ok()?;
            result.structured_str("task_id")
        });
        let id = checks.keep(
            &format!("{tag} A: add_task {kind} returns a task_id"),
            added,
        );
        if kind == "cleanup" {
            cleanup_id = id;
        }
    }
    cleanup_id
}

/// B, a new client, sees both deferred tasks and completes the cleanup one.
fn run_b(
    checks: &mut Checks,
    tag: &str,
    project: &str,
    cleanup_id: Option<String>,
    open: &mut Opener,
) {
    let mut b = open("B", checks);
    let b = b.as_mut();

    let state = tools::call(b, "get_state", json!({"project_id": project}));
    checks.record(
        &format!("{tag} B: get_state shows A's North Star, focus and both deferred tasks"),
        state.and_then(|result| {
            result.expect_ok()?;
            result.expect_text(STATE_BEFORE)
        }),
    );

    let name = format!("{tag} B: complete_task on the cleanup task");
    let completed = match cleanup_id {
        Some(task_id) => tools::call(b, "complete_task", json!({"task_id": task_id}))
            .and_then(|result| result.expect_ok()),
        None => Err("cannot run: add_task cleanup gave no task_id".to_string()),
    };
    checks.record(&name, completed);
}

/// C, a third client, sees the cleanup task gone and the record task still open.
fn run_c(checks: &mut Checks, tag: &str, project: &str, open: &mut Opener) {
    let mut c = open("C", checks);
    let state = tools::call(c.as_mut(), "get_state", json!({"project_id": project}));
    checks.record(
        &format!("{tag} C: get_state no longer lists the completed cleanup task"),
        state.and_then(|result| {
            result.expect_ok()?;
            result.expect_text(STATE_AFTER)
        }),
    );
}
