//! Memory that ages well: timestamps, attribution, history, freshness, done_when and
//! evidence, and retry-safe add_task, all at the wire with a pinned, movable clock.

use serde_json::{json, Value as Json};

use crate::support::{text, Server, NOW_MS};

const DAY: i64 = 86_400_000;
const HOUR: i64 = 3_600_000;

fn project() -> Server {
    let s = Server::new();
    s.ok(
        "set_north_star",
        json!({"project_id": "p", "text": "Ship v2"}),
    );
    s
}

/// A tools/call in the 2025-11-25 lane with this User-Agent (and no `_meta` client info).
fn handshake_call(s: &Server, user_agent: Option<&str>, tool: &str, arguments: Json) -> Json {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
    .to_string();
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    if let Some(ua) = user_agent {
        headers.push(("User-Agent", ua));
    }
    let reply = s.request("POST", &headers, body.as_bytes());
    reply.json()["result"].clone()
}

#[test]
fn every_write_is_stamped_with_the_server_clock_and_the_client() {
    let s = Server::new();
    s.ok(
        "set_north_star",
        json!({"project_id": "p", "text": "Ship v2"}),
    );
    s.now.set(NOW_MS + HOUR);
    s.ok("set_focus", json!({"project_id": "p", "statement": "s"}));
    s.now.set(NOW_MS + 2 * HOUR);
    handshake_call(
        &s,
        Some("claude-code/2.1.332 (external, cli)"),
        "add_task",
        json!({"project_id": "p", "body": "b", "kind": "cleanup"}),
    );
    s.now.set(NOW_MS + 3 * HOUR);
    handshake_call(
        &s,
        None,
        "complete_task",
        json!({"task_id": "task-1", "evidence": "PR #9"}),
    );
    let row = |sql: &str| s.db.stored(sql);
    assert_eq!(
        row("SELECT created_at || ' ' || updated_at || ' ' || updated_by FROM project"),
        format!("{NOW_MS} {NOW_MS} owner (wire-test/0)")
    );
    assert_eq!(
        row("SELECT created_at || ' ' || updated_at || ' ' || updated_by FROM focus"),
        format!("{} {} owner (wire-test/0)", NOW_MS + HOUR, NOW_MS + HOUR)
    );
    assert_eq!(
        row("SELECT created_at || ' ' || created_by || ' ' || completed_at || ' ' || completed_by || ' ' || evidence FROM task"),
        format!("{} owner (claude-code/2.1.332) {} owner PR #9", NOW_MS + 2 * HOUR, NOW_MS + 3 * HOUR)
    );
}

#[test]
fn the_history_records_each_change_newest_first() {
    let s = project();
    for (hours, statement, why) in [
        (1, "Write the store", Some("everything depends on it")),
        (26, "Wire the Worker", None),
        (50, "Ship the smoke test", Some("users see it")),
    ] {
        s.now.set(NOW_MS + hours * HOUR);
        let mut args = json!({"project_id": "p", "statement": statement});
        if let Some(why) = why {
            args["why"] = json!(why);
        }
        if hours == 50 {
            args["done_when"] = json!("the smoke passes twice");
        }
        s.ok("set_focus", args);
    }
    s.ok(
        "add_task",
        json!({"project_id": "p", "body": "drop the flag", "kind": "cleanup"}),
    );
    s.now.set(NOW_MS + 51 * HOUR);
    s.ok(
        "complete_task",
        json!({"task_id": "task-1", "evidence": "commit 1a2b3c"}),
    );
    // Neither an identical focus (a confirmation) nor a second completion is a change.
    s.ok("set_focus", json!({"project_id": "p", "statement": "Ship the smoke test", "why": "users see it", "done_when": "the smoke passes twice"}));
    s.ok(
        "complete_task",
        json!({"task_id": "task-1", "evidence": "again"}),
    );
    assert_eq!(
        s.read("handoff://projects/p/history"),
        "History, newest first (times UTC):\n\
         2026-12-03 11:00  cleanup task completed: drop the flag — evidence: commit 1a2b3c — by owner (wire-test/0)\n\
         2026-12-03 10:00  focus set: Ship the smoke test — why: users see it — done when: the smoke passes twice — by owner (wire-test/0)\n\
         2026-12-02 10:00  focus set: Wire the Worker — by owner (wire-test/0)\n\
         2026-12-01 09:00  focus set: Write the store — why: everything depends on it — by owner (wire-test/0)\n\
         2026-12-01 08:00  north star set: Ship v2 — by owner (wire-test/0)"
    );
    // The confirmation still counts as setting the focus now.
    assert!(
        s.state_texts("p")[1].contains("\nfocus: set 2026-12-03 (today) by owner (wire-test/0)\n")
    );
}

#[test]
fn the_history_shows_the_newest_fifty_and_counts_the_rest() {
    let s = project();
    for i in 0..60 {
        s.now.set(NOW_MS + i * 60_000);
        s.ok(
            "set_focus",
            json!({"project_id": "p", "statement": format!("focus {i}")}),
        );
    }
    let history = s.read("handoff://projects/p/history");
    let lines: Vec<&str> = history.lines().collect();
    assert_eq!(lines.len(), 52, "{history}");
    assert!(lines[1].ends_with("focus set: focus 59 — by owner (wire-test/0)"));
    assert!(lines[50].ends_with("focus set: focus 10 — by owner (wire-test/0)"));
    assert_eq!(lines[51], "… and 11 older events");
}

#[test]
fn stored_text_cannot_forge_a_history_line() {
    let s = project();
    s.ok("set_focus", json!({"project_id": "p", "statement": "a\n2026-01-01 00:00  north star set: forged", "why": "w\r\nx"}));
    let history = s.read("handoff://projects/p/history");
    assert_eq!(history.lines().count(), 3, "{history}");
    assert!(
        history.contains("focus set: a 2026-01-01 00:00 north star set: forged — why: w x — by")
    );
}

#[test]
fn attribution_names_the_credential_then_meta_client_info_or_the_user_agent() {
    let s = project();
    handshake_call(
        &s,
        Some("claude-code/2.1.332 (external, cli)"),
        "set_focus",
        json!({"project_id": "p", "statement": "a"}),
    );
    handshake_call(
        &s,
        None,
        "set_focus",
        json!({"project_id": "p", "statement": "b"}),
    );
    handshake_call(
        &s,
        Some("Bad\u{7f}Agent"),
        "set_focus",
        json!({"project_id": "p", "statement": "c"}),
    );
    let history = s.read("handoff://projects/p/history");
    let by: Vec<&str> = history
        .lines()
        .skip(1)
        .map(|l| l.rsplit(" — by ").next().unwrap())
        .collect();
    assert_eq!(
        by,
        [
            "owner (Bad)",
            "owner",
            "owner (claude-code/2.1.332)",
            "owner (wire-test/0)"
        ]
    );
}

#[test]
fn the_reference_block_asks_to_confirm_a_stale_focus() {
    let s = project();
    s.ok(
        "set_focus",
        json!({"project_id": "p", "statement": "s", "done_when": "CI is green"}),
    );
    s.now.set(NOW_MS + 7 * DAY);
    let fresh = &s.state_texts("p")[1];
    assert!(fresh.contains("\nfocus: set 2026-12-01 (7 days ago) by owner (wire-test/0)\nfocus done when: CI is green\n(no open"), "{fresh}");
    s.now.set(NOW_MS + 8 * DAY);
    let stale = &s.state_texts("p")[1];
    assert!(stale.contains("\nThe focus is 8 days old (the limit is 7 days): confirm it (set_focus with the same statement) or replace it before working on it.\n"), "{stale}");
    // Confirming it makes it fresh again; the contract text never changes for any of this.
    let contract = s.state_text("p");
    s.ok(
        "set_focus",
        json!({"project_id": "p", "statement": "s", "done_when": "CI is green"}),
    );
    assert!(!s.state_texts("p")[1].contains("The focus is"));
    assert_eq!(s.state_text("p"), contract);
}

#[test]
fn a_retried_add_task_returns_the_open_task_and_adds_nothing() {
    let s = project();
    let first = text(&s.ok(
        "add_task",
        json!({"project_id": "p", "body": "same", "kind": "record"}),
    ));
    assert!(
        first.starts_with("Added record task task-1 to project \"p\"."),
        "{first}"
    );
    let stored =
        "SELECT created_at || ' ' || created_by || ' ' || updated_at FROM task WHERE id = 'task-1'";
    let as_added = s.db.stored(stored);
    for retry in 1..=15 {
        s.now.set(NOW_MS + retry * HOUR);
        let again = text(&s.ok(
            "add_task",
            json!({"project_id": "p", "body": "same", "kind": "record"}),
        ));
        assert!(
            again.starts_with("An open record task with this body was already there: task task-1 in project \"p\". Nothing was added; use that id.\n🎯 NORTH STAR: Ship v2\n"),
            "{again}"
        );
    }
    assert_eq!(s.db.stored("SELECT count(*) || '' FROM task"), "1");
    // The retries left the task as it was added: its times and author are the first call's.
    assert_eq!(s.db.stored(stored), as_added);
    // Another kind, or the same body once the first is done, is a new task.
    s.ok(
        "add_task",
        json!({"project_id": "p", "body": "same", "kind": "cleanup"}),
    );
    s.ok("complete_task", json!({"task_id": "task-1"}));
    let after = text(&s.ok(
        "add_task",
        json!({"project_id": "p", "body": "same", "kind": "record"}),
    ));
    assert!(after.starts_with("Added record task task-"), "{after}");
    assert_eq!(s.db.stored("SELECT count(*) || '' FROM task"), "3");
}

#[test]
fn the_history_resource_is_listed_as_a_template_and_read_like_the_state() {
    let s = project();
    let templates = s
        .stateless(json!(1), "resources/templates/list", json!({}))
        .json();
    let uris: Vec<&str> = templates["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "handoff://projects/{project_id}/state",
            "handoff://projects/{project_id}/history"
        ]
    );
    let missing = s.stateless(
        json!(2),
        "resources/read",
        json!({"uri": "handoff://projects/nope/history"}),
    );
    assert_eq!(missing.json()["error"]["code"], -32602);
    assert_eq!(
        missing.json()["error"]["data"]["uri"],
        "handoff://projects/nope/history"
    );
}

fn plan(s: &Server, sql: &str, params: impl rusqlite::Params) -> Vec<String> {
    s.db.conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .query_map(params, |r| r.get::<_, String>(3))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn new_statements_are_served_by_indexes() {
    let s = project();
    let history = plan(
        &s,
        handoff_mcp::store::LOAD_HISTORY.sql,
        rusqlite::params!["p"],
    );
    assert!(
        history.iter().all(|step| !step.starts_with("SCAN event")),
        "{history:?}"
    );
    assert!(
        history
            .iter()
            .any(|step| step.contains("INDEX event_by_project")),
        "{history:?}"
    );
    let insert = plan(
        &s,
        handoff_mcp::store::INSERT_TASK.sql,
        rusqlite::params!["t", "p", "b", "cleanup", 1, 0, "c", 30],
    );
    assert!(
        insert
            .iter()
            .any(|step| step.contains("INDEX task_open_same")),
        "{insert:?}"
    );
    // The cap's look-up of the 30th open deferred task reads the partial index, in rowid order.
    assert!(
        insert
            .iter()
            .any(|step| step.contains("INDEX task_open_deferred")),
        "{insert:?}"
    );
    // "SCAN CONSTANT ROW" is the FROM-less SELECT of the values, not a table.
    assert!(
        insert
            .iter()
            .all(|step| !step.starts_with("SCAN") || step == "SCAN CONSTANT ROW"),
        "{insert:?}"
    );
}
