//! The limits as a designed part of the server: each cap at its value and one past it, what a
//! project filled before the caps existed still reads, and text items that read right when a
//! client glues them together.

use serde_json::json;

use crate::support::{text, texts, Server};

const SEP: &str = "— 以下は後処理（北極星達成後・今は着手しない）—";

fn project(s: &Server, id: &str) {
    s.ok("set_north_star", json!({"project_id": id, "text": "n"}));
}

fn add(s: &Server, body: &str, kind: &str) -> serde_json::Value {
    s.call(
        "add_task",
        json!({"project_id": "p", "body": body, "kind": kind}),
    )
}

fn count(s: &Server, sql: &str) -> String {
    s.db.stored(&format!("SELECT ({sql}) || ''"))
}

/// 30 open deferred tasks are kept; the 31st is refused with a sentence that says the limit and
/// what to do, and nothing is written. An identical call still finds its task (retries stay
/// safe at the cap), a main task is not capped, and completing one makes room again.
#[test]
fn open_deferred_tasks_stop_at_thirty() {
    let s = Server::new();
    project(&s, "p");
    for i in 0..30 {
        let kind = if i % 2 == 0 { "cleanup" } else { "record" };
        assert_eq!(add(&s, &format!("task {i}"), kind)["isError"], false);
    }
    let before = s.db.dump();
    let refused = add(&s, "one more", "record");
    assert_eq!(refused["isError"], true);
    assert_eq!(
        text(&refused),
        "Project \"p\" already has 30 open deferred tasks, the most it keeps, so this record task \
         was not added and nothing was written. Complete one that is really done (get_state \
         lists their ids), or fold this into one of them."
    );
    assert_eq!(s.db.dump(), before);

    let again = add(&s, "task 29", "record");
    assert!(
        text(&again).starts_with(
            "An open record task with this body was already there: task task-30 in project \"p\"."
        ),
        "{again}"
    );
    assert_eq!(s.db.dump(), before);

    assert_eq!(add(&s, "main work", "main")["isError"], false);
    s.ok("complete_task", json!({"task_id": "task-1"}));
    assert_eq!(add(&s, "one more", "record")["isError"], false);
    assert_eq!(
        count(
            &s,
            "SELECT count(*) FROM task WHERE demoted = 1 AND status = 'open'"
        ),
        "30"
    );
}

/// Every text at its limit, in Japanese, and the 30 deferred tasks with 250-character bodies:
/// get_state lists them all, and its two texts stay within the 24,000 characters Claude Code
/// shows a model whole. One character more in any text is refused.
#[test]
fn a_project_at_every_cap_reads_whole_within_the_budget() {
    let s = Server::new();
    let long = "本".repeat(1000);
    s.ok(
        "set_north_star",
        json!({"project_id": "p", "text": long.clone()}),
    );
    s.ok(
        "set_focus",
        json!({"project_id": "p", "statement": long.clone(), "why": long.clone(), "done_when": long.clone()}),
    );
    for i in 0..30 {
        let body = format!("{i:02}{}", "後".repeat(248));
        assert_eq!(body.chars().count(), 250);
        assert_eq!(add(&s, &body, "cleanup")["isError"], false);
    }
    let texts = s.state_texts("p");
    let chars: usize = texts.iter().map(|t| t.chars().count()).sum();
    assert!(chars <= 24_000, "{chars} characters");
    assert_eq!(
        texts[0].lines().filter(|l| l.starts_with("  [")).count(),
        30
    );
    assert!(!texts.concat().contains("ほか"), "nothing left out");

    for (tool, args) in [
        (
            "set_north_star",
            json!({"project_id": "p", "text": format!("{long}x")}),
        ),
        (
            "set_focus",
            json!({"project_id": "p", "statement": "s", "done_when": format!("{long}x")}),
        ),
        (
            "add_task",
            json!({"project_id": "p", "body": "x".repeat(251), "kind": "main"}),
        ),
        (
            "complete_task",
            json!({"task_id": "task-1", "evidence": format!("{long}x")}),
        ),
    ] {
        assert!(s.err(tool, args).contains("characters long; the limit is"));
    }
}

/// A project "p" with `n` open deferred tasks `old-1`… of this kind, their bodies the SQL
/// expression given (of `i`), written straight into SQLite as a server before the caps could.
fn written_before_the_caps(n: u32, body: &str, kind: &str) -> Server {
    let s = Server::new();
    project(&s, "p");
    s.db.conn
        .execute_batch(&format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n})
             INSERT INTO task (id, project_id, body, kind, demoted, status)
             SELECT 'old-' || i, 'p', {body}, '{kind}', 1, 'open' FROM n;"
        ))
        .unwrap();
    s
}

/// A project filled before the caps existed (here 100 open deferred tasks of 2,000 characters,
/// written straight into SQLite) still reads: get_state lists what fits, oldest first, ends
/// each list with one fixed line counting the rest, and gives the id of every task it lists.
#[test]
fn a_project_over_the_caps_lists_what_fits_and_counts_the_rest() {
    let s = written_before_the_caps(100, "'b' || i || ' ' || hex(zeroblob(999))", "record");
    let texts = s.state_texts("p");
    let chars: usize = texts.iter().map(|t| t.chars().count()).sum();
    assert!(chars <= 24_000, "{chars} characters");
    let listed: Vec<&str> = texts[0]
        .lines()
        .filter_map(|l| l.strip_prefix("  [record] "))
        .collect();
    assert_eq!(listed.len(), 5, "as many 2,000-character tasks as fit");
    for (i, body) in listed.iter().enumerate() {
        assert!(body.starts_with(&format!("b{} 000", i + 1)), "in order");
        assert!(
            texts[1].contains(&format!("\ntask_id=old-{} [record] {body}", i + 1)),
            "its id is in the reference block"
        );
    }
    assert_eq!(
        texts[0].lines().last().unwrap(),
        "  （ほか 95 件。get_state は古い順に最大 30 件を示す）"
    );
    assert_eq!(
        texts[1].lines().last().unwrap(),
        "95 more open deferred tasks are not listed: get_state lists at most 30, oldest first, \
         within 24000 characters. They are kept, and come into this list as listed tasks are \
         completed."
    );

    // Short tasks: the list stops at the cap of 30, whatever fits.
    let s = written_before_the_caps(40, "'short ' || i", "cleanup");
    let texts = s.state_texts("p");
    let lines: Vec<&str> = texts[0].lines().collect();
    assert_eq!(lines[2], SEP);
    assert_eq!(lines[3], "  [cleanup] short 1");
    assert_eq!(lines[32], "  [cleanup] short 30");
    assert_eq!(
        lines[33..],
        ["  （ほか 10 件。get_state は古い順に最大 30 件を示す）"]
    );
    assert!(texts[1].contains("\ntask_id=old-30 [cleanup] short 30\n10 more open deferred"));
    // The same list in the state resource and the resume prompt.
    let resource = s.read("handoff://projects/p/state");
    assert_eq!(resource, format!("{}\n{}", texts[0], texts[1]));
}

/// Some clients hand the model a result's text items joined with nothing between them: each
/// item after the first starts with its own line break, so the joined text has exactly the
/// lines of the items, and the contract's last line never runs into the reference block.
#[test]
fn text_items_read_as_the_same_lines_when_glued() {
    let s = Server::new();
    project(&s, "p");
    for state in [&s.state_texts("p"), &{
        add(&s, "last line", "record");
        s.state_texts("p")
    }] {
        let glued = state.concat();
        let separately: Vec<&str> = state
            .iter()
            .flat_map(|item| item.lines())
            .filter(|line| !line.is_empty())
            .collect();
        assert_eq!(glued.lines().collect::<Vec<_>>(), separately);
        assert!(state[1].starts_with("\nReference data, not a to-do list"));
    }
    assert!(s
        .state_texts("p")
        .concat()
        .contains("\n  [record] last line\nReference data"));
    // Every other tool answers with one text item.
    for (tool, args) in [
        ("set_north_star", json!({"project_id": "p", "text": "m"})),
        ("set_focus", json!({"project_id": "p", "statement": "s"})),
        (
            "add_task",
            json!({"project_id": "p", "body": "b", "kind": "main"}),
        ),
        ("complete_task", json!({"task_id": "task-2"})),
    ] {
        assert_eq!(texts(&s.call(tool, args)).len(), 1, "{tool}");
    }
}

/// A caller's input quoted in an error sentence is folded as stored text is: U+2028, U+2029
/// and other line breaks become a space, so the sentence stays one line.
#[test]
fn error_sentences_fold_the_input_they_quote() {
    let s = Server::new();
    let sentences = [
        s.err(
            "get_state",
            json!({"project_id": "a\u{2028}🎯 NORTH STAR: b"}),
        ),
        s.err(
            "add_task",
            json!({"project_id": "p", "body": "b", "kind": "x\u{2029}y"}),
        ),
        s.err("complete_task", json!({"task_id": "t\u{2028}u"})),
        s.stateless(
            json!(1),
            "tools/call",
            json!({"name": "no\u{2028}tool", "arguments": {}}),
        )
        .json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned(),
        s.stateless(json!(1), "prompts/get", json!({"name": "p\u{2029}q"}))
            .json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned(),
        s.stateless(
            json!(1),
            "resources/read",
            json!({"uri": "handoff://x\u{2028}y"}),
        )
        .json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned(),
    ];
    let expected = [
        "got \"a 🎯 NORTH STAR: b\"",
        "got \"x y\"",
        "\"t u\"",
        "Unknown tool \"no tool\"",
        "Unknown prompt \"p q\"",
        "Resource not found: handoff://x y;",
    ];
    for (sentence, part) in sentences.iter().zip(expected) {
        assert!(sentence.contains(part), "{sentence:?} lacks {part:?}");
        assert!(
            !sentence.contains(['\u{2028}', '\u{2029}', '\n', '\r']),
            "{sentence:?}"
        );
    }
}

/// The history resource stays within the same budget: with every event at its longest, it shows
/// the newest that fit and counts all the others, whatever the store's page held.
#[test]
fn the_history_shows_what_fits_and_counts_the_rest() {
    let s = Server::new();
    project(&s, "p");
    let long = "史".repeat(998);
    for i in 0..60 {
        s.ok(
            "set_focus",
            json!({"project_id": "p", "statement": format!("{i:02}{long}"), "why": long.clone(), "done_when": long.clone()}),
        );
    }
    let history = s.read("handoff://projects/p/history");
    assert!(history.chars().count() <= 24_000, "{}", history.len());
    let lines: Vec<&str> = history.lines().collect();
    let shown = lines.len() - 2;
    assert_eq!(shown, 7, "as many 3,000-character events as fit");
    assert!(lines[1].contains("focus set: 59史"), "newest first");
    assert!(lines[shown].contains(&format!("focus set: {}史", 60 - shown)));
    assert_eq!(
        lines.last().unwrap(),
        &format!("… and {} older events", 61 - shown)
    );
    // Short events: the store's page of 50 is shown whole, the rest counted.
    let s = Server::new();
    project(&s, "p");
    for i in 0..60 {
        s.ok(
            "set_focus",
            json!({"project_id": "p", "statement": format!("f{i}")}),
        );
    }
    let history = s.read("handoff://projects/p/history");
    assert_eq!(history.lines().count(), 52);
    assert!(history.ends_with("\n… and 11 older events"));
}
