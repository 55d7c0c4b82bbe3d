//! The search tool at the wire: exact text for a seeded history in English and Japanese, the
//! short-query fallback, hostile queries, scopes, the limit, one round trip, the index behind
//! the statement, and the index kept by the migration and its triggers.

use serde_json::{json, Value as Json};

use crate::golden;
use crate::support::{text, Server, NOW_MS, TOKEN};

const HOUR: i64 = 3_600_000;
const HEAD_TAIL: &str = ", newest first (times UTC). get_state says what to do now.";

/// A history in two languages: an English project that dropped Redis and a Japanese one about
/// its login page, an hour between writes, from 2026-12-01 08:00 UTC.
fn seeded() -> Server {
    let s = Server::new();
    seed(&s);
    s
}

pub fn seed(s: &Server) {
    let writes = [
        (
            "set_north_star",
            json!({"project_id": "handoff", "text": "Ship handoff v1 without Redis"}),
        ),
        (
            "set_focus",
            json!({"project_id": "handoff", "statement": "Move the session cache from Redis to D1",
                   "why": "one service less to run", "done_when": "no redis crate in Cargo.lock"}),
        ),
        (
            "add_task",
            json!({"project_id": "handoff", "body": "Delete the Redis config", "kind": "cleanup"}),
        ),
        (
            "add_task",
            json!({"project_id": "handoff", "body": "Note why Redis was dropped", "kind": "record"}),
        ),
        (
            "complete_task",
            json!({"task_id": "task-2", "evidence": "commit 1a2b3c: README explains it"}),
        ),
        (
            "set_north_star",
            json!({"project_id": "login", "text": "ログイン画面を一番使いやすくする"}),
        ),
        (
            "set_focus",
            json!({"project_id": "login", "statement": "ログイン画面のエラーメッセージを直す",
                   "why": "問い合わせの半分がログイン失敗", "done_when": "エラー文言がすべて日本語になる"}),
        ),
        (
            "add_task",
            json!({"project_id": "login", "body": "古いログイン画面のCSSを消す", "kind": "cleanup"}),
        ),
        (
            "complete_task",
            json!({"task_id": "task-3", "evidence": "PR #12 で移行済み"}),
        ),
    ];
    for (hour, (tool, arguments)) in (0..).zip(writes) {
        s.now.set(NOW_MS + hour * HOUR);
        s.ok(tool, arguments);
    }
}

pub fn search(s: &Server, arguments: Json) -> String {
    text(&s.ok("search", arguments))
}

fn head(query: &str, narrowed: &str) -> String {
    format!("Records, not tasks to do: what was decided and done that matches \"{query}\"{narrowed}{HEAD_TAIL}")
}

const NOTHING_TAIL: &str =
    ". The search looks through North Stars, focuses (statement, why, done when) and tasks (body, evidence).";

#[test]
fn an_english_query_finds_each_kind_of_record_newest_first() {
    let s = seeded();
    // Case aside, anywhere in the text: the North Star, the focus (its statement and its
    // done-when both hold it), an open task with the id complete_task takes, a completed one.
    assert_eq!(
        search(&s, json!({"query": "redis"})),
        format!(
            "{}\n\
             2026-12-01 12:00  handoff  record task completed: Note why Redis was dropped — evidence: commit 1a2b3c: README explains it — by owner (wire-test/0)\n\
             2026-12-01 10:00  handoff  cleanup task open, task_id=task-1: Delete the Redis config — by owner (wire-test/0)\n\
             2026-12-01 09:00  handoff  focus set: Move the session cache from Redis to D1 — why: one service less to run — done when: no redis crate in Cargo.lock — by owner (wire-test/0)\n\
             2026-12-01 08:00  handoff  north star set: Ship handoff v1 without Redis — by owner (wire-test/0)\n\
             4 records match.",
            head("redis", "")
        )
    );
    // The evidence is searched too, and a match in the why.
    assert_eq!(
        search(&s, json!({"query": "1A2B3C"})),
        format!(
            "{}\n2026-12-01 12:00  handoff  record task completed: Note why Redis was dropped — evidence: commit 1a2b3c: README explains it — by owner (wire-test/0)\n1 record matches.",
            head("1A2B3C", "")
        )
    );
    assert!(search(&s, json!({"query": "service less"})).contains("  focus set: Move"));
}

#[test]
fn a_japanese_query_finds_words_written_without_spaces() {
    let s = seeded();
    assert_eq!(
        search(&s, json!({"query": "ログイン画面"})),
        format!(
            "{}\n\
             2026-12-01 16:00  login  cleanup task completed: 古いログイン画面のCSSを消す — evidence: PR #12 で移行済み — by owner (wire-test/0)\n\
             2026-12-01 14:00  login  focus set: ログイン画面のエラーメッセージを直す — why: 問い合わせの半分がログイン失敗 — done when: エラー文言がすべて日本語になる — by owner (wire-test/0)\n\
             2026-12-01 13:00  login  north star set: ログイン画面を一番使いやすくする — by owner (wire-test/0)\n\
             3 records match.",
            head("ログイン画面", "")
        )
    );
    // Inside a word, as the trigram index finds it: the why's 問い合わせ, and nothing else.
    assert_eq!(
        search(&s, json!({"query": "い合わ"})).lines().count(),
        3,
        "the head, the focus and the count"
    );
}

#[test]
fn a_query_shorter_than_a_trigram_is_still_found() {
    let s = seeded();
    // Two characters: the index cannot hold them, so the same rows are matched with LIKE.
    assert_eq!(
        search(&s, json!({"query": "移行"})),
        format!(
            "{}\n2026-12-01 16:00  login  cleanup task completed: 古いログイン画面のCSSを消す — evidence: PR #12 で移行済み — by owner (wire-test/0)\n1 record matches.",
            head("移行", "")
        )
    );
    // ASCII case aside there too; in the done-when and the statement alike.
    let d1 = search(&s, json!({"query": "d1"}));
    assert!(
        d1.contains("  focus set: Move the session cache from Redis to D1 — "),
        "{d1}"
    );
    assert!(d1.ends_with("\n1 record matches."), "{d1}");
    // One character, and the characters LIKE would read as patterns match only themselves.
    assert!(search(&s, json!({"query": "#"})).contains("evidence: PR #12"));
    for pattern in ["%", "_", "\\", "%%"] {
        assert!(
            search(&s, json!({"query": pattern})).starts_with("No record matches"),
            "{pattern}"
        );
    }
}

#[test]
fn no_hit_is_a_clear_sentence_not_an_error() {
    let s = seeded();
    assert_eq!(
        search(&s, json!({"query": "kubernetes"})),
        format!("No record matches \"kubernetes\"{NOTHING_TAIL}")
    );
    assert_eq!(
        search(
            &s,
            json!({"query": "redis", "project_id": "login", "kind": "focus"})
        ),
        format!(
            "No record matches \"redis\" in project \"login\" among focus records{NOTHING_TAIL}"
        )
    );
    // A project that does not exist is no error either: nothing of it matches.
    assert_eq!(
        search(&s, json!({"query": "redis", "project_id": "nowhere"})),
        format!("No record matches \"redis\" in project \"nowhere\"{NOTHING_TAIL}")
    );
}

#[test]
fn a_search_is_narrowed_by_project_and_by_kind() {
    let s = seeded();
    let lines = |arguments: Json| -> Vec<String> {
        search(&s, arguments)
            .lines()
            .skip(1)
            .map(|l| l.split("  ").nth(2).unwrap_or(l).to_owned())
            .collect()
    };
    // "Redis" and "ログイン" are in one project each; "CSS" and "Cargo" too, so ask for what
    // both have: the evidence "PR" of login and the "README" of handoff are told apart.
    assert_eq!(
        lines(json!({"query": "dropped", "project_id": "handoff"})),
        ["record task completed: Note why Redis was dropped — evidence: commit 1a2b3c: README explains it — by owner (wire-test/0)", "1 record matches."]
    );
    assert_eq!(
        lines(json!({"query": "redis", "kind": "north_star"})),
        [
            "north star set: Ship handoff v1 without Redis — by owner (wire-test/0)",
            "1 record matches."
        ]
    );
    assert_eq!(
        lines(json!({"query": "redis", "kind": "cleanup"})),
        [
            "cleanup task open, task_id=task-1: Delete the Redis config — by owner (wire-test/0)",
            "1 record matches."
        ]
    );
    assert!(
        search(&s, json!({"query": "redis", "kind": "record"})).contains("record task completed")
    );
    assert!(search(&s, json!({"query": "redis", "kind": "main"})).starts_with("No record"));
    assert_eq!(
        search(&s, json!({"query": "ログイン", "project_id": "login", "kind": "focus"})),
        format!(
            "{}\n2026-12-01 14:00  login  focus set: ログイン画面のエラーメッセージを直す — why: 問い合わせの半分がログイン失敗 — done when: エラー文言がすべて日本語になる — by owner (wire-test/0)\n1 record matches.",
            head("ログイン", " in project \"login\" among focus records")
        )
    );
    let refused = s.err("search", json!({"query": "redis", "kind": "task"}));
    assert_eq!(
        refused,
        "Invalid arguments for search: kind must be one of north_star, focus, main, cleanup, record; got \"task\". Nothing was written."
    );
}

#[test]
fn a_query_is_text_never_fts_or_sql_syntax() {
    let s = seeded();
    let before = s.db.dump();
    for query in [
        "\"",
        "\"\"",
        "redis\" OR \"login",
        "redis OR login",
        "NEAR(redis d1)",
        "red*",
        "value: redis",
        "{a b}: c",
        "^redis",
        "'; DROP TABLE task; --",
        "a AND NOT b",
        "(((",
    ] {
        let result = s.ok("search", json!({"query": query}));
        assert!(
            text(&result).starts_with("No record matches"),
            "{query}: {result}"
        );
    }
    // Syntax that appears in the text is found as text.
    s.ok(
        "add_task",
        json!({"project_id": "handoff", "body": "check \"quoted\" AND (grouped) red*", "kind": "record"}),
    );
    for query in ["\"quoted\" AND", "(grouped) red*", "d*"] {
        assert!(
            search(&s, json!({"query": query})).contains("check \"quoted\" AND (grouped) red*"),
            "{query}"
        );
    }
    assert_ne!(s.db.dump(), before);
}

#[test]
fn at_most_twenty_hits_the_newest_and_how_many_matched() {
    let s = Server::new();
    s.ok("set_north_star", json!({"project_id": "p", "text": "many"}));
    for i in 0..25 {
        s.now.set(NOW_MS + i * HOUR);
        s.ok(
            "add_task",
            json!({"project_id": "p", "body": format!("migration step {i:02}"), "kind": "cleanup"}),
        );
    }
    let text = search(&s, json!({"query": "migration"}));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 22, "{text}");
    assert!(
        lines[1].ends_with("migration step 24 — by owner (wire-test/0)"),
        "{}",
        lines[1]
    );
    assert!(
        lines[20].ends_with("migration step 05 — by owner (wire-test/0)"),
        "{}",
        lines[20]
    );
    assert_eq!(
        lines[21],
        "20 of 25 matching records shown, the newest; narrow the query, or name a project_id or kind, to reach older ones."
    );
    // Exactly twenty is all of them.
    let twenty = search(&s, json!({"query": "migration step 0"}));
    assert!(twenty.ends_with("\n10 records match."), "{twenty}");
}

#[test]
fn each_search_is_one_round_trip_and_reads_only() {
    let s = seeded();
    let before = s.db.dump();
    for query in ["redis", "移行", "x"] {
        let batches = s.db.batches.get();
        search(&s, json!({"query": query}));
        assert_eq!(s.db.batches.get() - batches, 1, "{query}");
    }
    assert_eq!(s.db.dump(), before);
    // Bad arguments reach no storage.
    let batches = s.db.batches.get();
    s.err("search", json!({"query": " "}));
    s.err("search", json!({"query": "x".repeat(1001)}));
    assert_eq!(s.db.batches.get(), batches);
}

/// SQLite's query plan of a statement, one step per line.
fn query_plan(s: &Server, sql: &str) -> Vec<String> {
    let mut stmt =
        s.db.conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
    stmt.query_map(
        rusqlite::params!["\"redis\"", None::<String>, None::<String>, 20],
        |r| r.get::<_, String>(3),
    )
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn the_search_statement_is_served_by_the_trigram_indexes() {
    let s = seeded();
    let plan = query_plan(&s, handoff_mcp::store::SEARCH_INDEXED.sql);
    for step in [
        "SCAN event_text VIRTUAL TABLE INDEX 0:M",
        "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)",
        "SCAN task_text VIRTUAL TABLE INDEX 0:M",
        "SEARCH t USING INTEGER PRIMARY KEY (rowid=?)",
    ] {
        assert!(plan.iter().any(|p| p.starts_with(step)), "{step}: {plan:?}");
    }
    // No table is read whole: the index says which rows, the primary key reads each.
    assert!(
        plan.iter()
            .all(|p| !["SCAN e", "SCAN t", "SCAN event", "SCAN task"].contains(&p.as_str())),
        "{plan:?}"
    );
    // The short form is the one that scans, and says so.
    let short = query_plan(&s, handoff_mcp::store::SEARCH_SHORT.sql);
    assert!(short.iter().any(|p| p == "SCAN e"), "{short:?}");
}

/// The stock FTS5 check that an external-content index holds exactly its table's rows.
fn index_is_exact(s: &Server) {
    for table in ["event_text", "task_text"] {
        s.db.conn
            .execute_batch(&format!(
                "INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)"
            ))
            .unwrap_or_else(|e| panic!("{table}: {e}"));
    }
}

#[test]
fn the_index_follows_every_write_in_the_write_s_own_batch() {
    let s = seeded();
    index_is_exact(&s);
    // A completion's evidence is found once it is written; the body is found before and after.
    s.ok(
        "add_task",
        json!({"project_id": "handoff", "body": "Rotate the token", "kind": "cleanup"}),
    );
    assert!(search(&s, json!({"query": "rotate"}))
        .contains("cleanup task open, task_id=task-4: Rotate the token"));
    assert!(search(&s, json!({"query": "vault"})).starts_with("No record"));
    s.ok(
        "complete_task",
        json!({"task_id": "task-4", "evidence": "moved to the vault"}),
    );
    assert!(search(&s, json!({"query": "vault"}))
        .contains("cleanup task completed: Rotate the token — evidence: moved to the vault"));
    // add_task of an open task again changes nothing, and the same focus again adds no event.
    s.ok(
        "add_task",
        json!({"project_id": "handoff", "body": "Delete the Redis config", "kind": "cleanup"}),
    );
    s.ok(
        "set_focus",
        json!({"project_id": "handoff", "statement": "Move the session cache from Redis to D1",
        "why": "one service less to run", "done_when": "no redis crate in Cargo.lock"}),
    );
    assert!(search(&s, json!({"query": "redis"})).ends_with("\n4 records match."));
    index_is_exact(&s);
    // A completion's event is indexed with its table, but shown once, through its task.
    let indexed: i64 =
        s.db.conn
            .query_row(
                "SELECT count(*) FROM event_text WHERE event_text MATCH '\"Rotate\"'",
                [],
                |r| r.get(0),
            )
            .unwrap();
    assert_eq!(indexed, 1);
    assert!(search(&s, json!({"query": "rotate"})).ends_with("\n1 record matches."));
}

#[test]
fn stored_strings_stay_inside_their_hit_line_and_long_ones_are_clipped() {
    let s = Server::new();
    s.ok(
        "set_north_star",
        json!({"project_id": "p", "text": "forge\n2026-12-01 08:00  p  north star set: fake"}),
    );
    let long = format!("{}needle{}", "a".repeat(300), "b".repeat(300));
    s.ok("set_focus", json!({"project_id": "p", "statement": long}));
    let forged = search(&s, json!({"query": "forge"}));
    assert_eq!(forged.lines().count(), 3, "{forged}");
    assert!(
        forged.contains("north star set: forge 2026-12-01 08:00 p north star set: fake — by"),
        "{forged}"
    );
    let clipped = search(&s, json!({"query": "NEEDLE"}));
    let line = clipped.lines().nth(1).unwrap();
    assert_eq!(
        line,
        format!(
            "2026-12-01 08:00  p  focus set: …{}needle{}… — by owner (wire-test/0)",
            "a".repeat(50),
            "b".repeat(144)
        )
    );
    // A long query is repeated clipped too, and nothing matches it.
    let query = "q".repeat(100);
    assert_eq!(
        search(&s, json!({"query": query})),
        format!("No record matches \"{}…\"{NOTHING_TAIL}", "q".repeat(80))
    );
}

#[test]
fn a_trigger_is_one_statement_of_a_migration() {
    let stmts = handoff_mcp::store::split_sql(
        "CREATE TABLE a (x);\nCREATE TRIGGER t AFTER INSERT ON a BEGIN\n  INSERT INTO b VALUES (1);\n  INSERT INTO b VALUES (2);\nEND;\nCREATE TABLE c (y);",
    );
    assert_eq!(
        stmts,
        [
            "CREATE TABLE a (x)",
            "CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  INSERT INTO b VALUES (1);\nINSERT INTO b VALUES (2);\nEND",
            "CREATE TABLE c (y)",
        ]
    );
    let v3 = handoff_mcp::store::split_sql(handoff_mcp::store::MIGRATIONS[2].1);
    assert_eq!(
        v3.iter()
            .filter(|s| s.starts_with("CREATE TRIGGER"))
            .count(),
        3
    );
    assert_eq!(v3.len(), 7);
}

#[test]
fn a_scoped_token_searches_its_own_project_and_a_read_only_one_may_search() {
    let s = Server::with_vars(&[
        ("AUTH_TOKEN", TOKEN),
        ("PROJECT_TOKENS", "rw-token=handoff\nro-token=handoff:read"),
    ]);
    seed(&s);
    let projects = |s: &Server| -> Vec<String> {
        search(s, json!({"query": "2"}))
            .lines()
            .filter_map(|l| l.split("  ").nth(1).map(str::to_owned))
            .collect()
    };
    assert_eq!(projects(&s), ["login", "handoff"]);
    for token in ["rw-token", "ro-token"] {
        for (path, header) in [
            (format!("/{token}/mcp"), None),
            ("/mcp".to_owned(), Some(format!("Bearer {token}"))),
        ] {
            s.credential(&path, header.as_deref());
            assert_eq!(projects(&s), ["handoff"], "{token}");
            let batches = s.db.batches.get();
            assert_eq!(
                s.err("search", json!({"query": "2", "project_id": "login"})),
                "This token reaches project \"handoff\" only, not \"login\". Nothing was read or written."
            );
            assert_eq!(s.db.batches.get(), batches, "refused before any storage");
            assert!(search(&s, json!({"query": "2", "project_id": "handoff"}))
                .contains("commit 1a2b3c"));
        }
    }
}

/// A page of the human view, by path under the token.
fn web(s: &Server, path: &str) -> crate::support::Reply {
    crate::web::get(s, &crate::web::page(path))
}

#[test]
fn the_search_box_is_on_the_list_and_on_each_project_page() {
    let s = seeded();
    // Each page's search box with the tool's kinds, "any" sending an empty kind, which the
    // page drops; and the links to the import page and to the project's exports.
    golden::check("pages/list-seeded.http", &web(&s, ""));
    golden::check("pages/project-login.http", &web(&s, "projects/login"));
}

#[test]
fn the_search_page_shows_the_tool_s_own_text() {
    let s = seeded();
    // All projects from the list, one from a project page, a Japanese query percent-encoded.
    for (path, arguments, golden) in [
        (
            "search?query=redis&kind=",
            json!({"query": "redis"}),
            "pages/search-hits.http",
        ),
        (
            "projects/login/search?query=%E3%83%AD%E3%82%B0%E3%82%A4%E3%83%B3&kind=focus",
            json!({"query": "ログイン", "project_id": "login", "kind": "focus"}),
            "pages/search-project-japanese.http",
        ),
        (
            "search?query=kubernetes",
            json!({"query": "kubernetes"}),
            "pages/search-none.http",
        ),
    ] {
        let reply = web(&s, path);
        let shown = format!(
            "<pre id=records>\n{}</pre>",
            crate::web::escaped(&search(&s, arguments))
        );
        assert!(reply.body.contains(&shown), "{path}: {}", reply.body);
        // The box keeps what was searched.
        golden::check(golden, &reply);
    }
    golden::check(
        "pages/search-typed.http",
        &web(&s, "projects/login/search?query=a%22b&kind=cleanup"),
    );
    // The first visit is the box alone.
    golden::check("pages/search-empty.http", &web(&s, "search"));
}

#[test]
fn a_bad_search_is_refused_and_reads_nothing_it_may_not() {
    let s = seeded();
    let batches = s.db.batches.get();
    // A query the page cannot read is a 400 refusal page; one the tool refuses is the search
    // page with the tool's sentence said as a refusal (422), never shown as records.
    for (path, golden) in [
        ("search?query=%zz", "search-unreadable"),
        ("search?query=a&query=b", "search-field-twice"),
        (
            "projects/login/search?query=a&project_id=handoff",
            "search-project-in-query",
        ),
        ("search?query=+", "search-empty-query"),
        ("search?query=redis&kind=task", "search-bad-kind"),
        ("search?query=redis&limit=5", "search-unknown-argument"),
    ] {
        golden::check(&format!("pages/{golden}.http"), &web(&s, path));
    }
    assert_eq!(
        s.db.batches.get(),
        batches,
        "no bad search reached the database"
    );
    let posted = crate::web::post(&s, &crate::web::page("search"), "query=redis");
    assert_eq!(posted.status, 405);
}

#[test]
fn a_scoped_token_s_search_page_shows_its_project_only() {
    let s = Server::with_vars(&[
        ("AUTH_TOKEN", TOKEN),
        ("PROJECT_TOKENS", "ro-token=handoff:read"),
    ]);
    seed(&s);
    golden::check(
        "pages/search-scoped.http",
        &crate::web::get(&s, "/ro-token/search?query=2"),
    );
    // Another project's search page is the page of no project, whether it exists or not: the
    // bytes of that project's own page to this token.
    for other in ["login", "nowhere"] {
        let reply = crate::web::get(&s, &format!("/ro-token/projects/{other}/search?query=2"));
        let page = crate::web::get(&s, &format!("/ro-token/projects/{other}"));
        assert_eq!(
            (reply.status, &reply.headers, &reply.body),
            (404, &page.headers, &page.body),
            "{other}"
        );
    }
    golden::check(
        "pages/search-scoped-project.http",
        &crate::web::get(&s, "/ro-token/projects/handoff/search?query=redis"),
    );
}

#[test]
fn stored_strings_on_the_search_page_are_only_ever_text() {
    let s = Server::new();
    let hostile = "<img src=x onerror=alert(1)> \"quoted\" & <script>alert(2)</script>";
    s.ok(
        "set_north_star",
        json!({"project_id": "p", "text": hostile}),
    );
    let reply = web(&s, "search?query=%3Cimg");
    crate::web::assert_only_template_markup(&reply.body);
    golden::check("pages/search-hostile.http", &reply);
    let typed = web(&s, "search?query=%3C%2Fpre%3E%3Cscript%3E");
    crate::web::assert_only_template_markup(&typed.body);
    golden::check("pages/search-hostile-query.http", &typed);
}

#[test]
fn the_index_folds_case_beyond_ascii_and_like_below_three_characters_does_not() {
    let s = Server::new();
    s.ok(
        "set_north_star",
        json!({"project_id": "p", "text": "Größe der Änderung"}),
    );
    // Three characters go through the trigram index, which folds Ä to ä as it does A to a.
    assert!(!search(&s, json!({"query": "äND"})).starts_with("No record"));
    // One character goes through LIKE, which folds ASCII only.
    assert!(!search(&s, json!({"query": "Ä"})).starts_with("No record"));
    assert!(search(&s, json!({"query": "ä"})).starts_with("No record"));
    assert!(!search(&s, json!({"query": "g"})).starts_with("No record"));
}

#[test]
fn exactly_the_limit_of_hits_is_all_of_them() {
    let s = Server::new();
    s.ok("set_north_star", json!({"project_id": "p", "text": "many"}));
    for i in 0..20 {
        s.ok(
            "add_task",
            json!({"project_id": "p", "body": format!("step {i:02}"), "kind": "record"}),
        );
    }
    assert!(search(&s, json!({"query": "step"})).ends_with("\n20 records match."));
}

#[test]
fn a_text_is_clipped_only_beyond_the_clip_and_at_most_to_its_end() {
    let s = Server::new();
    s.ok("set_north_star", json!({"project_id": "p", "text": "t"}));
    let exact = format!("fits{}", "x".repeat(196));
    let over = format!("{}tail end", "y".repeat(200));
    for body in [&exact, &over] {
        s.ok(
            "add_task",
            json!({"project_id": "p", "body": body, "kind": "record"}),
        );
    }
    let fits = search(&s, json!({"query": "fits"}));
    assert!(fits.contains(&format!(": {exact} — by")), "{fits}");
    // The match is near the end: the window ends at the text's end, with no … after it.
    let tail = search(&s, json!({"query": "tail end"}));
    assert!(
        tail.contains(&format!(": …{}tail end — by", "y".repeat(192))),
        "{tail}"
    );
}

#[test]
fn the_search_tool_is_listed_read_only_with_its_arguments() {
    let s = Server::new();
    let listed = s.stateless(json!(1), "tools/list", json!({})).json();
    let entry = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "search")
        .unwrap()
        .clone();
    assert_eq!(
        entry["annotations"],
        json!({"title": "Search decisions and tasks", "readOnlyHint": true,
               "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    let schema = &entry["inputSchema"];
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(
        schema["properties"]["kind"]["enum"],
        json!(["north_star", "focus", "main", "cleanup", "record"])
    );
    assert_eq!(schema["properties"]["query"]["maxLength"], 1000);
    assert_eq!(
        schema["properties"]["project_id"]["pattern"],
        "^[A-Za-z0-9][A-Za-z0-9._-]*$"
    );
    assert!(entry["description"]
        .as_str()
        .unwrap()
        .contains("not tasks to do: get_state says what to do now."));
}
