//! The human view over HTTP: routing under the token, the security headers on every response,
//! what the pages show, the forms as the tools (same validation, same writes), and every
//! refusal writing nothing. Stored strings are hostile here and must stay characters.

use serde_json::{json, Value as Json};

use crate::golden;
use crate::support::{texts, Reply, Server, ORIGIN, TOKEN};

const FORM: &str = "application/x-www-form-urlencoded";

/// The exact headers of every web response (a 405 adds `allow`, a 303 `location`).
const HEADERS: [(&str, &str); 6] = [
    ("content-type", "text/html; charset=utf-8"),
    (
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    ("referrer-policy", "same-origin"),
    ("cache-control", "no-store"),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
];

pub fn get(s: &Server, path: &str) -> Reply {
    s.http("GET", path, &[], b"")
}

/// A form post as a page of ours sends it: our Origin, the form encoding.
pub fn post(s: &Server, path: &str, body: &str) -> Reply {
    s.http(
        "POST",
        path,
        &[("Origin", ORIGIN), ("Content-Type", FORM)],
        body.as_bytes(),
    )
}

/// A form post that the tool carries out: the 303 back to the page.
fn written(s: &Server, path: &str, body: &str) -> Reply {
    let reply = post(s, path, body);
    assert_eq!(reply.status, 303, "{path} {body}: {}", reply.body);
    reply
}

pub fn page(path: &str) -> String {
    format!("/{TOKEN}/{path}")
}

fn seeded() -> Server {
    let s = Server::new();
    s.ok(
        "set_north_star",
        json!({"project_id": "p1", "text": "Ship v1 🎯"}),
    );
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "本丸: the store", "why": "all depends on it"}),
    );
    s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "Remove debug logs", "kind": "cleanup"}),
    );
    s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "Note D1 limits", "kind": "record"}),
    );
    s
}

/// The text a page shows for a string: HTML-escaped.
pub fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

pub fn assert_web_headers(reply: &Reply, extra: &[&str]) {
    let names: Vec<&str> = reply.headers.iter().map(|(k, _)| *k).collect();
    let mut expected: Vec<&str> = HEADERS.iter().map(|(k, _)| *k).collect();
    expected.extend_from_slice(extra);
    assert_eq!(names, expected, "{}", reply.body);
    for (name, value) in HEADERS {
        assert_eq!(reply.header(name), Some(value), "{name}");
    }
    assert!(!reply.body.contains(TOKEN), "the token is in a page");
}

/// Every tag that opens in a page is one the templates write: a stored `<` can only ever be
/// `&lt;`, so any other tag name would be markup that came from data.
pub fn assert_only_template_markup(body: &str) {
    const TAGS: &[&str] = &[
        "!doctype", "html", "head", "meta", "title", "style", "body", "main", "nav", "section",
        "h1", "h2", "h3", "a", "b", "br", "p", "div", "span", "ul", "ol", "li", "dl", "dt", "dd",
        "time", "pre", "details", "summary", "form", "label", "input", "textarea", "select",
        "option", "button", "fieldset", "legend",
    ];
    for (i, _) in body.match_indices('<') {
        let name: String = body[i + 1..]
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '!')
            .collect();
        assert!(
            TAGS.contains(&name.as_str()),
            "<{name} at {i}: {}",
            &body[i..]
        );
    }
}

#[test]
fn pages_live_under_the_token_only() {
    let s = seeded();
    let bare = get(&s, "/nope");
    golden::check("pages/not-found.http", &bare);
    for path in [
        "/wrong-token/".to_owned(),
        "/wrong-token/projects/p1".to_owned(),
        format!("/{TOKEN}"),
        page("projects/p1/"),
        page("projects/p1/get_state"),
        page("projects/p1/nope"),
        page("projects/p1/set_focus/x"),
        page("projects/a%20b"),
        page("projects/-p"),
        page("projects/a%20b/set_focus"),
        page("projects/-p/add_task"),
        page("projects//x"),
        page("projectsx"),
        page("projects"),
        page("projects/"),
    ] {
        for method in ["GET", "POST"] {
            let reply = s.http(
                method,
                &path,
                &[("Origin", ORIGIN), ("Content-Type", FORM)],
                b"",
            );
            assert_eq!(
                (reply.status, &reply.headers, &reply.body),
                (bare.status, &bare.headers, &bare.body),
                "{method} {path}"
            );
        }
    }
    for (method, path, allow) in [
        ("PUT", page(""), "GET"),
        ("POST", page(""), "GET"),
        ("POST", page("projects/p1"), "GET"),
        ("GET", page("projects/p1/set_focus"), "POST"),
        ("DELETE", page("projects/p1/add_task"), "POST"),
    ] {
        let reply = s.http(method, &path, &[], b"");
        assert_eq!(reply.status, 405, "{method} {path}");
        assert_eq!(reply.header("allow"), Some(allow));
        assert_web_headers(&reply, &["allow"]);
    }
    golden::check(
        "pages/method-not-allowed.http",
        &s.http("PUT", &page(""), &[], b""),
    );
    golden::check("pages/no-project.http", &get(&s, &page("projects/p2")));
}

#[test]
fn the_list_shows_each_project_in_one_round_trip() {
    let s = seeded();
    s.ok(
        "set_north_star",
        json!({"project_id": "a0", "text": "Other"}),
    );
    s.ok(
        "set_north_star",
        json!({"project_id": "m_2.x", "text": "Third, with a record"}),
    );
    s.ok(
        "add_task",
        json!({"project_id": "m_2.x", "body": "Why the id has a dot", "kind": "record"}),
    );
    let before = s.db.batches.get();
    let list = get(&s, &page(""));
    assert_eq!(s.db.batches.get() - before, 1);
    assert_only_template_markup(&list.body);
    // In id order, each with its North Star, its focus or none, and its deferred counts.
    golden::check("pages/list.http", &list);
}

#[test]
fn the_list_pages_by_project_id() {
    let s = Server::new();
    for i in 0..101 {
        s.ok(
            "set_north_star",
            json!({"project_id": format!("p{i:03}"), "text": "t"}),
        );
    }
    // Exactly one page's worth has no link to more.
    let full = Server::new();
    for i in 0..100 {
        full.ok(
            "set_north_star",
            json!({"project_id": format!("p{i:03}"), "text": "t"}),
        );
    }
    let only = get(&full, &page(""));
    assert_eq!(only.body.matches("<li>").count(), 100);
    assert!(only.body.ends_with("</li></ul></main></body></html>"));
    let first = get(&s, &page(""));
    assert_eq!(first.body.matches("<li>").count(), 100);
    assert!(first
        .body
        .ends_with("</li></ul><nav aria-label=More><a href=\"./?after=p099\">More projects →</a></nav></main></body></html>"));
    golden::check("pages/list-after.http", &get(&s, &page("?after=p099")));
    for bad in ["?after=", "?after=a%20b", "?x=1", "?after=p1&x=2"] {
        let reply = get(&s, &page(bad));
        assert_eq!(reply.status, 400, "{bad}");
        assert_web_headers(&reply, &[]);
    }
}

#[test]
fn the_list_shows_the_newest_change_first_and_pages_in_that_order() {
    let s = Server::new();
    let minute = 60_000;
    for i in 0..101 {
        s.now.set(s.now.get() + minute);
        s.ok(
            "set_north_star",
            json!({"project_id": format!("p{i:03}"), "text": "t"}),
        );
    }
    // p000 changes last, so it leads; the rest follow newest first.
    s.now.set(s.now.get() + minute);
    s.ok(
        "set_focus",
        json!({"project_id": "p000", "statement": "now"}),
    );
    let ids = |body: &str| -> Vec<String> {
        body.split("<li><h2><a href=\"./projects/")
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap().to_owned())
            .collect()
    };
    let first = get(&s, &page("")).body;
    let shown = ids(&first);
    assert_eq!(shown.len(), 100);
    assert_eq!(&shown[..3], ["p000", "p100", "p099"]);
    assert_eq!(shown[99], "p002");
    assert!(first.contains("<a href=\"./?after=p002\">More projects →</a>"));
    assert_eq!(ids(&get(&s, &page("?after=p002")).body), ["p001"]);
    // A page continues from its project's place in that order; a project not in the list
    // starts it again (the same moment is in id order: the_list_pages_by_project_id).
    assert_eq!(
        ids(&get(&s, &page("?after=p100")).body)[..2],
        ["p099", "p098"]
    );
    assert_eq!(ids(&get(&s, &page("?after=zz")).body).len(), 100);
}

#[test]
fn the_project_page_shows_what_the_model_sees() {
    let s = seeded();
    let model = s.state_texts("p1");
    let reply = get(&s, &page("projects/p1"));
    assert_only_template_markup(&reply.body);
    // The reference block's opening line break joins the two items for clients that glue
    // them; the page shows each in its own block, behind the disclosure, the contract text
    // marked Japanese.
    let model_block = reply
        .body
        .split("<details id=model><summary>What the model reads at the start of a chat</summary>")
        .nth(1)
        .unwrap()
        .split("</details>")
        .next()
        .unwrap();
    let expected: Vec<String> = model
        .iter()
        .zip(["ja", "en"])
        .map(|(text, lang)| {
            let text = text.strip_prefix('\n').unwrap_or(text);
            format!("<pre lang={lang}>\n{}</pre>", escaped(text))
        })
        .collect();
    assert_eq!(model_block, expected.concat());
    // Each open deferred task with its complete form carrying the id the tool takes, and the
    // forms starting from the current values.
    golden::check("pages/project-seeded.http", &reply);
    // A refused add_task keeps its kind selected, and only that one, and the other forms
    // their current values.
    let reply = post(&s, &page("projects/p1/add_task"), "body=+&kind=record");
    golden::check("pages/refused-add-task.http", &reply);
}

/// The forms of a page: each `data-tool` with the names of its fields, in order.
pub fn forms(body: &str) -> Vec<(String, Vec<String>)> {
    body.split("<form ")
        .skip(1)
        .map(|form| {
            let form = form.split("</form>").next().unwrap();
            let tool = form
                .split("data-tool=")
                .nth(1)
                .unwrap()
                .split(['>', ' '])
                .next()
                .unwrap()
                .to_owned();
            let mut names: Vec<String> = form
                .split(" name=")
                .skip(1)
                .map(|rest| rest.split([' ', '>']).next().unwrap().to_owned())
                .collect();
            names.dedup();
            (tool, names)
        })
        .collect()
}

#[test]
fn each_form_is_a_write_tool_with_its_argument_names() {
    let s = seeded();
    let listed = s.stateless(json!(1), "tools/list", json!({})).json();
    let params = |tool: &str| -> Vec<String> {
        let entry = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == tool)
            .unwrap()
            .clone();
        entry["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    let project = forms(&get(&s, &page("projects/p1")).body);
    let tools: Vec<&str> = project.iter().map(|(t, _)| t.as_str()).collect();
    // One complete_task form per open deferred task, then one form per other write tool
    // (behind the disclosure), the owner's share and delete forms, then the search box.
    assert_eq!(
        tools,
        [
            "complete_task",
            "complete_task",
            "set_north_star",
            "set_focus",
            "add_task",
            "share",
            "delete",
            "search"
        ]
    );
    let sharing = |tool: &str| project.iter().find(|(t, _)| t == tool).unwrap().1.clone();
    assert_eq!(sharing("share"), ["label", "access"]);
    assert_eq!(sharing("delete"), ["confirm"]);
    for (tool, names) in project
        .iter()
        .filter(|(t, _)| t != "share" && t != "delete")
    {
        // The project id sits in the action URL; every other argument is a visible field.
        let mut expected = params(tool);
        expected.retain(|p| p != "project_id");
        let mut names = names.clone();
        names.sort();
        expected.sort();
        assert_eq!(names, expected, "{tool}");
    }
    // The list only lists and searches: a project starts with set_north_star, from a chat.
    let list = forms(&get(&s, &page("")).body);
    assert_eq!(
        list,
        [("search".into(), vec!["query".into(), "kind".into()])]
    );
}

#[test]
fn forms_run_the_tools_and_redirect_back() {
    let s = seeded();
    let back = "../../projects/p1";
    for (tool, body) in [
        (
            "set_north_star",
            "text=Ship+v2+%E2%80%94+%E6%9C%AC%E4%B8%B8",
        ),
        ("set_focus", "statement=Write+the+pages&why="),
        (
            "add_task",
            "body=Screenshot+%F0%9F%8E%AF%0D%0Afor+the+README&kind=record",
        ),
        ("complete_task", "task_id=task-1"),
    ] {
        let reply = written(&s, &page(&format!("projects/p1/{tool}")), body);
        assert_eq!(reply.header("location"), Some(back));
        assert_web_headers(&reply, &["location"]);
        assert_eq!(reply.body, "");
    }
    let state = s.state_texts("p1");
    assert_eq!(
        state[0],
        "🎯 NORTH STAR: Ship v2 — 本丸\n▶ 本丸（今やる1つ）: Write the pages\n\
         — 以下は後処理（北極星達成後・今は着手しない）—\n  [record] Note D1 limits\n  [record] Screenshot 🎯 for the README"
    );
    // Stored as typed, the line break the browser sent as CR LF as the LF it was.
    assert_eq!(
        s.db.stored("SELECT body FROM task WHERE id = 'task-3'"),
        "Screenshot 🎯\nfor the README"
    );
}

#[test]
fn a_refusal_shows_the_tool_s_sentence_and_writes_nothing() {
    let s = seeded();
    let before = s.db.dump();
    let long = "x".repeat(2001);
    for (path, body, tool, arguments) in [
        (
            "projects/p1/set_focus",
            "statement=+++&why=because".to_owned(),
            "set_focus",
            json!({"project_id": "p1", "statement": "   ", "why": "because"}),
        ),
        (
            "projects/p1/set_north_star",
            format!("text={long}"),
            "set_north_star",
            json!({"project_id": "p1", "text": long}),
        ),
        (
            "projects/p1/add_task",
            "body=b&kind=urgent".to_owned(),
            "add_task",
            json!({"project_id": "p1", "body": "b", "kind": "urgent"}),
        ),
        (
            "projects/p1/add_task",
            "body=b&kind=main&extra=1".to_owned(),
            "add_task",
            json!({"project_id": "p1", "body": "b", "kind": "main", "extra": "1"}),
        ),
        (
            "projects/p1/complete_task",
            "task_id=nope".to_owned(),
            "complete_task",
            json!({"task_id": "nope"}),
        ),
        (
            "projects/p7/set_focus",
            "statement=s".to_owned(),
            "set_focus",
            json!({"project_id": "p7", "statement": "s"}),
        ),
    ] {
        let sentence = s.err(tool, arguments);
        let reply = post(&s, &page(path), &body);
        assert_eq!(reply.status, 422, "{path} {body}");
        assert_web_headers(&reply, &[]);
        assert_only_template_markup(&reply.body);
        assert!(
            reply.body.contains(&escaped(&sentence)),
            "{path}: {sentence}\n{}",
            reply.body
        );
        assert_eq!(s.db.dump(), before, "{path} {body}");
    }
    // The refused form keeps what was typed; the others keep the current values.
    // Relative links still lead back, one level further up.
    let reply = post(
        &s,
        &page("projects/p1/set_focus"),
        "statement=+&why=%3Cb%3E",
    );
    golden::check("pages/refused-set-focus.http", &reply);
}

#[test]
fn posts_that_are_not_our_forms_are_refused_and_write_nothing() {
    let s = seeded();
    let before = s.db.dump();
    let path = page("projects/p1/set_north_star");
    let body = b"text=hijacked";
    // (request headers, body, expected status)
    type Case<'a> = (Vec<(&'a str, &'a str)>, Vec<u8>, u16);
    let mut cases: Vec<Case> = Vec::new();
    for origin in [
        None,
        Some("null"),
        Some("https://evil.example"),
        Some("http://handoff.example"),
        Some("https://handoff.example.evil"),
        Some("https://handoff.example:8443"),
        Some("http://localhost:8787"),
    ] {
        let mut headers = vec![("Content-Type", FORM), ("Sec-Fetch-Site", "same-origin")];
        headers.extend(origin.map(|o| ("Origin", o)));
        cases.push((headers, body.to_vec(), 403));
    }
    for content_type in [
        "application/json",
        "text/plain",
        "multipart/form-data; boundary=x",
        "",
    ] {
        cases.push((
            vec![("Origin", ORIGIN), ("Content-Type", content_type)],
            body.to_vec(),
            415,
        ));
    }
    cases.push((
        vec![
            ("Origin", ORIGIN),
            ("Content-Type", FORM),
            ("Content-Length", "1048577"),
        ],
        body.to_vec(),
        413,
    ));
    let mut big = b"text=".to_vec();
    big.resize((1 << 20) + 1, b'x');
    cases.push((vec![("Origin", ORIGIN), ("Content-Type", FORM)], big, 413));
    // A body of exactly the limit is read: its text is then the tool's to refuse (422).
    let mut limit = b"text=".to_vec();
    limit.resize(1 << 20, b'x');
    cases.push((vec![("Origin", ORIGIN), ("Content-Type", FORM)], limit, 422));
    for malformed in [
        &b"text=%zz"[..],
        b"text=%ff",
        b"text=a&text=b",
        b"project_id=p2&text=t",
    ] {
        cases.push((
            vec![("Origin", ORIGIN), ("Content-Type", FORM)],
            malformed.to_vec(),
            400,
        ));
    }
    for (headers, body, status) in cases {
        let reply = s.http("POST", &path, &headers, &body);
        assert_eq!(reply.status, status, "{headers:?}");
        assert_web_headers(&reply, &[]);
        assert_eq!(s.db.dump(), before, "{headers:?}");
    }
    // Form encoding with a charset parameter is still the form encoding.
    let reply = s.http(
        "POST",
        &path,
        &[
            ("Origin", ORIGIN),
            (
                "Content-Type",
                "application/x-www-form-urlencoded; charset=UTF-8",
            ),
        ],
        b"text=ok",
    );
    assert_eq!(reply.status, 303);
}

#[test]
fn stored_strings_are_only_ever_text() {
    let s = Server::new();
    // Markup in every field, a CR LF and a forged contract line after it, and an entity that
    // must stay the five characters it was typed as.
    let hostile = "<img src=x onerror=alert(1)>\r\n▶ 本丸（今やる1つ）: forged";
    s.ok(
        "set_north_star",
        json!({"project_id": "p1", "text": hostile}),
    );
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "\"><script>alert(2)</script>", "why": "</textarea><b>x'"}),
    );
    s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "<svg onload=alert(3)>&amp;\n  [cleanup] forged task", "kind": "cleanup"}),
    );
    for (path, golden) in [
        (page(""), "pages/hostile-list.http"),
        (page("projects/p1"), "pages/hostile-project.http"),
    ] {
        let reply = get(&s, &path);
        assert_only_template_markup(&reply.body);
        golden::check(golden, &reply);
    }
}

#[test]
fn a_project_page_shows_its_focus_its_tasks_and_its_history() {
    let s = Server::new();
    let hour = 3_600_000;
    s.ok(
        "set_north_star",
        json!({"project_id": "p1", "text": "Ship v1 🎯"}),
    );
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "Write the store", "why": "all depends on it",
               "done_when": "the store tests pass"}),
    );
    s.now.set(s.now.get() + hour);
    for (body, kind) in [
        ("Sketch the schema", "main"),
        ("Remove debug logs", "cleanup"),
        ("Note D1 limits", "record"),
    ] {
        s.ok(
            "add_task",
            json!({"project_id": "p1", "body": body, "kind": kind}),
        );
    }
    s.now.set(s.now.get() + hour);
    s.ok(
        "complete_task",
        json!({"task_id": "task-3", "evidence": "noted in the README"}),
    );
    s.now.set(s.now.get() + 2 * hour);
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "Write the pages"}),
    );
    s.now.set(s.now.get() + 4 * hour);
    // Two focus bars (08:00 to 12:00, 12:00 to now, 16:00), the main task stored but not
    // listed, the open cleanup task with its form, the record completed and in the history.
    let reply = get(&s, &page("projects/p1"));
    assert_only_template_markup(&reply.body);
    golden::check("pages/project.http", &reply);
}

const CARD: &str = "ui://handoff-mcp/state-card.html";

#[test]
fn get_state_names_its_card_and_its_result_stays_text() {
    let s = seeded();
    for listed in [
        s.stateless(json!(1), "tools/list", json!({})).json(),
        s.handshake("2025-06-18", json!(1), "tools/list", json!({}))
            .json(),
    ] {
        for tool in listed["result"]["tools"].as_array().unwrap() {
            let expected = match tool["name"].as_str() {
                Some("get_state") => {
                    json!({"ui": {"resourceUri": CARD}, "anthropic/alwaysLoad": true})
                }
                _ => Json::Null,
            };
            assert_eq!(
                tool.get("_meta").cloned().unwrap_or(Json::Null),
                expected,
                "{tool}"
            );
        }
    }
    // The card parses these texts; they are what every client gets, and nothing else.
    let result = s.ok("get_state", json!({"project_id": "p1"}));
    assert_eq!(texts(&result).len(), 2);
}

#[test]
fn the_card_is_a_readable_mcp_app_resource() {
    let s = seeded();
    for reply in [
        s.stateless(json!(1), "resources/read", json!({"uri": CARD})),
        s.handshake(
            "2025-11-25",
            json!(1),
            "resources/read",
            json!({"uri": CARD}),
        ),
    ] {
        assert_eq!(reply.status, 200, "{}", reply.body);
        let contents = &reply.json()["result"]["contents"];
        assert_eq!(contents.as_array().unwrap().len(), 1);
        let card = &contents[0];
        assert_eq!(card["uri"], CARD);
        assert_eq!(card["mimeType"], "text/html;profile=mcp-app");
        assert_eq!(card["_meta"], json!({"ui": {"prefersBorder": true}}));
        let html = card["text"].as_str().unwrap();
        // The card's file with its constants filled in, and nothing else changed.
        let constants = format!(
            r#"{{"northStar":"🎯 NORTH STAR: ","focus":"▶ 本丸（今やる1つ）: ","protocolVersion":"2026-01-26","version":"{}"}}"#,
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(
            html,
            include_str!("../../src/protocol/card.html").replace("/*CONSTANTS*/null", &constants)
        );
        for absent in [
            "/*CONSTANTS*/",
            "http:",
            "https:",
            "innerHTML",
            "fetch(",
            "src=",
        ] {
            assert!(!html.contains(absent), "{absent}");
        }
    }
    // Hosts find the card through the tool; the list stays the projects.
    let listed = s.stateless(json!(1), "resources/list", json!({})).json();
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["handoff://projects/p1/state"]);
    let similar = s.stateless(
        json!(1),
        "resources/read",
        json!({"uri": "ui://handoff-mcp/other"}),
    );
    assert_eq!(similar.json()["error"]["code"], -32602);
}

#[test]
fn form_writes_are_attributed_to_web_and_drawn_in_the_history() {
    let s = seeded();
    let hour = 3_600_000;
    s.now.set(s.now.get() + 2 * hour);
    written(
        &s,
        &page("projects/p1/set_focus"),
        "statement=Ship+the+pages&why=asked+for&done_when=the+browser+test+passes",
    );
    s.now.set(s.now.get() + hour);
    written(
        &s,
        &page("projects/p1/complete_task"),
        "task_id=task-1&evidence=commit+abc",
    );
    let history = s.read("handoff://projects/p1/history");
    assert_eq!(history, "History, newest first (times UTC):\n\
         2026-12-01 11:00  cleanup task completed: Remove debug logs — evidence: commit abc — by owner (web)\n\
         2026-12-01 10:00  focus set: Ship the pages — why: asked for — done when: the browser test passes — by owner (web)\n\
         2026-12-01 08:00  focus set: 本丸: the store — why: all depends on it — by owner (wire-test/0)\n\
         2026-12-01 08:00  north star set: Ship v1 🎯 — by owner (wire-test/0)");
    let reply = get(&s, &page("projects/p1"));
    // The history as a list, an entry per event of the resource, newest first, each with its
    // exact time and who made it.
    let section = reply.body.split("<h2>History</h2>").nth(1).unwrap();
    let section = section.split("<h2>").next().unwrap();
    let entries: Vec<&str> = section.split("<li>").skip(1).collect();
    assert_eq!(entries.len(), history.lines().count() - 1, "{section}");
    for (entry, line) in entries.iter().zip(history.lines().skip(1)) {
        let (at, by) = (&line[..16], line.rsplit(" — by ").next().unwrap());
        let datetime = format!("{}T{}Z", &at[..10], &at[11..]);
        assert!(
            entry.contains(&format!("<time datetime=\"{datetime}\">{at} UTC</time>"))
                && entry.contains(&format!("by {}</span></li>", escaped(by))),
            "{entry}\n{line}"
        );
    }
    // Grouped by day: one day here.
    assert_eq!(section.matches("<h3>").count(), 1, "{section}");
    golden::check("pages/project-web-writes.http", &reply);
    // The list says how long ago the focus was set, by the server's clock.
    s.now.set(s.now.get() + 2 * hour);
    golden::check("pages/list-3-hours-on.http", &get(&s, &page("")));
    s.now.set(s.now.get() + 72 * hour);
    golden::check("pages/list-3-days-on.http", &get(&s, &page("")));
}

#[test]
fn scoped_and_read_only_tokens_see_only_their_project_and_read_only_pages_have_no_forms() {
    use handoff_mcp::config::{AUTH_TOKEN_VAR, PROJECT_TOKENS_VAR};
    let s = Server::with_vars(&[
        (AUTH_TOKEN_VAR, TOKEN),
        (PROJECT_TOKENS_VAR, "rw-tok=p1,ro-tok=p1:read"),
    ]);
    s.ok("set_north_star", json!({"project_id": "p1", "text": "one"}));
    s.ok("set_north_star", json!({"project_id": "p2", "text": "two"}));
    s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "tidy", "kind": "cleanup"}),
    );
    let before = s.db.dump();
    for token in ["rw-tok", "ro-tok"] {
        // The list of p1 alone; the read-only token's offers no import.
        golden::check(
            &format!("pages/list-{token}.http"),
            &get(&s, &format!("/{token}/")),
        );
        // Another project's page is the page of no project, the very bytes a project that
        // does not exist gets, for GET and POST alike.
        let other = get(&s, &format!("/{token}/projects/p2"));
        golden::check("pages/no-project.http", &other);
        let posted = post(
            &s,
            &format!("/{token}/projects/p2/set_north_star"),
            "text=x",
        );
        assert_eq!(
            (posted.status, &posted.headers, &posted.body),
            (other.status, &other.headers, &other.body),
            "{token}"
        );
    }
    assert_eq!(s.db.dump(), before);
    // The search box is the read-only page's one form: it reads.
    golden::check(
        "pages/project-read-only.http",
        &get(&s, "/ro-tok/projects/p1"),
    );
    // A read-only token's form post is the tool's refusal, on the page without forms.
    let refused = post(&s, "/ro-tok/projects/p1/set_north_star", "text=x");
    golden::check("pages/refused-read-only.http", &refused);
    assert_eq!(s.db.dump(), before);
    let read_write = get(&s, "/rw-tok/projects/p1").body;
    assert_eq!(forms(&read_write).len(), 5);
    let written = post(&s, "/rw-tok/projects/p1/set_focus", "statement=s");
    assert_eq!(written.status, 303);
    assert_eq!(
        s.state_text("p1"),
        "🎯 NORTH STAR: one\n▶ 本丸（今やる1つ）: s\n\
         — 以下は後処理（北極星達成後・今は着手しない）—\n  [cleanup] tidy"
    );
}

/// A form body as a browser encodes it: each line break of a field as CR LF (the form
/// encoding's rule for a textarea's value), every byte but the unreserved ones as `%XX`, a
/// space as `+`.
fn encoded(fields: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (name, value) in fields {
        if !out.is_empty() {
            out.push('&');
        }
        out.push_str(name);
        out.push('=');
        for b in value.replace('\n', "\r\n").bytes() {
            match b {
                b' ' => out.push('+'),
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                    out.push(char::from(b))
                }
                other => out.push_str(&format!("%{other:02X}")),
            }
        }
    }
    out
}

/// The text a browser puts in the page's textarea `id`: its content with the one line break
/// after the tag dropped (as the HTML parser drops it) and the escapes undone.
fn textarea(body: &str, id: &str) -> String {
    let start = body
        .find(&format!("<textarea id={id} "))
        .unwrap_or_else(|| panic!("no textarea {id}"));
    let content = &body[start..];
    let content = &content[content.find('>').unwrap() + 1..content.find("</textarea>").unwrap()];
    content
        .strip_prefix('\n')
        .unwrap_or(content)
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Sets p1's North Star and its focus (statement, why, done when) over MCP.
fn set_over_mcp(s: &Server, north_star: &str, [statement, why, done_when]: [&str; 3]) {
    s.ok(
        "set_north_star",
        json!({"project_id": "p1", "text": north_star}),
    );
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": statement, "why": why, "done_when": done_when}),
    );
}

/// Every event of a project, read straight from SQLite.
fn events(s: &Server, project: &str) -> String {
    s.db.stored(&format!(
        "SELECT coalesce(group_concat(what || ':' || value || ':' || coalesce(note, '') || ':' \
         || coalesce(done_when, ''), '|'), '') FROM event WHERE project_id = '{project}'"
    ))
}

#[test]
fn multi_line_texts_are_edited_in_textareas_and_saved_unchanged_change_nothing() {
    let s = Server::new();
    // Leading and trailing line breaks, a blank line, a tab, markup-like text.
    let north_star = "\n\nShip v1 <b>&amp;</b>\n\n  — then\tthe rest\n";
    let focus @ [statement, why, done_when] = ["Line one\nline two", "\nbecause\n", "a\n\nb"];
    set_over_mcp(&s, north_star, focus);
    let history = events(&s, "p1");
    let body = get(&s, &page("projects/p1")).body;
    // Every text field of the North Star and focus forms shows its text, line breaks included.
    for (id, text) in [
        ("ns", north_star),
        ("fs", statement),
        ("fw", why),
        ("fd", done_when),
    ] {
        assert_eq!(textarea(&body, id), text, "{id}");
    }
    assert_eq!(textarea(&body, "tb"), "");
    // Saved as the browser sends them (CR LF), the texts are the stored ones: no event.
    s.now.set(s.now.get() + 60_000);
    for (tool, fields) in [
        ("set_north_star", vec![("text", textarea(&body, "ns"))]),
        (
            "set_focus",
            vec![
                ("statement", textarea(&body, "fs")),
                ("why", textarea(&body, "fw")),
                ("done_when", textarea(&body, "fd")),
            ],
        ),
    ] {
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        written(&s, &page(&format!("projects/p1/{tool}")), &encoded(&fields));
    }
    assert_eq!(events(&s, "p1"), history);
    assert_eq!(
        s.db.stored("SELECT north_star FROM project WHERE id = 'p1'"),
        north_star
    );
    assert_eq!(
        s.db.stored("SELECT statement || '|' || why || '|' || done_when FROM focus"),
        format!("{statement}|{why}|{done_when}")
    );
}

#[test]
fn line_breaks_a_browser_sends_as_cr_lf_or_cr_are_stored_as_lf() {
    let web = Server::new();
    let mcp = Server::new();
    let north_star = "Ship v1\n\n— the pages\n";
    let focus = ["One\ntwo", "\nbecause", "tests\npass"];
    let body = "Screenshot\nfor the README";
    for s in [&web, &mcp] {
        s.ok("set_north_star", json!({"project_id": "p1", "text": "x"}));
    }
    set_over_mcp(&mcp, north_star, focus);
    mcp.ok(
        "add_task",
        json!({"project_id": "p1", "body": body, "kind": "cleanup"}),
    );
    for (tool, form) in [
        // CR LF as a browser sends a textarea's line breaks, and a lone CR as an older one may.
        (
            "set_north_star",
            "text=Ship+v1%0D%0A%0D%0A%E2%80%94+the+pages%0D",
        ),
        (
            "set_focus",
            "statement=One%0D%0Atwo&why=%0D%0Abecause&done_when=tests%0Dpass",
        ),
        (
            "add_task",
            "body=Screenshot%0D%0Afor+the+README&kind=cleanup",
        ),
    ] {
        written(&web, &page(&format!("projects/p1/{tool}")), form);
    }
    // What the model gets, and what is stored, is the same whichever way it was typed.
    assert_eq!(web.state_text("p1"), mcp.state_text("p1"));
    for sql in [
        "SELECT north_star FROM project",
        "SELECT statement || '|' || why || '|' || done_when FROM focus",
        "SELECT group_concat(body, '|') FROM task",
    ] {
        assert_eq!(web.db.stored(sql), mcp.db.stored(sql), "{sql}");
    }
    assert_eq!(web.db.stored("SELECT north_star FROM project"), north_star);
    // The same body sent over MCP is the task the page added: no second one.
    let added = web.ok(
        "add_task",
        json!({"project_id": "p1", "body": body, "kind": "cleanup"}),
    );
    assert!(texts(&added)[0].contains("task-1"), "{added}");
    written(
        &mcp,
        &page("projects/p1/add_task"),
        "body=Screenshot%0D%0Afor+the+README&kind=cleanup",
    );
    for s in [&web, &mcp] {
        assert_eq!(s.db.stored("SELECT group_concat(id) FROM task"), "task-1");
    }
}

#[test]
fn each_task_row_is_a_form_of_its_own() {
    let s = seeded();
    let page_body = get(&s, &page("projects/p1")).body;
    let body = page_body
        .split("<h2>Deferred tasks")
        .nth(1)
        .unwrap()
        .split("<h2>History")
        .next()
        .unwrap();
    let rows: Vec<&str> = body
        .split("<li>")
        .skip(1)
        .map(|row| row.split("</li>").next().unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{body}");
    // One form a row, its task id its only task_id, its own evidence field, one button (the
    // rows' bytes are the golden pages/project-seeded.http).
    for row in &rows {
        assert_eq!(row.matches("<form ").count(), 1, "{row}");
        assert_eq!(
            forms(row),
            [(
                "complete_task".into(),
                vec!["task_id".into(), "evidence".into()]
            )]
        );
        assert_eq!(row.matches("name=task_id").count(), 1, "{row}");
        assert_eq!(row.matches("<button").count(), 1, "{row}");
    }
    // The second row's form completes the second task, with its evidence, and no other.
    written(
        &s,
        &page("projects/p1/complete_task"),
        "task_id=task-2&evidence=noted+in+the+README",
    );
    assert_eq!(s.state_text("p1"), "🎯 NORTH STAR: Ship v1 🎯\n▶ 本丸（今やる1つ）: 本丸: the store（理由: all depends on it）\n\
         — 以下は後処理（北極星達成後・今は着手しない）—\n  [cleanup] Remove debug logs");
    assert_eq!(s.read("handoff://projects/p1/history"), "History, newest first (times UTC):\n\
         2026-12-01 08:00  record task completed: Note D1 limits — evidence: noted in the README — by owner (web)\n\
         2026-12-01 08:00  focus set: 本丸: the store — why: all depends on it — by owner (wire-test/0)\n\
         2026-12-01 08:00  north star set: Ship v1 🎯 — by owner (wire-test/0)");
    // A refused row keeps what was typed in that row alone.
    s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "Note more", "kind": "record"}),
    );
    let long = "e".repeat(2001);
    let reply = post(
        &s,
        &page("projects/p1/complete_task"),
        &format!("task_id=task-3&evidence={long}"),
    );
    golden::check("pages/refused-evidence.http", &reply);
}

#[test]
fn a_task_of_another_project_posted_to_a_page_is_no_task_there() {
    use handoff_mcp::config::{AUTH_TOKEN_VAR, PROJECT_TOKENS_VAR};
    let s = Server::with_vars(&[(AUTH_TOKEN_VAR, TOKEN), (PROJECT_TOKENS_VAR, "rw-tok=p1")]);
    s.ok("set_north_star", json!({"project_id": "p1", "text": "one"}));
    s.ok(
        "add_task",
        json!({"project_id": "p1", "body": "tidy", "kind": "cleanup"}),
    );
    // The tool's sentence for an id no task has yet: the one p2's task is about to get.
    let unknown = s.err("complete_task", json!({"task_id": "task-2"}));
    s.ok("set_north_star", json!({"project_id": "p2", "text": "two"}));
    s.ok(
        "add_task",
        json!({"project_id": "p2", "body": "other", "kind": "cleanup"}),
    );
    let before = s.db.dump();
    for token in [TOKEN, "rw-tok"] {
        let reply = post(
            &s,
            &format!("/{token}/projects/p1/complete_task"),
            "task_id=task-2&evidence=done",
        );
        assert_eq!(reply.status, 422, "{token}: {}", reply.body);
        assert!(
            reply.body.contains(&escaped(&unknown)),
            "{token}: {unknown}\n{}",
            reply.body
        );
        assert_eq!(s.db.dump(), before, "{token}");
    }
    // On its own project's page the same id completes the task.
    written(&s, &page("projects/p2/complete_task"), "task_id=task-2");
    assert_eq!(
        s.state_text("p2"),
        "🎯 NORTH STAR: two\n▶ 本丸（今やる1つ）: （未設定: set_focus で今やる1つを決める）\n\
         — 以下は後処理（北極星達成後・今は着手しない）—\n  （なし）"
    );
    assert_eq!(
        s.state_text("p1"),
        "🎯 NORTH STAR: one\n▶ 本丸（今やる1つ）: （未設定: set_focus で今やる1つを決める）\n\
         — 以下は後処理（北極星達成後・今は着手しない）—\n  [cleanup] tidy"
    );
}

#[test]
fn evidence_that_is_a_web_address_is_a_link_no_referrer_follows() {
    let s = seeded();
    for (task, evidence) in [
        ("task-1", "https://ci.example/run?id=1&x=2"),
        ("task-2", "https://github.com@evil.example/"),
    ] {
        s.ok(
            "complete_task",
            json!({"task_id": task, "evidence": evidence}),
        );
    }
    let body = get(&s, &page("projects/p1")).body;
    assert_only_template_markup(&body);
    assert!(body.contains(
        "<a href=\"https://ci.example/run?id=1&amp;x=2\" rel=\"noopener noreferrer nofollow\">\
         https://ci.example/run?id=1&amp;x=2</a>"
    ));
    // An address whose text is not where it goes stays text.
    assert!(body.contains("<span class=m>Evidence: </span>https://github.com@evil.example/<br>"));
    assert_eq!(body.matches("<a href=\"http").count(), 1);
}

#[test]
fn a_stale_focus_asks_and_one_press_confirms_it_as_it_stands() {
    let s = seeded();
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "本丸: the store\nline two", "why": "all \"depends\" on it",
               "done_when": "tests <pass>"}),
    );
    let day = 86_400_000;
    s.now.set(s.now.get() + 7 * day);
    let fresh = get(&s, &page("projects/p1")).body;
    assert!(
        !fresh.contains("Still the focus"),
        "7 days is within the limit"
    );
    s.now.set(s.now.get() + day);
    let stale = get(&s, &page("projects/p1"));
    assert_only_template_markup(&stale.body);
    golden::check("pages/project-stale.http", &stale);
    assert!(stale.body.contains(
        "<p><b>This focus is 8 days old (the limit is 7 days): is it still the one thing to do \
         now?</b> Confirm it, or set another below.</p>"
    ));
    // The form carries the focus as it stands, every field, and is set_focus's.
    let form = stale
        .body
        .split("<form ")
        .find(|f| f.contains("Still the focus"))
        .unwrap();
    assert!(
        form.starts_with("method=post action=\"../projects/p1/set_focus\" data-tool=set_focus>")
    );
    let events = s.read("handoff://projects/p1/history");
    // As a browser sends it (`encoded` sends line breaks as CR LF).
    written(
        &s,
        &page("projects/p1/set_focus"),
        &encoded(&[
            ("statement", "本丸: the store\nline two"),
            ("why", "all \"depends\" on it"),
            ("done_when", "tests <pass>"),
        ]),
    );
    assert!(form.contains(&format!(
        "name=statement value=\"{}\"",
        escaped("本丸: the store\nline two")
    )));
    assert!(form.contains("name=why value=\"all &quot;depends&quot; on it\""));
    assert!(form.contains("name=done_when value=\"tests &lt;pass&gt;\""));
    // Confirmed: no new history entry, the focus young again, the question gone.
    assert_eq!(s.read("handoff://projects/p1/history"), events);
    let after = get(&s, &page("projects/p1")).body;
    assert!(!after.contains("Still the focus") && after.contains("· just now · by owner (web)"));
    assert!(s.state_texts("p1")[1].contains("focus: set 2026-12-09 (today) by owner (web)"));
    // A change on another day opens that day's group, above the older one.
    s.ok(
        "set_focus",
        json!({"project_id": "p1", "statement": "Next"}),
    );
    let body = get(&s, &page("projects/p1")).body;
    let days: Vec<&str> = body
        .split("<h3><time datetime=")
        .skip(1)
        .map(|d| &d[..10])
        .collect();
    assert_eq!(days, ["2026-12-09", "2026-12-01"]);
    let newest = body.split("<h3><time datetime=2026-12-09>").nth(1).unwrap();
    let newest = newest.split("</ol>").next().unwrap();
    assert_eq!(newest.matches("<li>").count(), 1, "{newest}");
}

#[test]
fn deferred_tasks_beyond_what_get_state_lists_are_counted() {
    let s = seeded();
    // A project filled before the cap existed, written straight into SQLite.
    s.db.conn
        .execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
             INSERT INTO task (id, project_id, body, kind, demoted, status)
             SELECT 'old-' || i, 'p1', 'old ' || i, 'cleanup', 1, 'open' FROM n;",
        )
        .unwrap();
    let body = get(&s, &page("projects/p1")).body;
    assert_eq!(body.matches("data-tool=complete_task").count(), 30);
    assert!(body.contains("<p class=m>… and 2 more, not listed (get_state lists the oldest).</p>"));
    assert!(!get(&seeded(), &page("projects/p1"))
        .body
        .contains("more, not listed"));
}

#[test]
fn the_history_shows_its_newest_entries_and_counts_the_older() {
    let s = seeded();
    // 50 entries shown (the history resource's own limit), the seeded two and 48 more.
    for i in 0..49 {
        s.ok(
            "set_focus",
            json!({"project_id": "p1", "statement": format!("focus {i}")}),
        );
    }
    let body = get(&s, &page("projects/p1")).body;
    let history = body.split("<h2>History</h2>").nth(1).unwrap();
    let history = history.split("<h2>").next().unwrap();
    assert_eq!(history.matches("<li>").count(), 50);
    assert!(history.ends_with("<p class=m>… and 1 older entries (the export holds them all).</p>"));
    let fewer = get(&seeded(), &page("projects/p1")).body;
    assert!(!fewer.contains("older entries"));
}
