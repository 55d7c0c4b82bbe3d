//! The acceptance scenario: three separate clients hand one project across chat generations. How a
//! client is opened (era, handshake, transport) is the caller's business, so the same steps serve all.

use serde_json::json;

use crate::checks::{ensure, Checks};
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

/// The reference block after STATE_BEFORE; `{cleanup}` and `{record}` stand for the ids A got.
const REFERENCE_HEAD: &str = "Reference data, not a to-do list: when the North Star and the focus were set, and the task_id of each open deferred task, for complete_task once that task is really done.";
/// The 🎯 and ▶ lines every write ends with once the focus is set.
const ANCHOR: &str = concat!(
    "🎯 NORTH STAR: Ship handoff-mcp v1\n",
    "▶ 本丸（今やる1つ）: Write the D1 store（理由: Everything else depends on it）",
);

/// Opens a fresh client named `who`, recording whatever handshake checks its era needs.
pub type Opener<'a> = dyn FnMut(&str, &mut Checks) -> Box<dyn Session> + 'a;

/// Runs A (writes), B (reads, completes the cleanup task) and C (reads again) against one project.
/// `tag` prefixes every check name so runs of different eras or transports stay apart.
pub fn run(checks: &mut Checks, tag: &str, project: &str, open: &mut Opener) {
    let ids = run_a(checks, tag, project, open);
    run_b(checks, tag, project, &ids, open);
    run_c(checks, tag, project, &ids, open);
}

/// The ids A's add_task calls reported in their text.
#[derive(Default)]
struct Ids {
    cleanup: Option<String>,
    record: Option<String>,
}

/// A sets the North Star and the focus and adds one task of each kind; returns the ids.
fn run_a(checks: &mut Checks, tag: &str, project: &str, open: &mut Opener) -> Ids {
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
        &format!("{tag} A: set_focus, its text ending with the 🎯 and ▶ lines"),
        focus.and_then(|result| {
            result.expect_ok()?;
            result.expect_text(&format!(
                "Set the focus (本丸) of project \"{project}\"; it replaces any previous focus.\n{ANCHOR}"
            ))
        }),
    );

    let mut ids = Ids::default();
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
            ensure(result.text.ends_with(&format!("\n{ANCHOR}")), || {
                format!(
                    "add_task's text does not end with the anchor: {:?}",
                    result.text
                )
            })?;
            result.added_task_id()
        });
        let id = checks.keep(
            &format!("{tag} A: add_task {kind} names its task_id and ends with the anchor"),
            added,
        );
        match kind {
            "cleanup" => ids.cleanup = id,
            "record" => ids.record = id,
            _ => {}
        }
    }
    ids
}

/// The reference block listing these (id, kind, body) lines, for a project whose North Star and
/// focus this client set today. The date is the server's; the smoke client reads it from the
/// North Star line rather than computing it, and checks that both lines say today.
fn reference(tasks: &[(&str, &str, &str)], seen: &str) -> String {
    let date = seen
        .lines()
        .find(|l| l.starts_with("north_star: set "))
        .and_then(|l| l.strip_prefix("north_star: set "))
        .and_then(|l| l.split(' ').next())
        .unwrap_or("?");
    // The server names the credential first (a full-access token is the owner's), then the
    // client by its User-Agent.
    let by = format!("owner ({})", crate::http::USER_AGENT);
    // The block starts with a line break, so that it reads as its own lines even where a
    // client glues the text items together.
    let mut out = format!(
        "\n{REFERENCE_HEAD}\nnorth_star: set {date} (today) by {by}\nfocus: set {date} (today) by {by}"
    );
    for (id, kind, body) in tasks {
        out.push_str(&format!("\ntask_id={id} [{kind}] {body}"));
    }
    out
}

/// B, a new client, sees both deferred tasks and completes the cleanup one with the id it read
/// in get_state's text, as a text-only model would.
fn run_b(checks: &mut Checks, tag: &str, project: &str, ids: &Ids, open: &mut Opener) {
    let mut b = open("B", checks);
    let b = b.as_mut();

    let (Some(cleanup), Some(record)) = (&ids.cleanup, &ids.record) else {
        checks.record(
            &format!("{tag} B: get_state"),
            Err("cannot run: A's add_task gave no ids".to_string()),
        );
        return;
    };
    let state = tools::call(b, "get_state", json!({"project_id": project}));
    let read_id = checks.keep(
        &format!("{tag} B: get_state shows the contract text, then the ids as reference data"),
        state.and_then(|result| {
            result.expect_ok()?;
            let seen = result.texts.get(1).map(String::as_str).unwrap_or_default();
            result.expect_texts(&[
                STATE_BEFORE,
                &reference(
                    &[
                        (cleanup, "cleanup", CLEANUP_TASK),
                        (record, "record", RECORD_TASK),
                    ],
                    seen,
                ),
            ])?;
            let tasks = result.reference_tasks()?;
            tasks
                .into_iter()
                .find(|(_, kind, _)| kind == "cleanup")
                .map(|(id, _, _)| id)
                .ok_or_else(|| "no cleanup line in the reference block".to_string())
        }),
    );

    let name = format!("{tag} B: complete_task with the id read from get_state's text");
    let completed = match read_id {
        Some(task_id) => {
            tools::call(b, "complete_task", json!({"task_id": task_id})).and_then(|result| {
                result.expect_ok()?;
                ensure(result.text.starts_with("Completed cleanup task "), || {
                    format!("unexpected text {:?}", result.text)
                })?;
                ensure(result.text.ends_with(&format!("\n{ANCHOR}")), || {
                    format!("no anchor at the end of {:?}", result.text)
                })
            })
        }
        None => Err("cannot run: no id in get_state's text".to_string()),
    };
    checks.record(&name, completed);
}

/// C, a third client, sees the cleanup task gone and the record task still open, and finds it
/// by a piece of its text through the search tool (D1's trigram index, under wrangler dev).
fn run_c(checks: &mut Checks, tag: &str, project: &str, ids: &Ids, open: &mut Opener) {
    let mut c = open("C", checks);
    let state = tools::call(c.as_mut(), "get_state", json!({"project_id": project}));
    let record = ids.record.as_deref().unwrap_or("?");
    checks.record(
        &format!("{tag} C: get_state no longer lists the completed cleanup task"),
        state.and_then(|result| {
            result.expect_ok()?;
            let seen = result.texts.get(1).map(String::as_str).unwrap_or_default();
            result.expect_texts(&[
                STATE_AFTER,
                &reference(&[(record, "record", RECORD_TASK)], seen),
            ])
        }),
    );
    let found = tools::call(
        c.as_mut(),
        "search",
        json!({"query": "DEBUG LOGGING", "project_id": project}),
    );
    checks.record(
        &format!("{tag} C: search finds the completed cleanup task as a record"),
        found.and_then(|result| {
            result.expect_ok()?;
            let text = result.texts.concat();
            let head = format!(
                "Records, not tasks to do: what was decided and done that matches \"DEBUG LOGGING\" in project \"{project}\", newest first (times UTC)."
            );
            let line = format!("  {project}  cleanup task completed: {CLEANUP_TASK} — by ");
            ensure(
                text.starts_with(&head) && text.contains(&line) && text.ends_with("\n1 record matches."),
                || text.clone(),
            )
        }),
    );
}
