//! D1's own failures at the wire: each tool failed at each point a batch can fail (before it, at
//! each of its statements, after it committed), once or twice in passing, once overloaded,
//! refused, or with an answer that cannot be read; what the model reads, and the rows and the
//! history afterwards. The faults carry the messages D1 documents, through the classification
//! the D1 adapter uses. `cargo test faults -- --nocapture` prints the table.

use std::fmt::Write;

use handoff_mcp::sqlite::{self, Fault, Faulty, Point};
use handoff_mcp::store::{self, retry, StoreError};
use serde_json::{json, Value as Json};

use crate::support::{texts, Server, NOW_MS};

const HOUR: i64 = 3_600_000;
/// D1's messages, as its error list words them.
const LOST: &str = "D1_ERROR: Network connection lost.";
const OVERLOADED: &str = "D1_ERROR: D1 DB is overloaded. Too many requests queued.";
const REFUSED: &str = "D1_ERROR: D1 DB's isolate exceeded its memory limit and was reset.";

/// How a call's batch fails.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Schedule {
    /// In passing, once: the retry makes the call succeed.
    PassingOnce,
    /// In passing, on the attempt and on its retry.
    PassingTwice,
    /// Overloaded: not retried.
    Overloaded,
    /// Refused: not retried, and the batch rolled back.
    Refused,
    /// The answer came back in a shape the store cannot read: not retried.
    Unreadable,
}

impl Schedule {
    const ALL: [Schedule; 5] = [
        Schedule::PassingOnce,
        Schedule::PassingTwice,
        Schedule::Overloaded,
        Schedule::Refused,
        Schedule::Unreadable,
    ];

    /// The faults the attempts meet, and whether the schedule can strike at `point` (D1
    /// refuses a batch before it commits, and an unreadable answer comes after it did).
    fn faults(self, point: Point) -> Option<Vec<Fault>> {
        let fault = |error: StoreError| Fault { point, error };
        let after = point == Point::AfterCommit;
        Some(match self {
            Schedule::PassingOnce => vec![fault(retry::classify(LOST.into()))],
            Schedule::PassingTwice => vec![fault(retry::classify(LOST.into())); 2],
            Schedule::Overloaded if matches!(point, Point::Before | Point::AfterCommit) => {
                vec![fault(retry::classify(OVERLOADED.into()))]
            }
            Schedule::Refused if !after => vec![fault(retry::classify(REFUSED.into()))],
            Schedule::Unreadable if after => vec![fault(StoreError::Decode("a cell"))],
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Schedule::PassingOnce => "lost once",
            Schedule::PassingTwice => "lost twice",
            Schedule::Overloaded => "overloaded",
            Schedule::Refused => "refused",
            Schedule::Unreadable => "unreadable",
        }
    }
}

/// A project with a North Star, a focus and an open cleanup task (`task-1`), written an hour
/// before the calls under test, which run at `NOW_MS`.
fn seeded() -> Server {
    let s = Server::new();
    s.now.set(NOW_MS - HOUR);
    s.ok(
        "set_north_star",
        json!({"project_id": "p", "text": "Ship v2"}),
    );
    s.ok(
        "set_focus",
        json!({"project_id": "p", "statement": "Write the store"}),
    );
    s.ok(
        "add_task",
        json!({"project_id": "p", "body": "Remove the debug logs", "kind": "cleanup"}),
    );
    s.now.set(NOW_MS);
    s
}

/// Each tool's call, and a label for the table.
fn calls() -> Vec<(&'static str, &'static str, Json)> {
    vec![
        ("get_state", "get_state", json!({"project_id": "p"})),
        (
            "set_north_star (new)",
            "set_north_star",
            json!({"project_id": "q", "text": "Ship q"}),
        ),
        (
            "set_north_star",
            "set_north_star",
            json!({"project_id": "p", "text": "Ship v3"}),
        ),
        (
            "set_focus",
            "set_focus",
            json!({"project_id": "p", "statement": "Fail D1 everywhere", "why": "retries"}),
        ),
        (
            "add_task",
            "add_task",
            json!({"project_id": "p", "body": "Note the retry", "kind": "record"}),
        ),
        (
            "complete_task",
            "complete_task",
            json!({"task_id": "task-1", "evidence": "the fault table"}),
        ),
    ]
}

/// What a call answered: its texts and whether it is an error.
fn answer(s: &Server, tool: &str, arguments: &Json) -> (Vec<String>, bool) {
    let result = s.call(tool, arguments.clone());
    (texts(&result), result["isError"] == true)
}

fn events(s: &Server) -> usize {
    s.db.stored("SELECT count(*) || '' FROM event")
        .parse()
        .unwrap()
}

/// The sentence a tool's storage failure is told in, by what the tool can have written.
fn sentence(tool: &str, schedule: Schedule) -> String {
    let read = tool == "get_state";
    match (read, schedule) {
        (true, Schedule::PassingTwice | Schedule::Overloaded) => format!(
            "The database could not be read just now; nothing was written, and calling {tool} again is safe."
        ),
        (true, _) => format!(
            "The database could not be read; nothing was written, and calling {tool} again is safe but may fail the same way."
        ),
        (false, Schedule::Refused) => format!(
            "The database refused the change; nothing was written, and calling {tool} again is safe but may be refused the same way."
        ),
        (false, _) => format!(
            "The database failed while saving; the change may or may not have been saved, and calling {tool} again with the same arguments is safe: it is recorded once."
        ),
    }
}

/// Every tool × failure point × schedule: one passing failure is retried and the call answers as
/// it would have without it, with exactly one write (one event); otherwise the model reads one
/// sentence, and the rows and the history are as they were, or, where the batch committed, as
/// after exactly one call. Prints the table.
#[test]
fn every_tool_at_every_failure_point() {
    let mut table = String::from(
        "| tool | failure point | fault | answer | rows after | events |\n|---|---|---|---|---|---|\n",
    );
    for (label, tool, arguments) in calls() {
        // The call without a fault: its answer, the rows after it, and its batch's statements.
        let clean = seeded();
        let before = clean.db.dump();
        let events_before = events(&clean);
        let clean_answer = answer(&clean, tool, &arguments);
        assert!(!clean_answer.1, "{label}: {clean_answer:?}");
        let after_one = clean.db.dump();
        let statements = *clean.db.faults.attempts().last().unwrap();
        let mut points = vec![Point::Before];
        points.extend((0..statements).map(Point::Statement));
        points.push(Point::AfterCommit);
        for point in points {
            for schedule in Schedule::ALL {
                let Some(faults) = schedule.faults(point) else {
                    continue;
                };
                let s = seeded();
                let (batches, attempts) = (s.db.batches.get(), s.db.faults.attempts().len());
                s.db.faults.plan(faults.into_iter().map(Some));
                let got = answer(&s, tool, &arguments);
                let case = format!("{label}, {point:?}, {schedule:?}");
                // One round trip as the core sees it; the retry is the adapter's second attempt.
                assert_eq!(s.db.batches.get(), batches + 1, "{case}");
                let retried = matches!(schedule, Schedule::PassingOnce | Schedule::PassingTwice);
                let made = s.db.faults.attempts().len() - attempts;
                assert_eq!(made, if retried { 2 } else { 1 }, "{case}");
                // complete_task's retry after its first attempt committed finds the task done:
                // one call cannot be told from a concurrent one of the same client in the same
                // millisecond, so it answers "already done" (one event, the rows as after one).
                let done_before = tool == "complete_task" && point == Point::AfterCommit;
                let said = if schedule == Schedule::PassingOnce && done_before {
                    assert!(
                        got.0[0].starts_with("Task task-1 in project \"p\" was already done"),
                        "{case}"
                    );
                    "already done (its first attempt committed)".to_owned()
                } else if schedule == Schedule::PassingOnce {
                    assert_eq!(got, clean_answer, "{case}");
                    "as without the fault".to_owned()
                } else {
                    assert_eq!(got, (vec![sentence(tool, schedule)], true), "{case}");
                    let short: String = got.0[0].split(';').next().unwrap().into();
                    format!("isError: \"{short}; …\"")
                };
                // A committed batch is there once, whatever was said; a failed one left nothing.
                let committed = schedule == Schedule::PassingOnce || point == Point::AfterCommit;
                let rows = s.db.dump();
                let (expected, as_what) = match committed {
                    _ if after_one == before => (&before, "unchanged"),
                    true => (&after_one, "as after one call"),
                    false => (&before, "as before"),
                };
                assert_eq!(&rows, expected, "{case}");
                let point = match point {
                    Point::Before => "before the batch".to_owned(),
                    Point::Statement(k) => format!("statement {} of {statements}", k + 1),
                    Point::AfterCommit => "after it committed".to_owned(),
                };
                let added = events(&s) - events_before;
                writeln!(
                    table,
                    "| {label} | {point} | {} | {said} | {as_what} | +{added} |",
                    schedule.name()
                )
                .unwrap();
            }
        }
    }
    println!("{table}");
    // Each write records one event, and a repeat of it none: the table's +1s are that one.
    assert!(table.contains("| complete_task | after it committed | lost once | already done (its first attempt committed) | as after one call | +1 |"), "{table}");
    assert!(table.contains("| get_state | before the batch | lost twice | isError: \"The database could not be read just now; …\" | unchanged | +0 |"), "{table}");
}

/// A retried write answers as the first attempt would have, even where that attempt committed:
/// the project it created is still "created". (complete_task's retry says "already done":
/// see `every_tool_at_every_failure_point`.)
#[test]
fn a_retry_after_commit_answers_as_the_first_attempt() {
    let (tool, arguments) = (
        "set_north_star",
        json!({"project_id": "q", "text": "Ship q"}),
    );
    let said = "Created project \"q\" with its North Star.";
    let s = seeded();
    s.db.faults.plan([Some(Fault {
        point: Point::AfterCommit,
        error: retry::classify(LOST.into()),
    })]);
    let (texts, is_error) = answer(&s, tool, &arguments);
    assert!(!is_error && texts[0].starts_with(said), "{texts:?}");
    // A later call is another call: it finds the work done.
    s.now.set(NOW_MS + 1);
    let (texts, _) = answer(&s, tool, &arguments);
    assert!(!texts[0].starts_with(said), "{texts:?}");
}

/// Reads outside the tools keep their JSON-RPC error (resources/read, prompts/get) or error page
/// (the web view), with the read's sentence; a web form is the tool's, told as the tool's.
#[test]
fn other_surfaces_tell_the_same_sentence() {
    let lost_twice = || {
        vec![
            Some(Fault {
                point: Point::Before,
                error: retry::classify(LOST.into()),
            });
            2
        ]
    };
    let read =
        "The database could not be read just now; nothing was written, and asking again is safe.";
    let s = seeded();
    for (method, params) in [
        (
            "resources/read",
            json!({"uri": "handoff://projects/p/state"}),
        ),
        (
            "prompts/get",
            json!({"name": "resume", "arguments": {"project_id": "p"}}),
        ),
    ] {
        s.db.faults.plan(lost_twice());
        let reply = s.stateless(json!(3), method, params);
        assert_eq!(reply.status, 200);
        assert_eq!(
            reply.json()["error"],
            json!({"code": -32603, "message": read}),
            "{method}"
        );
    }
    s.db.faults.plan(lost_twice());
    let page = s.http("GET", "/test-token/projects/p", &[], b"");
    assert_eq!(page.status, 500);
    assert!(page.body.contains(read), "{}", page.body);
    assert!(!page.body.contains("D1_ERROR"), "{}", page.body);
    // The plain-text state (`plain`) is get_state itself: the tool's sentence, as text.
    s.db.faults.plan(lost_twice());
    let text = s.http("GET", "/test-token/projects/p/state.txt", &[], b"");
    assert_eq!(
        (text.status, text.header("content-type")),
        (500, Some("text/plain; charset=utf-8"))
    );
    let (told, _) = {
        s.db.faults.plan(lost_twice());
        answer(&s, "get_state", &json!({"project_id": "p"}))
    };
    assert_eq!(text.body, format!("{}\n", told[0]));
    assert!(!text.body.contains("D1_ERROR"), "{}", text.body);

    // A form whose batch committed and whose answer was lost twice: told as set_focus's.
    let before = s.db.dump();
    s.db.faults
        .plan([Point::AfterCommit, Point::Before].map(|point| {
            Some(Fault {
                point,
                error: retry::classify(LOST.into()),
            })
        }));
    let posted = s.http(
        "POST",
        "/test-token/projects/p/set_focus",
        &[
            ("Origin", crate::support::ORIGIN),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        b"statement=Saved+or+not",
    );
    assert_eq!(posted.status, 500);
    assert!(posted.body.contains("The database failed while saving; the change may or may not have been saved, and calling set_focus again with the same arguments is safe: it is recorded once."), "{}", posted.body);
    assert_ne!(s.db.dump(), before, "the first attempt committed");
    assert!(s.state_text("p").contains("Saved or not"));
}

/// A tool's storage failure is its isError result in the 2025 lane too, and D1's text is not in
/// it (sse.rs checks that the text reaches the log).
#[test]
fn a_tool_s_storage_failure_is_its_result_in_the_2025_lane_too() {
    let s = seeded();
    s.db.faults.plan([Some(Fault {
        point: Point::Before,
        error: retry::classify(REFUSED.into()),
    })]);
    let body = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "add_task", "arguments": {"project_id": "p", "body": "b", "kind": "main"}}})
    .to_string();
    let reply = s.post(&[("MCP-Protocol-Version", "2025-06-18")], &body);
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": 8, "result": {"isError": true, "content": [{"type": "text",
            "text": sentence("add_task", Schedule::Refused)}]}})
    );
}

/// The migration ledger under D1's failures: whatever batch of `store::ensure_schema` fails, and
/// however, the run (or, where the failure stopped it, the next run) leaves the whole schema with
/// each migration recorded once, and a failure that stops it says what happened (the Worker logs
/// it, and the isolate's next request runs the ledger again).
#[test]
fn the_migration_ledger_survives_every_failure() {
    let schema = |db: &sqlite::Sqlite| {
        let read = |sql: &str| -> Vec<String> {
            let mut stmt = db.conn.prepare(sql).unwrap();
            let rows = stmt.query_map([], |r| r.get(0)).unwrap();
            rows.map(Result::unwrap).collect()
        };
        let mut all = read("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY name");
        all.extend(read("SELECT name FROM d1_migrations ORDER BY id"));
        all
    };
    let whole = schema(&sqlite::Sqlite::migrated());
    // The batches a fresh database takes (the ledger's read, then each migration), and the
    // statements of each.
    let fresh = Faulty::new(sqlite::Sqlite::from_migrations([]));
    let applied = sqlite::block_on(store::ensure_schema(&fresh)).unwrap();
    assert_eq!(applied, store::MIGRATIONS.len());
    let batches = fresh.attempts();
    assert_eq!(batches.len(), store::MIGRATIONS.len() + 1);
    let mut stopped = 0;
    for (batch, &statements) in batches.iter().enumerate() {
        let mut points = vec![Point::Before, Point::AfterCommit];
        points.extend((0..statements).map(Point::Statement));
        for point in points {
            for schedule in [
                Schedule::PassingOnce,
                Schedule::PassingTwice,
                Schedule::Refused,
            ] {
                let Some(faults) = schedule.faults(point) else {
                    continue;
                };
                let case = format!("batch {batch}, {point:?}, {schedule:?}");
                let db = Faulty::new(sqlite::Sqlite::from_migrations([]));
                db.plan(vec![None; batch]);
                db.plan(faults.into_iter().map(Some));
                if let Err(e) = sqlite::block_on(store::ensure_schema(&db)) {
                    stopped += 1;
                    let said = e.to_string();
                    let expected = match schedule {
                        Schedule::Refused => format!("database error: {REFUSED}"),
                        _ => format!(
                            "database failed in passing: {LOST}; retried: database failed in passing: {LOST}"
                        ),
                    };
                    assert_eq!(said, expected, "{case}");
                    sqlite::block_on(store::ensure_schema(&db)).unwrap();
                }
                assert_eq!(schema(&db.db), whole, "{case}");
            }
        }
    }
    // A migration's batch that fails is looked at again (its own re-read of the ledger), so
    // only the ledger's first read stops a run: lost twice at any of its four points, or
    // refused at any of the three before it commits.
    assert_eq!(stopped, 4 + 3);
}
