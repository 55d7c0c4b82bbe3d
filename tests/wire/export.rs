//! Export and import at the wire: the document of a seeded project and its Markdown, the round
//! trip through an import under a new id, every refusal writing nothing, and the scopes.

use serde_json::{json, Value as Json};

use handoff_mcp::auth::scope::Scope;

use crate::golden;
use crate::support::{Reply, Server, ORIGIN, TOKEN};
use crate::web::{assert_only_template_markup, get, page, post};

fn seeded() -> Server {
    let s = Server::new();
    crate::search::seed(&s);
    s
}

fn export(s: &Server, id: &str) -> Json {
    let reply = get(s, &page(&format!("projects/{id}/export.json")));
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

/// Posts the import form as the import page sends it.
fn import(s: &Server, token: &str, document: &str, into: &str) -> Reply {
    let body = form_body(&[("project_id", into), ("document", document)]);
    post(s, &format!("/{token}/import"), &body)
}

fn form_body(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{k}={}", percent(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn a_project_exports_to_one_document_in_one_round_trip() {
    let s = seeded();
    let batches = s.db.batches.get();
    let reply = get(&s, &page("projects/handoff/export.json"));
    assert_eq!(s.db.batches.get() - batches, 1);
    assert_web_headers_but(
        &reply,
        "application/json",
        "attachment; filename=\"handoff.handoff.json\"",
    );
    assert_eq!(
        reply.body,
        r#"{"exported_at":1796140800000,"focus":{"created_at":1796115600000,"done_when":"no redis crate in Cargo.lock","statement":"Move the session cache from Redis to D1","updated_at":1796115600000,"updated_by":"owner (wire-test/0)","why":"one service less to run"},"format":"handoff-mcp project","history":[{"at":1796112000000,"client":"owner (wire-test/0)","done_when":null,"kind":null,"note":null,"task_id":null,"value":"Ship handoff v1 without Redis","what":"north_star"},{"at":1796115600000,"client":"owner (wire-test/0)","done_when":"no redis crate in Cargo.lock","kind":null,"note":"one service less to run","task_id":null,"value":"Move the session cache from Redis to D1","what":"focus"},{"at":1796126400000,"client":"owner (wire-test/0)","done_when":null,"kind":"record","note":"commit 1a2b3c: README explains it","task_id":"task-2","value":"Note why Redis was dropped","what":"completed"}],"project":{"created_at":1796112000000,"id":"handoff","north_star":"Ship handoff v1 without Redis","updated_at":1796112000000,"updated_by":"owner (wire-test/0)"},"tasks":[{"body":"Delete the Redis config","completed_at":null,"completed_by":null,"created_at":1796119200000,"created_by":"owner (wire-test/0)","evidence":null,"id":"task-1","kind":"cleanup","status":"open","updated_at":1796119200000},{"body":"Note why Redis was dropped","completed_at":1796126400000,"completed_by":"owner (wire-test/0)","created_at":1796122800000,"created_by":"owner (wire-test/0)","evidence":"commit 1a2b3c: README explains it","id":"task-2","kind":"record","status":"done","updated_at":1796126400000}],"version":1}"#
    );
}

/// The web headers, with the content type and the disposition of a download.
fn assert_web_headers_but(reply: &Reply, content_type: &str, disposition: &str) {
    assert_eq!(reply.header("content-type"), Some(content_type));
    assert_eq!(reply.header("content-disposition"), Some(disposition));
    let names: Vec<&str> = reply.headers.iter().map(|(k, _)| *k).collect();
    assert_eq!(names.len(), 7, "{names:?}");
    for name in [
        "content-security-policy",
        "cache-control",
        "x-content-type-options",
    ] {
        assert!(names.contains(&name), "{name}");
    }
}

#[test]
fn the_markdown_reads_the_same_project() {
    let s = seeded();
    let reply = get(&s, &page("projects/login/export.md"));
    assert_eq!(reply.status, 200);
    assert_web_headers_but(
        &reply,
        "text/markdown; charset=utf-8",
        "inline; filename=\"login.md\"",
    );
    assert_eq!(
        reply.body,
        "# login\n\nExported from handoff-mcp on 2026-12-01 16:00 UTC.\n\n\
         ## North Star\n\n🎯 ログイン画面を一番使いやすくする\n\n- set 2026-12-01 13:00 UTC by owner (wire-test/0)\n\n\
         ## Focus\n\n▶ ログイン画面のエラーメッセージを直す\n\n- why: 問い合わせの半分がログイン失敗\n\
         - done when: エラー文言がすべて日本語になる\n- set 2026-12-01 14:00 UTC by owner (wire-test/0)\n\n\
         ## Open tasks\n\n(none)\n\n\
         ## History, newest first (times UTC)\n\n\
         - 2026-12-01 16:00 — cleanup task completed: 古いログイン画面のCSSを消す — evidence: PR #12 で移行済み — by owner (wire-test/0)\n\
         - 2026-12-01 14:00 — focus set: ログイン画面のエラーメッセージを直す — why: 問い合わせの半分がログイン失敗 — done when: エラー文言がすべて日本語になる — by owner (wire-test/0)\n\
         - 2026-12-01 13:00 — north star set: ログイン画面を一番使いやすくする — by owner (wire-test/0)\n"
    );
}

#[test]
fn stored_strings_make_no_markdown() {
    let s = Server::new();
    s.ok("set_north_star", json!({"project_id": "p", "text": "# not a heading\n- not a list ![x](https://evil.example/t.png) <img src=x> *b* `c` [l](u) a_b ~~s~~ &amp;"}));
    s.ok(
        "add_task",
        json!({"project_id": "p", "body": "\n## forged\n", "kind": "record"}),
    );
    let md = get(&s, &page("projects/p/export.md")).body;
    assert!(md.contains(
        "🎯 # not a heading - not a list !\\[x\\](https://evil.example/t.png) \\<img src=x\\> \\*b\\* \\`c\\` \\[l\\](u) a\\_b \\~\\~s\\~\\~ \\&amp;\n"
    ), "{md}");
    assert!(
        md.contains("\n- record: ## forged (task_id task-1)\n"),
        "{md}"
    );
    // Every line starts with what the renderer wrote.
    for line in md.lines().filter(|l| !l.is_empty()) {
        assert!(
            ["# p", "Exported", "## ", "🎯 ", "▶ ", "- ", "("]
                .iter()
                .any(|p| line.starts_with(p)),
            "{line}"
        );
    }
}

/// The document of `id` on `s` with the project's id and the time of the export left out.
fn comparable(s: &Server, id: &str) -> Json {
    let mut doc = export(s, id);
    doc["project"]["id"] = json!("*");
    doc["exported_at"] = json!("*");
    doc
}

#[test]
fn an_export_imports_under_a_new_id_and_exports_the_same_again() {
    let s = seeded();
    let fresh = Server::new();
    for id in ["handoff", "login"] {
        let document = get(&s, &page(&format!("projects/{id}/export.json"))).body;
        let copy = format!("{id}-copy");
        let batches = fresh.db.batches.get();
        let reply = import(&fresh, TOKEN, &document, &copy);
        assert_eq!(reply.status, 303, "{}", reply.body);
        assert_eq!(
            reply.header("location"),
            Some(format!("./projects/{copy}").as_str())
        );
        assert_eq!(fresh.db.batches.get() - batches, 1, "one atomic batch");
        assert_eq!(comparable(&fresh, &copy), comparable(&s, id));
        // What the model reads of it is the same, ids, times and clients kept.
        assert_eq!(fresh.state_texts(&copy), s.state_texts(id));
        assert_eq!(
            fresh.read(&format!("handoff://projects/{copy}/history")),
            s.read(&format!("handoff://projects/{id}/history"))
        );
    }
    // And the index knows it: the same hits, under the new ids.
    let query = json!({"query": "redis"});
    assert_eq!(
        crate::search::search(&fresh, query.clone()),
        crate::search::search(&s, query).replace("  handoff  ", "  handoff-copy  ")
    );
    // Without a project id the document's own is taken.
    let other = Server::new();
    let document = get(&s, &page("projects/login/export.json")).body;
    assert_eq!(import(&other, TOKEN, &document, "").status, 303);
    assert_eq!(comparable(&other, "login"), comparable(&s, "login"));
}

#[test]
fn an_import_is_refused_whole_when_an_id_is_taken() {
    let s = seeded();
    let document = get(&s, &page("projects/handoff/export.json")).body;
    let before = s.db.dump();
    // Each refusal is the import page again keeping what was typed.
    for (into, golden) in [
        ("handoff", "import-project-taken"),
        ("login", "import-other-project-taken"),
        // Same server, new id: the tasks' ids are this server's already.
        ("handoff-2", "import-task-id-taken"),
    ] {
        let reply = import(&s, TOKEN, &document, into);
        golden::check(&format!("pages/{golden}.http"), &reply);
        assert_eq!(s.db.dump(), before, "{into}");
    }
    // A project without tasks can be copied on the same server.
    s.ok(
        "set_north_star",
        json!({"project_id": "bare", "text": "only a star"}),
    );
    let bare = get(&s, &page("projects/bare/export.json")).body;
    assert_eq!(import(&s, TOKEN, &bare, "bare-2").status, 303);
    assert_eq!(comparable(&s, "bare-2"), comparable(&s, "bare"));
}

/// Sets the member or item at a JSON pointer, adding a member that is not there.
fn set(doc: &mut Json, path: &str, value: Json) {
    let (parent, last) = path.rsplit_once('/').unwrap();
    match doc.pointer_mut(parent).unwrap() {
        Json::Array(items) => items[last.parse::<usize>().unwrap()] = value,
        object => object[last] = value,
    }
}

#[test]
fn a_document_that_breaks_a_rule_is_refused_whole_before_any_storage() {
    let s = seeded();
    let good = export(&s, "handoff");
    let before = s.db.dump();
    let long = "x".repeat(1001);
    let broken: Vec<(&str, Json, &str)> = vec![
        ("/version", json!(2), "the document&#39;s version is 2; this server reads version 1 only"),
        ("/version", json!("1"), "the document&#39;s version is &quot;1&quot;"),
        ("/format", json!("something else"), "this is not a handoff-mcp export"),
        ("/extra", json!(1), "the document has a member &quot;extra&quot; that this version does not have"),
        ("/project/north_star", json!(long.clone()), "project: text is 1001 characters long; the limit is 1000"),
        ("/project/north_star", json!(" \u{200B}"), "project: text is empty"),
        ("/project/updated_by", json!("x".repeat(101)), "project: updated_by must be at most 100 characters"),
        ("/project/created_at", json!(-1), "project: created_at must be milliseconds since 1970"),
        ("/project/created_at", json!(1.5), "project: created_at must be milliseconds since 1970"),
        ("/project/created_at", json!("today"), "project: created_at must be a number of milliseconds or null"),
        ("/focus/why", json!("a\u{7}b"), "focus: why contains the control character U+0007"),
        ("/focus", json!([]), "focus must be an object"),
        ("/tasks", json!({}), "tasks must be an array"),
        ("/tasks/1/kind", json!("urgent"), "tasks[1]: kind must be one of main, cleanup, record; got &quot;urgent&quot;"),
        ("/tasks/0/status", json!("closed"), "tasks[0]: status must be open or done; got &quot;closed&quot;"),
        ("/tasks/0/body", json!(""), "tasks[0]: body is empty"),
        ("/tasks/1/id", json!("task-1"), "tasks[1]: the task id &quot;task-1&quot; is given twice"),
        ("/tasks/0/id", json!("i".repeat(65)), "tasks[0]: task_id is longer than 64 characters"),
        ("/tasks/0/evidence", json!(long.clone()), "tasks[0]: evidence is 1001 characters long"),
        ("/history/0/what", json!("deleted"), "history[0]: what must be north_star or focus (with no kind) or completed (with its task&#39;s kind); got &quot;deleted&quot;"),
        ("/history/2/kind", json!(null), "history[2]: what must be north_star or focus"),
        ("/history/0/kind", json!("cleanup"), "history[0]: what must be north_star or focus"),
        ("/history/2/task_id", json!(null), "history[2]: missing required argument &quot;task_id&quot;"),
        ("/history/1/client", json!(null), "history[1]: client must be a string"),
        ("/history/1/client", json!("a\nb"), "history[1]: client must be at most 100 characters with no control character"),
        ("/history/1/note", json!(7), "history[1]: note must be a string"),
    ];
    for (path, value, said) in &broken {
        let mut document = good.clone();
        set(&mut document, path, value.clone());
        let batches = s.db.batches.get();
        let reply = import(&s, TOKEN, &document.to_string(), "fresh");
        assert_eq!(reply.status, 422, "{said}: {}", reply.body);
        assert!(reply
            .body
            .contains("<p class=err role=alert id=refused>Nothing was imported: "));
        assert!(reply.body.contains(said), "{said}\n{}", reply.body);
        assert_eq!(s.db.batches.get(), batches, "{said}: no storage reached");
    }
    for (into, said) in [
        (
            "bad id!",
            "the project id &quot;bad id!&quot; breaks the project-id rule",
        ),
        (
            "-x",
            "the project id &quot;-x&quot; breaks the project-id rule",
        ),
    ] {
        let reply = import(&s, TOKEN, &good.to_string(), into);
        assert!(reply.body.contains(said), "{}", reply.body);
    }
    let not_json = import(&s, TOKEN, "{\"format\": ", "fresh");
    assert!(not_json
        .body
        .contains("Nothing was imported: the document is not JSON ("));
    let nothing = post(&s, &page("import"), "project_id=fresh");
    assert!(nothing
        .body
        .contains("Nothing was imported: the document is not JSON ("));
    let unknown = post(&s, &page("import"), "document=x&extra=y");
    assert!(unknown
        .body
        .contains("The import form has no field &quot;extra&quot;"));
    assert_eq!(s.db.dump(), before);
}

#[test]
fn imports_come_from_our_own_pages_only() {
    let s = seeded();
    let document = get(&s, &page("projects/handoff/export.json")).body;
    let before = s.db.dump();
    let body = form_body(&[("project_id", "copy"), ("document", &document)]);
    for origin in [None, Some("https://evil.example"), Some("null")] {
        let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
        headers.extend(origin.map(|o| ("Origin", o)));
        let reply = s.http("POST", &page("import"), &headers, body.as_bytes());
        assert_eq!(reply.status, 403, "{origin:?}");
    }
    let json = s.http(
        "POST",
        &page("import"),
        &[("Origin", ORIGIN), ("Content-Type", "application/json")],
        document.as_bytes(),
    );
    assert_eq!(json.status, 415);
    let put = s.http("PUT", &page("import"), &[], b"");
    assert_eq!((put.status, put.header("allow")), (405, Some("GET, POST")));
    assert_eq!(s.db.dump(), before);
    // The import page is a form of our own. The list and each project page lead to it and to
    // the exports: search.rs pins those pages of this seed (pages/list-seeded.http,
    // pages/project-login.http).
    let page = get(&s, &page("import"));
    assert_only_template_markup(&page.body);
    golden::check("pages/import.http", &page);
}

#[test]
fn a_read_only_token_exports_but_never_imports_and_a_scoped_one_reaches_its_project_only() {
    let s = Server::with_vars(&[
        ("AUTH_TOKEN", TOKEN),
        (
            "PROJECT_TOKENS",
            "rw-token=login,ro-token=handoff:read,new-token=fresh",
        ),
    ]);
    crate::search::seed(&s);
    let document = get(&s, &page("projects/handoff/export.json")).body;
    let own = get(&s, "/ro-token/projects/handoff/export.json");
    assert_eq!((own.status, own.body.as_str()), (200, document.as_str()));
    for (token, id) in [
        ("ro-token", "login"),
        ("rw-token", "handoff"),
        ("ro-token", "nowhere"),
    ] {
        for file in ["export.json", "export.md"] {
            // The page of no project: the bytes of that project's own page to this token.
            let reply = get(&s, &format!("/{token}/projects/{id}/{file}"));
            let page = get(&s, &format!("/{token}/projects/{id}"));
            assert_eq!(
                (reply.status, &reply.headers, &reply.body),
                (404, &page.headers, &page.body),
                "{token} {id} {file}"
            );
        }
    }
    let before = s.db.dump();
    golden::check(
        "pages/import-refused-read-only.http",
        &import(&s, "ro-token", &document, "fresh"),
    );
    golden::check("pages/import-read-only.http", &get(&s, "/ro-token/import"));
    golden::check(
        "pages/import-refused-scope.http",
        &import(&s, "rw-token", &document, "fresh"),
    );
    assert_eq!(s.db.dump(), before);
    // A token scoped to a project not made yet may import into it (a fresh server: task ids).
    let other = Server::with_vars(&[("AUTH_TOKEN", TOKEN), ("PROJECT_TOKENS", "new-token=fresh")]);
    assert_eq!(import(&other, "new-token", &document, "fresh").status, 303);
    assert!(other
        .state_text("fresh")
        .starts_with("🎯 NORTH STAR: Ship handoff v1 without Redis\n"));
}

#[test]
fn a_large_project_exports_in_one_round_trip_and_imports_in_one_batch() {
    let s = Server::new();
    s.ok("set_north_star", json!({"project_id": "big", "text": "t"}));
    // 3,000 tasks with 500-character bodies, half of them done, written straight into SQLite.
    s.db.conn
        .execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)
             INSERT INTO task (id, project_id, body, kind, demoted, status, created_at)
             SELECT 'big-' || i, 'big', printf('%.240c', 'x') || i, 'cleanup', 1,
                    CASE WHEN i % 2 = 0 THEN 'done' ELSE 'open' END, 1796112000000 + i FROM n;
             INSERT INTO event (project_id, at, what, value, note, task_id, kind, client)
             SELECT 'big', created_at, 'completed', body, 'ok', id, kind, 'web' FROM task
             WHERE status = 'done';",
        )
        .unwrap();
    let batches = s.db.batches.get();
    let reply = get(&s, &page("projects/big/export.json"));
    assert_eq!(s.db.batches.get() - batches, 1);
    assert!(reply.body.len() > 2_000_000, "{}", reply.body.len());
    let doc = reply.json();
    assert_eq!(
        (
            doc["tasks"].as_array().unwrap().len(),
            doc["history"].as_array().unwrap().len()
        ),
        (6000, 3001)
    );
    let other = Server::new();
    // The pages take a form of at most 1 MiB; a document this size imports through the store.
    let whole = handoff_mcp::export::parse(reply.body.as_bytes(), None).unwrap();
    let batches = other.db.batches.get();
    let into = Scope::All.writable("big").unwrap();
    let imported =
        crate::support::block_on(handoff_mcp::store::import(&other.db, into, &whole)).unwrap();
    assert_eq!(imported, handoff_mcp::store::Imported::Written);
    assert_eq!(other.db.batches.get() - batches, 1);
    assert_eq!(export(&other, "big"), doc);
}

#[test]
fn an_empty_history_no_focus_and_no_times_read_plainly() {
    let s = Server::new();
    let document = json!({"format": "handoff-mcp project", "version": 1, "exported_at": 0,
        "project": {"id": "old", "north_star": "from v1", "created_at": null, "updated_at": null,
                    "updated_by": null},
        "focus": null, "tasks": [], "history": []});
    assert_eq!(import(&s, TOKEN, &document.to_string(), "").status, 303);
    let md = get(&s, &page("projects/old/export.md")).body;
    assert!(
        md.contains("🎯 from v1\n\n- set before times were kept by unknown\n"),
        "{md}"
    );
    assert!(md.contains("## Focus\n\n▶ (not set)\n"), "{md}");
    assert!(
        md.contains("## History, newest first (times UTC)\n\n(no events)\n"),
        "{md}"
    );
    // A client of exactly the limit is kept; absent members read as null.
    let mut document = document;
    document["project"]["id"] = json!("old-2");
    document["project"]["updated_by"] = json!("c".repeat(100));
    document.as_object_mut().unwrap().remove("focus");
    assert_eq!(import(&s, TOKEN, &document.to_string(), "").status, 303);
    assert_eq!(
        export(&s, "old-2")["project"]["updated_by"],
        json!("c".repeat(100))
    );
    for (version, said) in [
        (None, "version is missing"),
        (Some(json!([1])), "version is not a number"),
    ] {
        let mut document = document.clone();
        match version {
            Some(v) => document["version"] = v,
            None => {
                document.as_object_mut().unwrap().remove("version");
            }
        }
        let reply = import(&s, TOKEN, &document.to_string(), "old-3");
        assert!(reply.body.contains(said), "{said}: {}", reply.body);
    }
}

#[test]
fn an_import_body_is_read_up_to_the_limit_and_decoded_strictly() {
    let s = Server::new();
    let mut limit = b"document=".to_vec();
    limit.resize(1 << 20, b'x');
    let reply = s.http(
        "POST",
        &page("import"),
        &[
            ("Origin", ORIGIN),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        &limit,
    );
    assert_eq!(reply.status, 422, "exactly the limit is read");
    let over = s.http(
        "POST",
        &page("import"),
        &[
            ("Origin", ORIGIN),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        &[limit, b"x".to_vec()].concat(),
    );
    assert_eq!(over.status, 413);
    golden::check(
        "pages/import-unreadable.http",
        &post(&s, &page("import"), "document=%zz"),
    );
}

#[test]
fn the_document_s_own_project_id_must_be_a_string_even_when_another_is_given() {
    let s = Server::new();
    let document = json!({"format": "handoff-mcp project", "version": 1, "exported_at": 0,
        "project": {"id": 7, "north_star": "n"}, "focus": null, "tasks": [], "history": []});
    let reply = import(&s, TOKEN, &document.to_string(), "fine");
    assert_eq!(reply.status, 422);
    assert!(
        reply
            .body
            .contains("Nothing was imported: project: id must be a string."),
        "{}",
        reply.body
    );
}

/// A client that names itself with control characters is kept without them, as a User-Agent's
/// product token is, so the history it wrote exports and imports again.
#[test]
fn a_client_name_with_control_characters_is_kept_without_them() {
    let s = Server::new();
    let mut meta = crate::support::meta();
    meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "a\nb\u{1}c", "version": "1\t2"});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "set_north_star", "arguments": {"project_id": "p", "text": "n"}, "_meta": meta}});
    let reply = s.post(
        &[
            ("MCP-Protocol-Version", crate::support::STATELESS),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "set_north_star"),
        ],
        &body.to_string(),
    );
    assert_eq!(reply.json()["result"]["isError"], false, "{}", reply.body);
    assert_eq!(s.db.stored("SELECT client FROM event"), "owner (abc/12)");
    assert_eq!(
        s.db.stored("SELECT updated_by FROM project"),
        "owner (abc/12)"
    );
    let document = get(&s, &page("projects/p/export.json")).body;
    assert_eq!(import(&s, TOKEN, &document, "p-copy").status, 303);
    // A name of control characters alone is no name: the User-Agent's, else the credential's
    // alone.
    meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "\u{7}"});
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "set_north_star", "arguments": {"project_id": "q", "text": "n"}, "_meta": meta}});
    s.post(
        &[
            ("MCP-Protocol-Version", crate::support::STATELESS),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "set_north_star"),
        ],
        &body.to_string(),
    );
    assert_eq!(
        s.db.stored("SELECT updated_by FROM project WHERE id = 'q'"),
        "owner"
    );
}

#[test]
fn a_path_whose_project_id_breaks_the_rule_is_the_bare_404() {
    let s = seeded();
    for path in [
        "projects/-x/export.json",
        "projects/a%20b/export.md",
        "projects/-x/search",
        "projects/.x/search?query=redis",
        "projects/handoff/export.txt",
        "projects/handoff/export.json/more",
        "import/more",
    ] {
        let reply = get(&s, &page(path));
        assert_eq!(
            (reply.status, reply.body.as_str()),
            (404, "Not Found"),
            "{path}"
        );
    }
}
