//! Storage properties: one round trip per tool call, and an index behind get_state's list.

use serde_json::json;

use crate::support::Server;

#[test]
fn every_tool_call_is_one_round_trip() {
    let s = Server::new();
    let calls = [
        ("set_north_star", json!({"project_id": "p", "text": "t"})),
        ("set_north_star", json!({"project_id": "p", "text": "t2"})),
        ("set_focus", json!({"project_id": "p", "statement": "s"})),
        (
            "add_task",
            json!({"project_id": "p", "body": "b", "kind": "cleanup"}),
        ),
        ("get_state", json!({"project_id": "p"})),
        ("complete_task", json!({"task_id": "task-1"})),
        ("complete_task", json!({"task_id": "nope"})),
        ("get_state", json!({"project_id": "nope"})),
    ];
    for (tool, args) in calls {
        let before = s.db.batches.get();
        s.call(tool, args.clone());
        assert_eq!(s.db.batches.get() - before, 1, "{tool} {args}");
    }
    // Bad arguments never reach the database.
    let before = s.db.batches.get();
    s.err(
        "add_task",
        json!({"project_id": "p", "body": "b", "kind": "bogus"}),
    );
    assert_eq!(s.db.batches.get(), before);
}

/// A statement SQLite must plan again at every call costs the call its planning (get_state's
/// bound LIMIT did: about 60 % of its instructions). Each tool, the history and the search run
/// on two projects in turn; then no statement sent has been prepared again since it was first
/// prepared. SQLite prepares one again when a bound value it planned with changes
/// (`sqlite3_bind_*` of a variable it read while planning, a LIMIT's among them).
#[test]
fn no_statement_is_planned_again_at_a_later_call() {
    let s = Server::new();
    s.db.conn.set_prepared_statement_cache_capacity(512);
    for round in 0..2 {
        for p in ["p", "q"] {
            let (text, statement) = (format!("t{round}"), format!("s{round}"));
            s.ok("set_north_star", json!({"project_id": p, "text": text}));
            s.ok(
                "set_focus",
                json!({"project_id": p, "statement": statement}),
            );
            let body = format!("body b{round}");
            let added = s.ok(
                "add_task",
                json!({"project_id": p, "body": body, "kind": "cleanup"}),
            );
            let added = crate::support::text(&added);
            let id = added.split_whitespace().find(|w| w.starts_with("task-"));
            s.ok("get_state", json!({"project_id": p}));
            s.ok("complete_task", json!({"task_id": id.unwrap()}));
            s.read(&format!("handoff://projects/{p}/history"));
            // A query shorter than a trigram, then one the index finds.
            for query in [format!("b{round}"), body] {
                s.ok("search", json!({"query": query, "project_id": p}));
            }
        }
    }
    let sent = s.db.sent.borrow().clone();
    assert!(sent.contains(&handoff_mcp::store::LOAD_STATE.sql));
    let mut again = Vec::new();
    for sql in sent {
        let stmt = s.db.conn.prepare_cached(sql).unwrap();
        if stmt.get_status(rusqlite::StatementStatus::RePrepare) > 0 && !again.contains(&sql) {
            again.push(sql);
        }
    }
    assert!(
        again.is_empty(),
        "planned again at a later call: {again:#?}"
    );
}

/// SQLite's query plan of a statement, one step per line.
fn query_plan(sql: &str, params: &[Option<&str>]) -> Vec<String> {
    let s = Server::new();
    let mut stmt =
        s.db.conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
    stmt.query_map(rusqlite::params_from_iter(params), |r| {
        r.get::<_, String>(3)
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn the_limits_written_into_the_statements_are_the_models() {
    use handoff_mcp::model::OPEN_DEFERRED_MAX;
    use handoff_mcp::store::{HISTORY_LIMIT, LOAD_HISTORY, LOAD_STATE};
    let limit = |n: usize| format!("LIMIT {n})");
    assert_eq!(LOAD_STATE.sql.matches(&limit(OPEN_DEFERRED_MAX)).count(), 1);
    assert_eq!(LOAD_HISTORY.sql.matches(&limit(HISTORY_LIMIT)).count(), 1);
}

#[test]
fn the_open_deferred_query_uses_the_partial_index() {
    let plan = query_plan(handoff_mcp::store::LOAD_STATE.sql, &[Some("p")]);
    // Both task arms, the listed tasks and their count, read the partial index.
    assert_eq!(
        plan.iter()
            .filter(|step| step.contains("INDEX task_open_deferred (project_id=?)"))
            .count(),
        2,
        "{plan:?}"
    );
    // The one scan is of the rows the statement gathers itself, to aggregate them.
    assert!(
        plan.iter()
            .all(|step| !step.starts_with("SCAN") || step.starts_with("SCAN (subquery")),
        "no table is scanned: {plan:?}"
    );
}

#[test]
fn the_schema_replays_on_a_migrated_database() {
    let s = Server::new();
    s.ok("set_north_star", json!({"project_id": "p", "text": "kept"}));
    crate::support::block_on(handoff_mcp::store::ensure_schema(&s.db)).unwrap();
    assert!(s.state_text("p").starts_with("🎯 NORTH STAR: kept\n"));
}

/// SQLite's virtual-machine steps for get_state's statement on one project.
fn open_deferred_steps(s: &Server, project: &str) -> i32 {
    let mut stmt =
        s.db.conn
            .prepare(handoff_mcp::store::LOAD_STATE.sql)
            .unwrap();
    let rows: String = stmt
        .query_row(rusqlite::params![project], |r| r.get(0))
        .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&rows).unwrap();
    assert_eq!(
        rows.len(),
        12,
        "the project row, its 10 open deferred tasks and their count"
    );
    stmt.get_status(rusqlite::StatementStatus::VmStep)
}

#[test]
fn get_state_stays_flat_as_history_grows() {
    let s = Server::new();
    for project in ["small", "big"] {
        s.ok(
            "set_north_star",
            json!({"project_id": project, "text": "t"}),
        );
        for i in 0..10 {
            s.ok(
                "add_task",
                json!({"project_id": project, "body": format!("open {i}"), "kind": "record"}),
            );
        }
    }
    // 10,000 completed deferred tasks and 1,000 main tasks, written straight into SQLite.
    s.db.conn
        .execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 11000)
             INSERT INTO task (id, project_id, body, kind, demoted, status)
             SELECT 'hist-' || i, 'big', 'old ' || i,
                    CASE WHEN i <= 10000 THEN 'cleanup' ELSE 'main' END,
                    CASE WHEN i <= 10000 THEN 1 ELSE 0 END,
                    CASE WHEN i <= 10000 THEN 'done' ELSE 'open' END
             FROM n;",
        )
        .unwrap();
    let small = open_deferred_steps(&s, "small");
    let big = open_deferred_steps(&s, "big");
    assert!(
        big <= small * 2,
        "VM steps: {small} with 10 tasks, {big} with 11,010"
    );
    assert_eq!(s.state_text("big").lines().count(), 13);
}

#[test]
fn the_web_list_counts_through_the_partial_index() {
    let plan = query_plan(
        handoff_mcp::store::PROJECT_SUMMARIES.sql,
        &[Some(""), Some("100"), None],
    );
    // Each count searches an index of open tasks by project (SQLite picks one of the partial
    // indexes on status = 'open'); no count scans the task table.
    let searches = plan
        .iter()
        .filter(|step| {
            step.starts_with("SEARCH t USING INDEX task_open_") && step.contains("project_id=?")
        })
        .count();
    assert_eq!(searches, 2, "{plan:?}");
    assert!(
        plan.iter().all(|step| !step.starts_with("SCAN t")),
        "no task scan: {plan:?}"
    );
    // The newest change reads the project's events through their index, once per project.
    assert_eq!(
        plan.iter()
            .filter(|step| step.starts_with("SEARCH e USING INDEX event_by_project"))
            .count(),
        1,
        "{plan:?}"
    );
}

/// Every row is decoded by its statement's column list, so the SQLite adapter refuses a list
/// that is not the statement's own, and the tests of every statement catch one that drifts.
#[test]
fn a_column_list_that_is_not_the_statements_is_refused() {
    use handoff_mcp::store::{Cell, Query, Stmt};
    let db = handoff_mcp::sqlite::Sqlite::migrated();
    let run = |columns: &'static [&'static str]| {
        let query = Query {
            sql: "SELECT 1 AS one, 'x' AS two",
            columns,
        };
        db.run(&[Stmt {
            query,
            params: Vec::new(),
        }])
        .map_err(|e| e.to_string())
    };
    let rows = run(&["one", "two"]).unwrap();
    assert_eq!(rows[0][0].get("two"), Some(&Cell::Text("x".into())));
    for wrong in [&["two", "one"][..], &["one"], &["one", "two", "three"], &[]] {
        assert_eq!(
            run(wrong),
            Err(
                "unexpected row shape: a statement's columns are not the ones its Query lists"
                    .into()
            ),
            "{wrong:?}"
        );
    }
}
