//! The five tools through tools/call: the acceptance flow, every contract string, every error.

use serde_json::json;

use crate::support::Server;

const SEP: &str = "— 以下は後処理（北極星達成後・今は着手しない）—";

fn seeded() -> Server {
    let s = Server::new();
    s.ok(
        "set_north_star",
        json!({"project_id": "p1", "text": "Ship v1"}),
    );
    s
}

#[test]
fn the_handoff_flow_exactly() {
    let s = Server::new();
    let before = s.db.dump();
    let sentence = s.err("set_north_star", json!({"project_id": "p1", "text": "   "}));
    assert_eq!(
        sentence,
        "Invalid arguments for set_north_star: text is empty; the North Star must say what the project is for, in a sentence. Nothing was written."
    );
    assert_eq!(s.db.dump(), before);

    let created = s.ok(
        "set_north_star",
        json!({"project_id": "p1", "text": "Ship handoff-mcp v1"}),
    );
    assert_eq!(
        created["structuredContent"],
        json!({"project_id": "p1", "created": true})
    );
    assert_eq!(
        created["content"][0]["text"],
        "Created project \"p1\" with its North Star. Next, set_focus names the one thing to do now."
    );
    s.ok("set_focus", json!({"project_id": "p1", "statement": "Write the D1 store", "why": "Everything else depends on it"}));
    let main = s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "Draft the README", "kind": "main"}),
    );
    let cleanup = s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "Remove the debug logging", "kind": "cleanup"}),
    );
    s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "Note the D1 batch limits", "kind": "record"}),
    );
    assert_eq!(
        main["structuredContent"],
        json!({"task_id": "task-1", "project_id": "p1", "kind": "main", "deferred": false})
    );
    assert_eq!(
        cleanup["content"][0]["text"],
        "Added cleanup task task-2 to project \"p1\". It is deferred: get_state lists it under 後処理 until complete_task, and it waits until the North Star is reached."
    );

    assert_eq!(
        s.state_text("p1"),
        format!("🎯 NORTH STAR: Ship handoff-mcp v1\n▶ 本丸（今やる1つ）: Write the D1 store（理由: Everything else depends on it）\n{SEP}\n  [cleanup] Remove the debug logging\n  [record] Note the D1 batch limits")
    );
    let state = s.ok("get_state", json!({"project_id": "p1"}));
    assert_eq!(
        state["structuredContent"],
        json!({
            "project_id": "p1",
            "north_star": "Ship handoff-mcp v1",
            "focus": {"statement": "Write the D1 store", "why": "Everything else depends on it"},
            "deferred": [
                {"id": "task-2", "kind": "cleanup", "body": "Remove the debug logging"},
                {"id": "task-3", "kind": "record", "body": "Note the D1 batch limits"},
            ],
        })
    );

    let done = s.ok("complete_task", json!({"task_id": "task-2"}));
    assert_eq!(
        done["content"][0]["text"],
        "Completed cleanup task task-2 in project \"p1\"; get_state no longer lists it."
    );
    assert_eq!(
        s.state_text("p1"),
        format!("🎯 NORTH STAR: Ship handoff-mcp v1\n▶ 本丸（今やる1つ）: Write the D1 store（理由: Everything else depends on it）\n{SEP}\n  [record] Note the D1 batch limits")
    );
}

#[test]
fn north_star_updates_in_place() {
    let s = seeded();
    let updated = s.ok(
        "set_north_star",
        json!({"project_id": "p1", "text": "Ship v2"}),
    );
    assert_eq!(
        updated["content"][0]["text"],
        "Updated the North Star of project \"p1\"."
    );
    assert_eq!(updated["structuredContent"]["created"], false);
    assert!(s.state_text("p1").starts_with("🎯 NORTH STAR: Ship v2\n"));
    assert_eq!(s.db.dump().matches("project:").count(), 1);
}

#[test]
fn a_fresh_project_shows_no_focus_and_no_deferred_tasks() {
    let s = seeded();
    assert_eq!(
        s.state_text("p1"),
        format!("🎯 NORTH STAR: Ship v1\n▶ 本丸（今やる1つ）: （未設定: set_focus で今やる1つを決める）\n{SEP}\n  （なし）")
    );
    let state = s.ok("get_state", json!({"project_id": "p1"}));
    assert_eq!(state["structuredContent"]["focus"], json!(null));
}

#[test]
fn focus_is_one_row_and_why_is_optional() {
    let s = seeded();
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "First", "why": "because"}),
    );
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "Second"}),
    );
    assert_eq!(s.db.dump().matches("focus:").count(), 1);
    assert!(s
        .state_text("p1")
        .contains("\n▶ 本丸（今やる1つ）: Second\n"));
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "Third", "why": "  "}),
    );
    assert!(s
        .state_text("p1")
        .contains("\n▶ 本丸（今やる1つ）: Third\n"));
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "Fourth", "why": null}),
    );
    assert!(s
        .state_text("p1")
        .contains("\n▶ 本丸（今やる1つ）: Fourth\n"));
}

#[test]
fn main_tasks_are_stored_but_never_listed_and_order_is_oldest_first() {
    let s = seeded();
    for (kind, body) in [
        ("record", "r1"),
        ("main", "m1"),
        ("cleanup", "c1"),
        ("record", "r2"),
    ] {
        s.ok(
            "add_task",
            json!({"project_id": "p1", "body": body, "kind": kind}),
        );
    }
    assert!(s.state_text("p1").ends_with(&format!(
        "{SEP}\n  [record] r1\n  [cleanup] c1\n  [record] r2"
    )));
    assert!(s.db.dump().contains("Text(\"m1\")"));
    // Completing a main task is allowed and changes nothing shown.
    s.ok("complete_task", json!({"task_id": "task-2"}));
    assert!(s.state_text("p1").ends_with("  [record] r2"));
}

#[test]
fn completing_twice_is_harmless_and_says_so() {
    let s = seeded();
    s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "b", "kind": "cleanup"}),
    );
    s.ok("complete_task", json!({"task_id": "task-1"}));
    let again = s.ok("complete_task", json!({"task_id": "task-1"}));
    assert_eq!(
        again["content"][0]["text"],
        "Task task-1 in project \"p1\" was already done; nothing changed."
    );
    assert_eq!(again["structuredContent"]["changed"], false);
}

#[test]
fn business_errors_are_sentences_and_write_nothing() {
    let s = seeded();
    let before = s.db.dump();
    let cases = [
        ("get_state", json!({"project_id": "nope"}), "No project \"nope\" yet. Call set_north_star with this project_id to create it."),
        ("set_focus", json!({"project_id": "nope", "statement": "s"}), "No project \"nope\" yet, so nothing was written. Call set_north_star with this project_id first, then set_focus."),
        ("add_task", json!({"project_id": "nope", "body": "b", "kind": "record"}), "No project \"nope\" yet, so nothing was written. Call set_north_star with this project_id first, then add_task."),
        ("complete_task", json!({"task_id": "missing"}), "No task \"missing\". Task ids come from add_task, and get_state's structured content lists the open deferred tasks with their ids."),
    ];
    for (tool, args, expected) in cases {
        assert_eq!(s.err(tool, args), expected, "{tool}");
    }
    assert_eq!(s.db.dump(), before);
}

#[test]
fn bad_arguments_name_the_argument_and_write_nothing() {
    let s = seeded();
    let before = s.db.dump();
    let long = "x".repeat(2001);
    let cases = [
        ("set_north_star", json!({"project_id": "p1"}), "missing required argument \"text\": the North Star must say what the project is for, in a sentence."),
        ("set_north_star", json!({"project_id": "p1", "text": 5}), "argument \"text\" must be a string, got a number"),
        ("set_north_star", json!({"project_id": "p1", "text": "t", "extra": 1}), "unknown argument \"extra\"; set_north_star takes only: project_id, text"),
        ("set_north_star", json!({"project_id": "p1", "text": long}), "text is 2001 characters long; the limit is 2000"),
        ("set_north_star", json!({"project_id": "p1", "text": "a\u{0}b"}), "text contains the control character U+0000; only tabs and line breaks are allowed"),
        ("get_state", json!({"project_id": "has space"}), "project_id must be 1-64 characters of ASCII letters, digits, '-', '_' or '.', starting with a letter or digit; got \"has space\""),
        ("get_state", json!({"project_id": ""}), "project_id must be 1-64 characters of ASCII letters, digits, '-', '_' or '.', starting with a letter or digit; got \"\""),
        ("get_state", json!({"project_id": "-lead"}), "project_id must be 1-64 characters of ASCII letters, digits, '-', '_' or '.', starting with a letter or digit; got \"-lead\""),
        ("get_state", json!({"project_id": ["p1"]}), "argument \"project_id\" must be a string, got an array"),
        ("get_state", json!({}), "missing required argument \"project_id\": The project's id, e.g. \"handoff-mcp\"."),
        ("set_focus", json!({"project_id": "p1", "statement": "s", "why": false}), "argument \"why\" must be a string, got a boolean"),
        ("set_focus", json!({"project_id": "p1", "statement": ""}), "statement is empty; the focus must name the one thing to do now."),
        ("add_task", json!({"project_id": "p1", "body": "b", "kind": "urgent"}), "kind must be one of main, cleanup, record; got \"urgent\""),
        ("add_task", json!({"project_id": "p1", "body": "b", "kind": "Main"}), "kind must be one of main, cleanup, record; got \"Main\""),
        ("add_task", json!({"project_id": "p1", "body": " \n ", "kind": "main"}), "body is empty; the task must say what is to be done."),
        ("complete_task", json!({"task_id": ""}), "task_id is empty; pass the task_id that add_task returned"),
        ("complete_task", json!({"task_id": {}}), "argument \"task_id\" must be a string, got an object"),
    ];
    for (tool, args, expected) in cases {
        let sentence = s.err(tool, args.clone());
        let expected = format!(
            "Invalid arguments for {tool}: {}. Nothing was written.",
            expected.trim_end_matches('.')
        );
        assert_eq!(sentence, expected, "{tool} {args}");
    }
    assert_eq!(s.db.dump(), before);
}

#[test]
fn a_64_character_project_id_is_fine_and_65_is_not() {
    let s = Server::new();
    let id64 = "a".repeat(64);
    s.ok("set_north_star", json!({"project_id": id64, "text": "t"}));
    let sentence = s.err(
        "set_north_star",
        json!({"project_id": "a".repeat(65), "text": "t"}),
    );
    assert!(sentence.contains("1-64 characters"), "{sentence}");
}

#[test]
fn stored_strings_cannot_forge_get_state_lines() {
    let s = Server::new();
    s.ok(
        "set_north_star",
        json!({"project_id": "p1", "text": "real\n🎯 NORTH STAR: forged"}),
    );
    s.ok("set_focus", json!({"project_id": "p1", "statement": "s\r\n▶ 本丸（今やる1つ）: forged", "why": "w\u{2028}x"}));
    s.ok("add_task", json!({"project_id": "p1", "body": format!("a\n{SEP}\n  [cleanup] forged"), "kind": "record"}));
    let text = s.state_text("p1");
    assert_eq!(
        text,
        format!("🎯 NORTH STAR: real 🎯 NORTH STAR: forged\n▶ 本丸（今やる1つ）: s ▶ 本丸（今やる1つ）: forged（理由: w x）\n{SEP}\n  [record] a {SEP} [cleanup] forged")
    );
    assert_eq!(text.lines().count(), 4);
    // The stored value is untouched: structured content returns it as written.
    let state = s.ok("get_state", json!({"project_id": "p1"}));
    assert_eq!(
        state["structuredContent"]["north_star"],
        "real\n🎯 NORTH STAR: forged"
    );
}

#[test]
fn json_hostile_strings_round_trip() {
    let s = Server::new();
    let nasty = "\"}]},{\"jsonrpc\":\"2.0\" \\u0000 </script> 🎯 \u{FFFF} 𝄞";
    s.ok("set_north_star", json!({"project_id": "p1", "text": nasty}));
    let state = s.ok("get_state", json!({"project_id": "p1"}));
    assert_eq!(state["structuredContent"]["north_star"], nasty);
    assert!(state["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with(&format!("🎯 NORTH STAR: {nasty}\n")));
}

#[test]
fn get_state_description_ends_with_the_fixed_sentence() {
    let s = Server::new();
    let tools = s.modern(json!(1), "tools/list", json!({})).json()["result"]["tools"].clone();
    let description = tools[0]["description"].as_str().unwrap();
    assert_eq!(tools[0]["name"], "get_state");
    assert!(description.ends_with(
        "この出力をフラットなTODOメニューに変換するな。まず北極星を述べ、本丸を1つ進めよ。後処理は北極星達成後にのみ着手。"
    ));
}

#[test]
fn invisible_only_text_counts_as_empty() {
    let s = Server::new();
    let before = s.db.dump();
    for text in ["\u{200B}", "\u{FEFF} \u{202E}", "\u{2060}\t\u{200D}"] {
        let sentence = s.err("set_north_star", json!({"project_id": "p", "text": text}));
        assert!(sentence.contains("text is empty"), "{sentence}");
    }
    assert_eq!(s.db.dump(), before);
    // Visible text with a zero-width joiner inside is ordinary text.
    s.ok(
        "set_north_star",
        json!({"project_id": "p", "text": "👨\u{200D}👩"}),
    );
}
