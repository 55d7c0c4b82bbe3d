//! Sharing a project and taking it back (`sharing`, the project page's forms and the owner's
//! API): a project token made by the owner, shown once and stored only as a keyed hash, works at
//! once on every surface within its project and its access, names its label in the history and
//! the writers, and once revoked is refused at once by every method; the caps, the label's rules
//! and the owner-only rule, each refusal writing nothing; and deleting a project, the wrong id
//! then the right one, takes its rows, tokens and grants in one batch.

use serde_json::{json, Value as Json};

use crate::golden;
use crate::oauth::{server, FORM, OWN, PROJECT, READER, TOKEN};
use crate::support::{Reply, Server};

/// A server with project alpha (a North Star, a focus, a cleanup task) and project beta.
fn seeded() -> Server {
    let s = server();
    s.ok(
        "set_north_star",
        json!({"project_id": "alpha", "text": "Ship the share"}),
    );
    s.ok(
        "set_focus",
        json!({"project_id": "alpha", "statement": "the token page"}),
    );
    s.ok(
        "add_task",
        json!({"project_id": "alpha", "body": "Drop the old list", "kind": "cleanup"}),
    );
    s.ok(
        "set_north_star",
        json!({"project_id": "beta", "text": "Beta's star"}),
    );
    s
}

fn post(s: &Server, path: &str, body: &str) -> Reply {
    s.http("POST", path, &[FORM, OWN], body.as_bytes())
}

/// The token a share page shows, between its `<pre class=tok id=token>` and `</pre>`.
fn shown_token(page: &Reply) -> String {
    let start = page
        .body
        .find("<pre class=tok id=token>")
        .expect("a token on the page")
        + 24;
    let end = page.body[start..].find("</pre>").unwrap() + start;
    page.body[start..end].to_owned()
}

/// Makes a token of alpha on the owner's page.
fn share(s: &Server, label: &str, access: &str) -> String {
    let body = format!(
        "label={}&access={access}",
        label.replace(' ', "+").replace('\'', "%27")
    );
    let page = post(s, &format!("/{TOKEN}/projects/alpha/tokens"), &body);
    assert_eq!(page.status, 200, "{}", page.body);
    shown_token(&page)
}

/// A JSON-RPC message to /mcp with `token` as its bearer, as a 2025-06-18 client sends it.
fn mcp(s: &Server, token: &str, message: Json) -> Reply {
    let auth = format!("Bearer {token}");
    s.http(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", "2025-06-18"),
            ("Authorization", &auth),
            ("User-Agent", "claude-code/2.1.332"),
        ],
        message.to_string().as_bytes(),
    )
}

fn call(s: &Server, token: &str, tool: &str, arguments: Json) -> Reply {
    mcp(
        s,
        token,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}}),
    )
}

fn text(reply: &Reply) -> String {
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The share page names the token once, the project, its access and the block a teammate
/// needs; the token is stored nowhere, only its keyed hash; and the page's golden holds the
/// rest byte for byte.
#[test]
fn the_owner_makes_a_token_shown_once_and_stored_only_as_a_hash() {
    let s = seeded();
    let page = post(
        &s,
        &format!("/{TOKEN}/projects/alpha/tokens"),
        "label=Aiko%27s+laptop&access=write",
    );
    assert_eq!(page.status, 200, "{}", page.body);
    let token = shown_token(&page);
    assert!(token.starts_with("hpt.") && token.len() < 160, "{token}");
    // Shown on this one page: alone, then in the block (the variable, the header line, the
    // connector URL, the browser line).
    assert_eq!(page.body.matches(&token).count(), 5, "{}", page.body);
    for line in [
        "export HANDOFF_URL=https://handoff.example\n",
        &format!("export HANDOFF_TOKEN={token}\n"),
        "claude plugin install handoff@handoff-mcp\n",
        "no .handoff file is needed",
        &format!("--header \"Authorization: Bearer {token}\""),
        &format!("https://handoff.example/{token}/mcp\n"),
    ] {
        assert!(page.body.contains(line), "{line}: {}", page.body);
    }
    golden::check("pages/share-made.http", &redacted(&page, &token));
    // Only a keyed hash: the token is in no table, and neither is its plain hash.
    let dump = s.db.dump();
    assert!(!dump.contains(&token));
    assert!(!dump.contains(&handoff_mcp::crypto::sha256_hex(token.as_bytes())));
    assert_eq!(
        s.db.stored("SELECT label || ' ' || scope FROM project_token"),
        "Aiko's laptop rw:alpha"
    );
    assert_eq!(
        s.db.stored("SELECT CAST(length(hash) AS TEXT) FROM project_token"),
        "32"
    );
    // The project's page lists it, with no token and with its Revoke button.
    let listed = s.http("GET", &format!("/{TOKEN}/projects/alpha"), &[], b"");
    assert!(!listed.body.contains(&token));
    assert!(listed.body.contains("<li><b>Aiko&#39;s laptop</b> <span class=k>read and write</span><div class=m>made just now · never used</div>"), "{}", listed.body);
}

/// A page with its run's token and token id made fixed, for its golden.
fn redacted(page: &Reply, token: &str) -> Reply {
    Reply {
        status: page.status,
        headers: page.headers.clone(),
        body: page.body.replace(token, "TOKEN"),
    }
}

/// A new token works at once, within its project and its access, on /mcp (bearer and path),
/// state.txt without an id, and the pages; every write names its label; a tool call is still
/// one round trip, the guard riding in it.
#[test]
fn a_token_works_at_once_within_its_project_and_names_its_label() {
    let s = seeded();
    let writer = share(&s, "Aiko's laptop", "write");
    let reader = share(&s, "CI", "read");
    let before = s.db.batches.get();
    let state = text(&call(&s, &writer, "get_state", json!({})));
    assert_eq!(s.db.batches.get() - before, 1, "one round trip");
    assert!(state.starts_with("🎯 NORTH STAR: Ship the share\n"));
    let written = text(&call(
        &s,
        &writer,
        "set_focus",
        json!({"statement": "review the page"}),
    ));
    assert!(
        written.contains("▶ 本丸（今やる1つ）: review the page"),
        "{written}"
    );
    let history = s.read("handoff://projects/alpha/history");
    assert!(
        history.contains("focus set: review the page — by Aiko's laptop (claude-code/2.1.332)"),
        "{history}"
    );
    // Its own project only, and a reader writes nothing.
    let beta = call(&s, &writer, "get_state", json!({"project_id": "beta"}));
    assert!(text(&beta).contains("reaches project \"alpha\" only"));
    let refused = call(&s, &reader, "set_focus", json!({"statement": "x"}));
    assert!(text(&refused).contains("read-only"));
    // state.txt with no id, its writers named; the token in the path; the pages.
    let auth = format!("Bearer {reader}");
    let plain = s.http("GET", "/state.txt", &[("Authorization", &auth)], b"");
    assert_eq!(plain.status, 200, "{}", plain.body);
    assert_eq!(plain.header("x-handoff-project"), Some("alpha"));
    assert_eq!(
        plain.header("x-handoff-writers"),
        Some("owner (wire-test/0), Aiko%27s laptop (claude-code/2.1.332)")
            .map(|w| w.replace("%27", "'"))
            .as_deref()
    );
    assert_eq!(
        s.http("GET", &format!("/{reader}/state.txt"), &[], b"")
            .status,
        200
    );
    let page = s.http("GET", &format!("/{writer}/projects/alpha"), &[], b"");
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("review the page") && !page.body.contains("id=share"),
        "no sharing for a project token"
    );
    assert_eq!(
        s.http("GET", &format!("/{writer}/projects/beta"), &[], b"")
            .status,
        404
    );
    // Last used is kept, to five minutes.
    let used =
        s.db.stored("SELECT CAST(last_used_at AS TEXT) FROM project_token WHERE label = 'CI'");
    assert_eq!(used, crate::support::NOW_MS.to_string());
}

/// Revoked on the page, a token is refused at once by every method and surface, those that read
/// nothing included; the others go on.
#[test]
fn a_revoked_token_is_refused_at_once_everywhere() {
    let s = seeded();
    let token = share(&s, "old laptop", "write");
    let other = share(&s, "new laptop", "write");
    let id =
        s.db.stored("SELECT id FROM project_token WHERE label = 'old laptop'");
    let revoked = post(&s, &format!("/{TOKEN}/projects/alpha/tokens/{id}"), "");
    assert_eq!(
        (revoked.status, revoked.header("location")),
        (303, Some("../../../projects/alpha#tokens"))
    );
    let sentence = "Unauthorized: this project token was revoked, or its project deleted; ask the project's owner for a new one";
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_state", "arguments": {}}}),
    ] {
        let reply = mcp(&s, &token, message.clone());
        assert_eq!(
            (reply.status, reply.json()["error"]["message"].clone()),
            (401, json!(sentence)),
            "{message}"
        );
        let path = s.http(
            "POST",
            &format!("/{token}/mcp"),
            &[
                ("Content-Type", "application/json"),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            message.to_string().as_bytes(),
        );
        assert_eq!(path.status, 401, "{message}");
    }
    let auth = format!("Bearer {token}");
    let plain = s.http("GET", "/state.txt", &[("Authorization", &auth)], b"");
    assert_eq!(
        (plain.status, plain.body.as_str()),
        (401, format!("{sentence}\n").as_str())
    );
    assert_eq!(
        s.http("GET", &format!("/{token}/projects/alpha"), &[], b"")
            .status,
        401
    );
    assert_eq!(
        s.http("GET", &format!("/{token}/state.txt"), &[], b"")
            .status,
        401
    );
    assert_eq!(
        text(&call(&s, &other, "get_state", json!({})))
            .lines()
            .next(),
        Some("🎯 NORTH STAR: Ship the share")
    );
    // The page lists the live one only.
    let page = s
        .http("GET", &format!("/{TOKEN}/projects/alpha"), &[], b"")
        .body;
    assert!(page.contains("<b>new laptop</b>") && !page.contains("<b>old laptop</b>"));
    // A token sealed with another key, or changed, is no token: the bare 404 / 401, counted.
    let forged = format!("{}x", &token[..token.len() - 1]);
    assert_eq!(
        s.http("GET", &format!("/{forged}/state.txt"), &[], b"")
            .status,
        404
    );
}

/// Only the owner's full-access token shares, takes a share back or deletes; a project token,
/// a made one and an OAuth grant cannot, on the page or through the API; nothing is written.
#[test]
fn only_the_owner_shares_revokes_or_deletes() {
    let s = seeded();
    let made = share(&s, "teammate", "write");
    let before = s.db.dump();
    for token in [PROJECT, READER, made.as_str()] {
        let page = post(
            &s,
            &format!("/{token}/projects/alpha/tokens"),
            "label=mine&access=write",
        );
        assert_eq!(page.status, 422, "{token}");
        assert!(
            page.body
                .contains("Only the owner&#39;s full-access token (AUTH_TOKEN) shares a project"),
            "{}",
            page.body
        );
        let delete = post(
            &s,
            &format!("/{token}/projects/alpha/delete"),
            "confirm=alpha",
        );
        assert_eq!(delete.status, 422);
        let auth = format!("Bearer {token}");
        let api = s.http(
            "GET",
            "/projects/alpha/tokens",
            &[("Authorization", &auth)],
            b"",
        );
        assert_eq!(api.status, 403, "{}", api.body);
        assert_eq!(api.json()["error"], json!(handoff_mcp::sharing::NOT_OWNER));
    }
    assert_eq!(s.db.dump(), before);
}

/// A post from another origin (or none) makes, revokes and deletes nothing.
#[test]
fn the_sharing_forms_come_from_our_own_pages_only() {
    let s = seeded();
    let before = s.db.dump();
    for origin in [Some("https://evil.example"), None] {
        let headers: Vec<(&str, &str)> = [Some(FORM), origin.map(|o| ("Origin", o))]
            .into_iter()
            .flatten()
            .collect();
        for (path, body) in [
            ("tokens", "label=x"),
            ("delete", "confirm=alpha"),
            ("tokens/abc", ""),
        ] {
            let reply = s.http(
                "POST",
                &format!("/{TOKEN}/projects/alpha/{path}"),
                &headers,
                body.as_bytes(),
            );
            assert_eq!(reply.status, 403, "{path} {origin:?}");
        }
    }
    assert_eq!(s.db.dump(), before);
}

/// A label is one line of 1 to 40 characters; a project holds 20 live tokens and makes 10 an
/// hour; each refusal is the project's page with its sentence and the label typed, nothing made.
#[test]
fn labels_and_caps_are_kept_and_each_refusal_says_why() {
    let s = seeded();
    let refused = |body: &str, says: &str| {
        let before =
            s.db.stored("SELECT CAST(count(*) AS TEXT) FROM project_token");
        let page = post(&s, &format!("/{TOKEN}/projects/alpha/tokens"), body);
        assert_eq!(page.status, 422, "{body}");
        assert!(page.body.contains(says), "{body}: {}", page.body);
        assert!(page.body.contains("<details id=share open>"));
        assert_eq!(
            s.db.stored("SELECT CAST(count(*) AS TEXT) FROM project_token"),
            before
        );
        page
    };
    refused("label=+++", "A token needs a label");
    refused("label=%E2%80%8B", "A token needs a label");
    let long = "x".repeat(41);
    let page = refused(
        &format!("label={long}"),
        "A label is one line of at most 40 characters (this one: 41",
    );
    assert!(
        page.body.contains(&format!(
            "name=label required maxlength=40 value=\"{long}\""
        )),
        "the label typed is kept"
    );
    refused("label=two%0Alines", "A label is one line");
    share(&s, &"y".repeat(40), "write");
    for i in 1..10 {
        share(&s, &format!("machine {i}"), "read");
    }
    refused(
        "label=eleventh",
        "10 tokens were made for project &quot;alpha&quot; within the hour",
    );
    // An hour later, the cap on live tokens.
    for hour in 1..=2 {
        s.now.set(crate::support::NOW_MS + hour * 3_700_000);
        for i in 0..10 {
            if hour == 2 && i == 0 {
                break;
            }
            share(&s, &format!("hour {hour} {i}"), "read");
        }
    }
    assert_eq!(
        s.db.stored("SELECT CAST(count(*) AS TEXT) FROM project_token"),
        "20"
    );
    refused("label=one+more", "has 20 live tokens, the most it may have");
    // Without OAuth's key, no token can be sealed.
    let off = Server::with_vars(&[(handoff_mcp::config::AUTH_TOKEN_VAR, TOKEN)]);
    off.credential(&format!("/{TOKEN}/mcp"), None);
    off.ok(
        "set_north_star",
        json!({"project_id": "alpha", "text": "n"}),
    );
    let page = off.http(
        "POST",
        &format!("/{TOKEN}/projects/alpha/tokens"),
        &[FORM, OWN],
        b"label=x",
    );
    assert!(
        page.body
            .contains("Making a project token needs OAuth&#39;s key"),
        "{}",
        page.body
    );
}

/// Deleting asks for the id typed: a wrong one deletes nothing; the right one takes the
/// project's rows, its search entries, its tokens and its grants in one batch, and the tools,
/// state.txt and the pages then answer as for a project that never was.
#[test]
fn a_project_is_deleted_only_with_its_id_typed_and_takes_everything_with_it() {
    let s = seeded();
    let token = share(&s, "teammate", "write");
    let (_, tokens) = crate::oauth::granted(&s, PROJECT, &[]);
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    s.ok(
        "complete_task",
        json!({"task_id": s.db.stored("SELECT id FROM task")}),
    );
    let before = s.db.dump();
    let wrong = post(
        &s,
        &format!("/{TOKEN}/projects/alpha/delete"),
        "confirm=alph",
    );
    assert_eq!(wrong.status, 422);
    assert!(
        wrong.body.contains(
            "type its id, alpha, to confirm (this said &quot;alph&quot;). Nothing was deleted."
        ),
        "{}",
        wrong.body
    );
    assert_eq!(s.db.dump(), before);
    let batches = s.db.batches.get();
    let deleted = post(
        &s,
        &format!("/{TOKEN}/projects/alpha/delete"),
        "confirm=alpha",
    );
    assert_eq!(
        (deleted.status, s.db.batches.get() - batches),
        (200, 1),
        "{}",
        deleted.body
    );
    golden::check("pages/deleted.http", &deleted);
    for table in ["project", "focus", "task", "event", "project_token"] {
        let left = s.db.stored(&format!(
            "SELECT CAST(count(*) AS TEXT) FROM {table} WHERE {} = 'alpha'",
            if table == "project" {
                "id"
            } else {
                "project_id"
            }
        ));
        assert_eq!(left, "0", "{table}");
    }
    assert_eq!(
        s.db.stored("SELECT revoked_why FROM oauth_grant"),
        "project deleted"
    );
    assert_eq!(
        s.db.stored("SELECT CAST(count(*) AS TEXT) FROM project WHERE id = 'beta'"),
        "1"
    );
    // The search indexes hold nothing of it, and are whole.
    s.db.conn.execute_batch("INSERT INTO event_text (event_text) VALUES ('integrity-check'); INSERT INTO task_text (task_text) VALUES ('integrity-check');").unwrap();
    assert!(text_of_search(&s, "share").contains("No record matches"));
    assert!(s
        .err("get_state", json!({"project_id": "alpha"}))
        .starts_with("No project \"alpha\" yet"));
    let plain = s.http(
        "GET",
        &format!("/{TOKEN}/projects/alpha/state.txt"),
        &[],
        b"",
    );
    assert_eq!(plain.status, 404);
    assert_eq!(call(&s, &token, "get_state", json!({})).status, 401);
    assert_eq!(call(&s, &access, "get_state", json!({})).status, 401);
    assert_eq!(
        s.http("GET", &format!("/{TOKEN}/projects/alpha"), &[], b"")
            .status,
        404
    );
}

fn text_of_search(s: &Server, query: &str) -> String {
    crate::support::text(&s.ok("search", json!({"query": query})))
}

/// The owner's API: the same actions with the bearer header, as JSON.
#[test]
fn the_owners_api_makes_lists_revokes_and_deletes() {
    let s = seeded();
    let auth = format!("Bearer {TOKEN}");
    let bearer = [("Authorization", auth.as_str())];
    let made = s.http(
        "POST",
        "/projects/alpha/tokens",
        &[FORM, bearer[0]],
        b"label=script&access=read",
    );
    assert_eq!(made.status, 201, "{}", made.body);
    let made = made.json();
    assert_eq!(
        (
            made["project"].clone(),
            made["label"].clone(),
            made["access"].clone()
        ),
        (json!("alpha"), json!("script"), json!("read"))
    );
    let token = made["token"].as_str().unwrap();
    assert_eq!(
        text(&call(&s, token, "get_state", json!({})))
            .lines()
            .next(),
        Some("🎯 NORTH STAR: Ship the share")
    );
    let listed = s.http("GET", "/projects/alpha/tokens", &bearer, b"");
    assert_eq!(listed.status, 200);
    let listed = listed.json();
    assert_eq!(listed["tokens"][0]["label"], "script");
    assert_eq!(listed["tokens"][0]["access"], "read");
    assert_eq!(
        listed["tokens"][0]["last_used_at"],
        json!(crate::support::NOW_MS)
    );
    assert!(!listed.to_string().contains(token), "a list shows no token");
    let id = made["id"].as_str().unwrap();
    let revoked = s.http(
        "DELETE",
        &format!("/projects/alpha/tokens/{id}"),
        &bearer,
        b"",
    );
    assert_eq!(
        (revoked.status, revoked.json()),
        (200, json!({"project": "alpha", "revoked": id}))
    );
    assert_eq!(call(&s, token, "get_state", json!({})).status, 401);
    let refused = s.http(
        "POST",
        "/projects/alpha/tokens",
        &[FORM, bearer[0]],
        b"label=",
    );
    assert_eq!(refused.status, 400);
    assert!(refused.json()["error"]
        .as_str()
        .unwrap()
        .starts_with("A token needs a label"));
    assert_eq!(
        s.http("PUT", "/projects/alpha/tokens", &bearer, b"").status,
        405
    );
    assert_eq!(
        s.http("POST", "/projects/alpha/tokens", &bearer, b"label=x")
            .status,
        415
    );
    let wrong = s.http("DELETE", "/projects/alpha?confirm=beta", &bearer, b"");
    assert_eq!(wrong.status, 400);
    let gone = s.http("DELETE", "/projects/alpha?confirm=alpha", &bearer, b"");
    assert_eq!(
        (gone.status, gone.json()),
        (200, json!({"deleted": "alpha"}))
    );
    assert_eq!(
        s.http("DELETE", "/projects/alpha?confirm=alpha", &bearer, b"")
            .status,
        400
    );
    // No bearer: the 401 as JSON, told what to send.
    let anonymous = s.http("GET", "/projects/beta/tokens", &[], b"");
    assert_eq!(anonymous.status, 401);
    assert!(anonymous.json()["error"]
        .as_str()
        .unwrap()
        .starts_with("Unauthorized"));
}
