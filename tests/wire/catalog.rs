//! Resources (each project's state) and the resume prompt, in both eras.

use serde_json::{json, Value as Json};

use crate::support::{server_meta, Server};

fn seeded() -> Server {
    let s = Server::new();
    for id in ["beta", "alpha"] {
        s.ok(
            "set_north_star",
            json!({"project_id": id, "text": format!("{id} star")}),
        );
    }
    s.ok(
        "add_task",
        json!({"project_id": "alpha", "body": "tidy", "kind": "cleanup"}),
    );
    s
}

fn result(reply: crate::support::Reply) -> Json {
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = reply.json();
    assert!(body.get("error").is_none(), "{body}");
    body["result"].clone()
}

#[test]
fn resources_list_names_every_project_with_private_hints() {
    let s = seeded();
    let listed = result(s.stateless(json!(1), "resources/list", json!({})));
    assert_eq!(
        listed,
        json!({
            "resources": [
                {"uri": "handoff://projects/alpha/state", "name": "alpha", "title": "State of project alpha", "mimeType": "text/plain"},
                {"uri": "handoff://projects/beta/state", "name": "beta", "title": "State of project beta", "mimeType": "text/plain"},
            ],
            "resultType": "complete", "ttlMs": 0, "cacheScope": "private", "_meta": server_meta(),
        })
    );
    let handshake = result(s.handshake("2025-11-25", json!(1), "resources/list", json!({})));
    assert!(
        handshake.get("ttlMs").is_none() && handshake["resources"].as_array().unwrap().len() == 2
    );
}

/// The projects of `s`, page by page: each page's names, and whether it offered a next cursor.
fn resource_pages(s: &Server) -> Vec<(Vec<String>, bool)> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let page = result(s.stateless(json!(1), "resources/list", params));
        cursor = page
            .get("nextCursor")
            .and_then(Json::as_str)
            .map(str::to_owned);
        let names = page["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect();
        pages.push((names, cursor.is_some()));
        if cursor.is_none() || pages.len() > 5 {
            return pages;
        }
    }
}

#[test]
fn resources_list_pages_by_cursor() {
    // A page holds 100 projects; a next cursor only when more follow, so exactly one full page
    // has none.
    for (projects, sizes) in [
        (100, vec![100]),
        (101, vec![100, 1]),
        (205, vec![100, 100, 5]),
    ] {
        let s = Server::new();
        for i in 0..projects {
            s.ok(
                "set_north_star",
                json!({"project_id": format!("p{i:03}"), "text": "t"}),
            );
        }
        let pages = resource_pages(&s);
        let seen: Vec<String> = pages.iter().flat_map(|(names, _)| names.clone()).collect();
        let expected: Vec<String> = (0..projects).map(|i| format!("p{i:03}")).collect();
        assert_eq!(seen, expected, "{projects} projects");
        assert_eq!(
            pages
                .iter()
                .map(|(names, _)| names.len())
                .collect::<Vec<_>>(),
            sizes,
            "{projects} projects"
        );
        let cursors: Vec<bool> = pages.iter().map(|(_, more)| *more).collect();
        let mut want = vec![true; sizes.len() - 1];
        want.push(false);
        assert_eq!(cursors, want, "{projects} projects");
    }
    let s = Server::new();
    let reply = s.stateless(
        json!(2),
        "resources/list",
        json!({"cursor": "not a cursor!"}),
    );
    assert_eq!(reply.json()["error"]["code"], -32602);
}

#[test]
fn resources_read_returns_the_contract_text() {
    let s = seeded();
    let read = result(s.stateless(
        json!(1),
        "resources/read",
        json!({"uri": "handoff://projects/alpha/state"}),
    ));
    assert_eq!(read["contents"][0]["uri"], "handoff://projects/alpha/state");
    assert_eq!(read["contents"][0]["mimeType"], "text/plain");
    // get_state's two texts, the contract and the reference block, a blank line apart.
    assert_eq!(
        read["contents"][0]["text"],
        s.state_texts("alpha").join("\n")
    );
    assert_eq!(read["contents"].as_array().unwrap().len(), 1);
    assert_eq!(
        (read["ttlMs"].clone(), read["cacheScope"].clone()),
        (json!(0), json!("private"))
    );
}

#[test]
fn a_missing_resource_is_invalid_params_with_its_uri_then_resource_not_found_in_2025() {
    let s = seeded();
    for uri in [
        "handoff://projects/nope/state",
        "test://nonexistent",
        "handoff://projects/a b/state",
    ] {
        let reply = s.stateless(json!(0), "resources/read", json!({"uri": uri}));
        let body = reply.json();
        assert_eq!(
            (
                reply.status,
                body["id"].clone(),
                body["error"]["code"].clone()
            ),
            (200, json!(0), json!(-32602)),
            "{uri}"
        );
        assert_eq!(body["error"]["data"], json!({"uri": uri}));
        let handshake = s
            .handshake(
                "2025-11-25",
                json!(0),
                "resources/read",
                json!({"uri": uri}),
            )
            .json();
        assert_eq!(handshake["error"]["code"], -32002);
        assert_eq!(handshake["error"]["data"], json!({"uri": uri}));
    }
}

#[test]
fn templates_are_static_and_public() {
    let s = Server::new();
    let templates = result(s.stateless(json!(1), "resources/templates/list", json!({})));
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "handoff://projects/{project_id}/state"
    );
    assert_eq!(
        (templates["ttlMs"].clone(), templates["cacheScope"].clone()),
        (json!(300000), json!("public"))
    );
}

#[test]
fn the_resume_prompt() {
    let s = seeded();
    let listed = result(s.stateless(json!(1), "prompts/list", json!({})));
    assert_eq!(listed["prompts"][0]["name"], "resume");
    assert_eq!(
        listed["prompts"][0]["arguments"],
        json!([{"name": "project_id", "description": "The project's id, e.g. \"handoff-mcp\". May be left out when the connection reaches one project.", "required": false}])
    );
    assert_eq!(listed["cacheScope"], "public");
    let got = result(s.stateless(
        json!(2),
        "prompts/get",
        json!({"name": "resume", "arguments": {"project_id": "alpha"}}),
    ));
    assert_eq!(
        got["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": format!(
            "Continue project \"alpha\". Its state (handoff-mcp get_state):\n\n{}\n\n\
             この出力をフラットなTODOメニューに変換するな。まず北極星を述べ、本丸を1つ進めよ。後処理は北極星達成後にのみ着手。",
            s.state_texts("alpha").join("\n")
        )}}])
    );
    assert_eq!(got["resultType"], "complete");
    assert!(got.get("ttlMs").is_none());
}

#[test]
fn prompt_errors_are_invalid_params() {
    let s = seeded();
    for params in [
        json!({"name": "nope", "arguments": {"project_id": "alpha"}}),
        json!({"name": "resume"}),
        json!({"name": "resume", "arguments": {"project_id": "has space"}}),
        json!({"name": "resume", "arguments": {"project_id": "ghost"}}),
    ] {
        let reply = s.stateless(json!("x"), "prompts/get", params.clone());
        let body = reply.json();
        assert_eq!(
            (body["id"].clone(), body["error"]["code"].clone()),
            (json!("x"), json!(-32602)),
            "{params}"
        );
    }
}

#[test]
fn catalog_reads_are_one_round_trip() {
    let s = seeded();
    for (method, params) in [
        ("resources/list", json!({})),
        (
            "resources/read",
            json!({"uri": "handoff://projects/alpha/state"}),
        ),
        (
            "prompts/get",
            json!({"name": "resume", "arguments": {"project_id": "alpha"}}),
        ),
    ] {
        let before = s.db.batches.get();
        result(s.stateless(json!(1), method, params));
        assert_eq!(s.db.batches.get() - before, 1, "{method}");
    }
}
