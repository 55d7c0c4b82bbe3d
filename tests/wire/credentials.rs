//! Credentials: the token in the path or in `Authorization: Bearer`, several full tokens at
//! once (rotation), project-scoped and read-only tokens on every surface, and the fail-closed
//! answer to a malformed credential table. Driven like the Worker: each request is planned.

use handoff_mcp::auth::scope::{Credential, Scope};
use handoff_mcp::http::{self, Headers};
use handoff_mcp::route::{self, Endpoint, Plan};
use serde_json::{json, Value as Json};

use crate::support::{Reply, Server, TOKEN};

const RW: &str = "scoped-rw-token";
const RO: &str = "scoped-ro-token";
const PROJECT_TOKENS: &str = "scoped-rw-token=alpha\nscoped-ro-token=alpha:read";
const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const JSON: (&str, &str) = ("Content-Type", "application/json");
const SESSION: &str = "0123456789abcdef0123456789abcdef";

/// A server with the full test token, the two scoped ones, and projects alpha and beta, each
/// with a North Star and one open cleanup task (task-1 in alpha, task-2 in beta).
fn scoped() -> Server {
    let s = Server::with_vars(&[("AUTH_TOKEN", TOKEN), ("PROJECT_TOKENS", PROJECT_TOKENS)]);
    for id in ["alpha", "beta"] {
        s.ok(
            "set_north_star",
            json!({"project_id": id, "text": format!("{id} star")}),
        );
        s.ok(
            "add_task",
            json!({"project_id": id, "body": format!("{id} chore"), "kind": "cleanup"}),
        );
    }
    s
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// The plain /mcp path with this bearer token, then the token path of the same token: every
/// scoped rule must hold both ways.
fn both_ways(s: &Server, token: &str, check: impl Fn(&str)) {
    s.credential("/mcp", Some(&bearer(token)));
    check("header");
    s.credential(&format!("/{token}/mcp"), None);
    check("path");
    s.credential(&format!("/{TOKEN}/mcp"), None);
}

fn error_of(reply: &Reply) -> (u16, Json, Json) {
    let body = reply.json();
    (
        reply.status,
        body["id"].clone(),
        body["error"]["code"].clone(),
    )
}

fn plan_of(s: &Server, method: &str, path: &str, headers: &[(&str, &str)]) -> Plan {
    let headers = Headers::new(headers.iter().copied());
    let req = http::Request {
        method,
        path,
        query: Some("sessionId=0123456789abcdef0123456789abcdef"),
        headers: &headers,
        own_origin: "https://handoff.example",
        now_ms: 0,
    };
    route::plan(&req, &s.config)
}

#[test]
fn the_bearer_header_opens_the_plain_paths() {
    let s = Server::new();
    for auth in [
        "Bearer test-token",
        "bearer test-token",
        "BEARER test-token",
        "Bearer   test-token",
    ] {
        s.credential("/mcp", Some(auth));
        let reply = s.post(&[], PING);
        assert_eq!(
            (reply.status, reply.body.as_str()),
            (200, r#"{"id":1,"jsonrpc":"2.0","result":{}}"#),
            "{auth:?}"
        );
    }
    s.credential("/mcp", Some("Bearer test-token"));
    s.ok(
        "set_north_star",
        json!({"project_id": "p", "text": "over the header"}),
    );
    s.credential(&format!("/{TOKEN}/mcp"), None);
    assert!(s
        .state_text("p")
        .starts_with("🎯 NORTH STAR: over the header\n"));
    // POST /sse without a token segment is Streamable HTTP too, with the header.
    s.credential("/sse", Some("Bearer test-token"));
    assert_eq!(s.post(&[], PING).status, 200);
}

#[test]
fn no_or_a_wrong_bearer_is_401_saying_what_to_send() {
    let s = Server::new();
    let expected_body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
        "message": "Unauthorized: send the header Authorization: Bearer <token>, or put the token in the path (/<token>/mcp)"}});
    for path in ["/mcp", "/sse", "/sse/message"] {
        for auth in [
            None,
            Some(""),
            Some("Bearer"),
            Some("Bearer "),
            Some("Bearer wrong-token"),
            Some("Bearer test-token-x"),
            Some("Bearer TEST-TOKEN"),
            Some("Basic dGVzdC10b2tlbg=="),
            Some("test-token"),
            Some("Bearertest-token"),
        ] {
            let mut headers = vec![JSON];
            if let Some(auth) = auth {
                headers.push(("Authorization", auth));
            }
            let reply = s.request_to("POST", path, &headers, PING.as_bytes());
            let case = format!("{path} {auth:?}");
            assert_eq!(reply.status, 401, "{case}");
            assert_eq!(reply.header("www-authenticate"), Some("Bearer"), "{case}");
            assert_eq!(reply.json(), expected_body, "{case}");
        }
    }
    // The 401 comes before any other rule: a GET, a wrong Origin or no Content-Type alike.
    for (method, headers) in [
        ("GET", vec![]),
        ("POST", vec![("Origin", "https://evil.example")]),
        ("POST", vec![]),
    ] {
        assert_eq!(
            s.request_to(method, "/mcp", &headers, b"").status,
            401,
            "{method} {headers:?}"
        );
    }
}

#[test]
fn no_oauth_metadata_is_advertised() {
    let s = Server::new();
    let unknown = s.request_to("GET", "/no-such-path", &[], b"");
    assert_eq!((unknown.status, unknown.body.as_str()), (404, "Not Found"));
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/register",
        "/authorize",
        "/token",
    ] {
        for headers in [vec![], vec![("Authorization", "Bearer test-token")]] {
            let reply = s.request_to("GET", path, &headers, b"");
            assert_eq!(
                (reply.status, &reply.body, &reply.headers),
                (404, &unknown.body, &unknown.headers),
                "{path}"
            );
        }
    }
    let refused = s.request_to("POST", "/mcp", &[JSON], PING.as_bytes());
    let everything = format!("{:?} {}", refused.headers, refused.body);
    for oauth in [
        "resource_metadata",
        "realm",
        "authorization_uri",
        "well-known",
    ] {
        assert!(!everything.contains(oauth), "{everything}");
    }
}

#[test]
fn on_a_token_path_the_path_token_alone_decides() {
    let s = Server::new();
    let token_path = format!("/{TOKEN}/mcp");
    for auth in [
        "Bearer wrong-token",
        "Basic x",
        "",
        "Bearer a, Bearer b",
        "Bearer test-token",
    ] {
        let reply = s.request_to(
            "POST",
            &token_path,
            &[JSON, ("Authorization", auth)],
            PING.as_bytes(),
        );
        assert_eq!(reply.status, 200, "{auth:?}");
    }
    // Two Authorization headers, as the Worker sees them (joined), are ignored there too.
    let reply = s.request_to(
        "POST",
        &token_path,
        &[
            JSON,
            ("Authorization", "Bearer x"),
            ("Authorization", "Bearer y"),
        ],
        PING.as_bytes(),
    );
    assert_eq!(reply.status, 200);
    // A wrong path token is the bare 404, even with the right header.
    let reply = s.request_to(
        "POST",
        "/wrong-token/mcp",
        &[JSON, ("Authorization", "Bearer test-token")],
        PING.as_bytes(),
    );
    assert_eq!(
        (
            reply.status,
            reply.body.as_str(),
            reply.header("www-authenticate")
        ),
        (404, "Not Found", None)
    );
}

#[test]
fn two_authorization_headers_are_400() {
    let s = Server::new();
    for headers in [
        vec![
            ("Authorization", "Bearer test-token"),
            ("Authorization", "Bearer test-token"),
        ],
        vec![
            ("Authorization", "Bearer test-token"),
            ("authorization", "Bearer other"),
        ],
        vec![("Authorization", "Bearer test-token, Bearer other")],
        vec![("Authorization", "Bearer test-token,")],
    ] {
        let mut all = vec![JSON];
        all.extend(headers.iter().copied());
        let reply = s.request_to("POST", "/mcp", &all, PING.as_bytes());
        assert_eq!(
            error_of(&reply),
            (400, json!(null), json!(-32600)),
            "{headers:?}"
        );
        assert_eq!(
            reply.json()["error"]["message"],
            "Bad Request: send one Authorization header, holding one Bearer token"
        );
    }
}

#[test]
fn sse_over_the_header_names_no_token_and_each_post_needs_the_header() {
    let s = scoped();
    let header = bearer(TOKEN);
    let auth = ("Authorization", header.as_str());
    assert_eq!(
        plan_of(&s, "GET", "/sse", &[auth]),
        Plan::OpenSse {
            endpoint_prefix: "/sse/message?sessionId=".into(),
            credential: Credential::token(Scope::All),
        }
    );
    assert_eq!(
        plan_of(&s, "POST", "/sse/message", &[auth, JSON]),
        Plan::SseMessage {
            session: SESSION.into(),
            credential: Credential::token(Scope::All),
        }
    );
    for headers in [vec![JSON], vec![JSON, ("Authorization", "Bearer nope")]] {
        match plan_of(&s, "POST", "/sse/message", &headers) {
            Plan::Respond(r) | Plan::Denied(r) => assert_eq!(r.status, 401, "{headers:?}"),
            other => panic!("{other:?}"),
        }
    }
    // A scoped token's session carries its scope, over the header and in the path alike.
    let alpha_ro = Scope::Project {
        id: "alpha".into(),
        write: false,
    };
    let header = bearer(RO);
    assert_eq!(
        plan_of(&s, "GET", "/sse", &[("Authorization", header.as_str())]),
        Plan::OpenSse {
            endpoint_prefix: "/sse/message?sessionId=".into(),
            credential: Credential::token(alpha_ro.clone()),
        }
    );
    assert_eq!(
        plan_of(&s, "GET", &format!("/{RO}/sse"), &[]),
        Plan::OpenSse {
            endpoint_prefix: format!("/{RO}/sse/message?sessionId="),
            credential: Credential::token(alpha_ro.clone()),
        }
    );
    assert_eq!(
        plan_of(&s, "POST", &format!("/{RO}/sse/message"), &[JSON]),
        Plan::SseMessage {
            session: SESSION.into(),
            credential: Credential::token(alpha_ro),
        }
    );
}

#[test]
fn several_full_tokens_are_accepted_at_once() {
    let s = Server::with_vars(&[("AUTH_TOKEN", "old-token,new-token")]);
    for token in ["old-token", "new-token"] {
        let path = format!("/{token}/mcp");
        assert_eq!(
            s.request_to("POST", &path, &[JSON], PING.as_bytes()).status,
            200
        );
        let header = bearer(token);
        let reply = s.request_to(
            "POST",
            "/mcp",
            &[JSON, ("Authorization", &header)],
            PING.as_bytes(),
        );
        assert_eq!(reply.status, 200, "{token}");
    }
    for wrong in ["old-token,new-token", "old", "test-token"] {
        let path = format!("/{wrong}/mcp");
        assert_eq!(
            s.request_to("POST", &path, &[JSON], PING.as_bytes()).status,
            404,
            "{wrong}"
        );
    }
}

#[test]
fn a_scoped_token_reaches_its_project_only_and_never_says_whether_another_exists() {
    let s = scoped();
    both_ways(&s, RW, |way| {
        let before = s.db.dump();
        for (tool, args) in [
            ("get_state", json!({"project_id": "beta"})),
            ("set_north_star", json!({"project_id": "beta", "text": "x"})),
            ("set_focus", json!({"project_id": "beta", "statement": "x"})),
            (
                "add_task",
                json!({"project_id": "beta", "body": "x", "kind": "main"}),
            ),
        ] {
            let batches = s.db.batches.get();
            let said = s.err(tool, args.clone());
            assert_eq!(
                said,
                "This token reaches project \"alpha\" only, not \"beta\". Nothing was read or written.",
                "{way} {tool}"
            );
            // The refusal is decided before storage: an existing and a missing project are
            // refused by the same sentence, after the same (zero) round trips.
            assert_eq!(s.db.batches.get(), batches, "{way} {tool}");
            let mut missing = args;
            missing["project_id"] = json!("no-such-project");
            assert_eq!(
                s.err(tool, missing),
                said.replace("\"beta\"", "\"no-such-project\""),
                "{way} {tool}"
            );
        }
        assert_eq!(s.db.dump(), before, "{way}: nothing was written");
        assert!(s
            .ok("get_state", json!({"project_id": "alpha"}))
            .to_string()
            .contains("alpha star"));
    });
}

#[test]
fn a_read_write_scoped_token_may_create_and_change_its_project() {
    let s = Server::with_vars(&[
        ("AUTH_TOKEN", TOKEN),
        ("PROJECT_TOKENS", "fresh-token=fresh"),
    ]);
    s.credential("/mcp", Some("Bearer fresh-token"));
    let created = crate::support::text(&s.ok(
        "set_north_star",
        json!({"project_id": "fresh", "text": "made by a scoped token"}),
    ));
    assert!(
        created.starts_with("Created project \"fresh\""),
        "{created}"
    );
    s.ok(
        "set_focus",
        json!({"project_id": "fresh", "statement": "go"}),
    );
    s.ok(
        "add_task",
        json!({"project_id": "fresh", "body": "b", "kind": "record"}),
    );
    let done = crate::support::text(&s.ok("complete_task", json!({"task_id": "task-1"})));
    assert!(done.starts_with("Completed record task task-1"), "{done}");
    assert!(s
        .err(
            "set_north_star",
            json!({"project_id": "other", "text": "x"})
        )
        .starts_with("This token reaches project \"fresh\" only"));
}

#[test]
fn complete_task_of_another_project_reads_as_an_unknown_task() {
    let s = scoped();
    both_ways(&s, RW, |way| {
        let before = s.db.dump();
        let other = s.err("complete_task", json!({"task_id": "task-2"}));
        let unknown = s.err("complete_task", json!({"task_id": "task-9"}));
        assert_eq!(other, unknown.replace("task-9", "task-2"), "{way}");
        assert!(other.starts_with("No task \"task-2\"."), "{way}: {other}");
        assert_eq!(s.db.dump(), before, "{way}: beta's task is untouched");
    });
    assert_eq!(
        s.db.stored("SELECT status FROM task WHERE id = 'task-2'"),
        "open"
    );
    s.credential("/mcp", Some(&bearer(RW)));
    let done = crate::support::text(&s.ok("complete_task", json!({"task_id": "task-1"})));
    assert!(
        done.starts_with("Completed cleanup task task-1 in project \"alpha\""),
        "{done}"
    );
}

#[test]
fn resources_and_the_prompt_obey_the_scope() {
    let s = scoped();
    for token in [RW, RO] {
        both_ways(&s, token, |way| {
            let listed = s.stateless(json!(1), "resources/list", json!({})).json();
            let uris: Vec<&str> = listed["result"]["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["uri"].as_str().unwrap())
                .collect();
            assert_eq!(uris, ["handoff://projects/alpha/state"], "{token} {way}");
            let listed = s
                .stateless(json!(1), "resources/list", json!({"cursor": "alpha"}))
                .json();
            assert_eq!(listed["result"]["resources"], json!([]), "{token} {way}");

            for resource in ["state", "history"] {
                let read = |project: &str| {
                    let uri = format!("handoff://projects/{project}/{resource}");
                    s.stateless(json!(2), "resources/read", json!({ "uri": uri }))
                        .json()
                };
                let own = read("alpha");
                assert!(
                    own["result"]["contents"][0]["text"]
                        .as_str()
                        .unwrap()
                        .contains("alpha"),
                    "{token} {way} {resource}: {own}"
                );
                let other = read("beta");
                let missing = read("no-such-project");
                assert_eq!(other["error"]["code"], -32602, "{token} {way} {resource}");
                assert_eq!(
                    other.to_string(),
                    missing.to_string().replace("no-such-project", "beta"),
                    "{token} {way} {resource}"
                );
            }

            let resume = |project: &str| {
                s.stateless(
                    json!(3),
                    "prompts/get",
                    json!({"name": "resume", "arguments": {"project_id": project}}),
                )
                .json()
            };
            assert!(resume("alpha")["result"]["messages"][0]["content"]["text"]
                .as_str()
                .unwrap()
                .contains("alpha star"));
            let other = resume("beta");
            assert_eq!(
                other["error"]["message"],
                "This token reaches project \"alpha\" only, not \"beta\". Nothing was read or written.",
                "{token} {way}"
            );
            assert_eq!(
                other.to_string(),
                resume("nowhere").to_string().replace("nowhere", "beta")
            );
        });
    }
}

fn tool_names(s: &Server) -> (Vec<String>, Json) {
    let result = s.stateless(json!(1), "tools/list", json!({})).json()["result"].clone();
    let names = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    (names, result["cacheScope"].clone())
}

#[test]
fn tools_list_per_scope_and_never_shared_across_tokens() {
    let s = scoped();
    let all = [
        "get_state",
        "set_north_star",
        "set_focus",
        "add_task",
        "complete_task",
        "search",
    ];
    assert_eq!(
        tool_names(&s),
        (all.map(String::from).to_vec(), json!("private"))
    );
    both_ways(&s, RW, |way| {
        assert_eq!(tool_names(&s).0, all, "{way}");
    });
    both_ways(&s, RO, |way| {
        assert_eq!(
            tool_names(&s),
            (
                vec!["get_state".to_owned(), "search".to_owned()],
                json!("private")
            ),
            "{way}"
        );
        let handshake = s
            .handshake("2025-11-25", json!(1), "tools/list", json!({}))
            .json();
        assert_eq!(handshake["result"]["tools"].as_array().unwrap().len(), 2);
    });
}

#[test]
fn a_read_only_token_reads_and_writes_nothing() {
    let s = scoped();
    both_ways(&s, RO, |way| {
        let before = s.db.dump();
        for (tool, args) in [
            (
                "set_north_star",
                json!({"project_id": "alpha", "text": "x"}),
            ),
            (
                "set_focus",
                json!({"project_id": "alpha", "statement": "x"}),
            ),
            (
                "add_task",
                json!({"project_id": "alpha", "body": "x", "kind": "cleanup"}),
            ),
            ("complete_task", json!({"task_id": "task-1"})),
            ("complete_task", json!({"task_id": "task-2"})),
            ("set_north_star", json!({"project_id": "beta", "text": "x"})),
        ] {
            let batches = s.db.batches.get();
            assert_eq!(
                s.err(tool, args),
                format!(
                    "{tool} was refused: this token is read-only, so it can call get_state, search only. Nothing was written."
                ),
                "{way}"
            );
            assert_eq!(s.db.batches.get(), batches, "{way} {tool}");
        }
        assert_eq!(s.db.dump(), before, "{way}");
        assert_eq!(s.state_texts("alpha").len(), 2, "{way}");
        assert!(s
            .err("get_state", json!({"project_id": "beta"}))
            .starts_with("This token reaches project \"alpha\" only"));
    });
}

#[test]
fn a_malformed_credential_table_fails_closed() {
    for vars in [
        vec![
            ("AUTH_TOKEN", TOKEN),
            ("PROJECT_TOKENS", "good=p,broken-entry"),
        ],
        vec![("AUTH_TOKEN", TOKEN), ("PROJECT_TOKENS", "=p")],
        vec![("AUTH_TOKEN", TOKEN), ("PROJECT_TOKENS", "test-token=p")],
        vec![("AUTH_TOKEN", "test-token,,other")],
        vec![("AUTH_TOKEN", TOKEN), ("PROJECT_TOKENS", "good=p:write")],
    ] {
        let s = Server::with_vars(&vars);
        let health = s.request_to("GET", "/healthz", &[], b"");
        assert_eq!(health.status, 503, "{}", health.body);
        assert!(health.body.starts_with("unusable: "), "{}", health.body);
        let header = bearer(TOKEN);
        for (method, path, headers) in [
            ("POST", format!("/{TOKEN}/mcp"), vec![JSON]),
            ("GET", format!("/{TOKEN}/sse"), vec![]),
            (
                "POST",
                "/mcp".into(),
                vec![JSON, ("Authorization", header.as_str())],
            ),
            ("POST", "/mcp".into(), vec![JSON]),
            ("GET", "/".into(), vec![]),
            ("GET", "/no-such-page".into(), vec![]),
            (
                "GET",
                "/.well-known/oauth-protected-resource".into(),
                vec![],
            ),
        ] {
            let reply = s.request_to(method, &path, &headers, PING.as_bytes());
            let case = format!("{vars:?} {method} {path}");
            assert_eq!(reply.status, 503, "{case}");
            assert_eq!(
                reply.json(),
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
                    "message": "Service Unavailable: the server is misconfigured; its operator can read which setting at /healthz"}}),
                "{case}"
            );
            assert_eq!(
                reply.headers,
                [("content-type", "application/json".to_owned())],
                "{case}"
            );
        }
        assert!(s.db.dump().is_empty());
    }
}

#[test]
fn no_reply_holds_a_token() {
    let s = scoped();
    let tokens = [TOKEN, RW, RO];
    let mut replies = Vec::new();
    for token in tokens {
        for (path, auth) in [
            (format!("/{token}/mcp"), None),
            ("/mcp".to_owned(), Some(bearer(token))),
            ("/mcp".to_owned(), Some(format!("{}x", bearer(token)))),
            (format!("/{token}x/mcp"), None),
        ] {
            s.credential(&path, auth.as_deref());
            replies.push(s.post(&[], PING));
            replies.push(s.stateless(json!(1), "tools/list", json!({})));
            replies.push(s.stateless(json!(1), "resources/list", json!({})));
            replies.push(s.stateless(
                json!(1),
                "tools/call",
                json!({"name": "get_state", "arguments": {"project_id": "beta"}}),
            ));
            replies.push(s.stateless(
                json!(1),
                "tools/call",
                json!({"name": "complete_task", "arguments": {"task_id": "task-2"}}),
            ));
            replies.push(s.request("GET", &[], b""));
        }
    }
    assert!(replies.len() > 60);
    for reply in &replies {
        let everything = format!("{:?} {}", reply.headers, reply.body);
        for token in tokens {
            assert!(!everything.contains(token), "{everything}");
        }
    }
}

/// The plan's answer to a request: its status, and whether the shell counts it as a failed
/// credential (`Plan::Denied`) or answers it as it is.
fn counted_or_not(plan: Plan) -> (u16, bool) {
    match plan {
        Plan::Respond(reply) => (reply.status, false),
        Plan::Denied(reply) => (reply.status, true),
        // Planned to be served: its credential was accepted.
        _ => (200, false),
    }
}

#[test]
fn only_a_presented_token_that_matches_none_is_counted() {
    let s = scoped();
    let form = ("Content-Type", "application/x-www-form-urlencoded");
    let own = ("Origin", "https://handoff.example");
    let session = format!("/wrong-token/sse/message?sessionId={SESSION}");
    for (method, path, headers, expected) in [
        // Wrong path tokens, on every route that has one: the bare 404, counted.
        ("POST", "/wrong-token/mcp", vec![JSON], (404, true)),
        ("GET", "/wrong-token/sse", vec![], (404, true)),
        ("POST", &session, vec![JSON], (404, true)),
        ("GET", "/wrong-token/", vec![], (404, true)),
        ("GET", "/wrong-token/projects/alpha", vec![], (404, true)),
        (
            "POST",
            "/wrong-token/projects/alpha/add_task",
            vec![form, own],
            (404, true),
        ),
        ("POST", "//mcp", vec![JSON], (404, true)),
        // A wrong bearer token: the 401, counted.
        (
            "POST",
            "/mcp",
            vec![JSON, ("Authorization", "Bearer wrong-token")],
            (401, true),
        ),
        (
            "GET",
            "/sse",
            vec![("Authorization", "bearer test-tokenx")],
            (401, true),
        ),
        // What could never have matched is answered without counting.
        ("POST", "/mcp", vec![JSON], (401, false)),
        (
            "POST",
            "/mcp",
            vec![JSON, ("Authorization", "Basic dGVzdC10b2tlbg==")],
            (401, false),
        ),
        (
            "POST",
            "/mcp",
            vec![JSON, ("Authorization", "Bearer a, Bearer b")],
            (400, false),
        ),
        ("GET", "/no-such-path", vec![], (404, false)),
        ("GET", "/wrong-token/mcp/", vec![], (404, false)),
        ("GET", "/healthz", vec![], (200, false)),
        // An accepted credential is never counted, whatever else is wrong with the request.
        ("GET", "/test-token/mcp", vec![], (405, false)),
        (
            "POST",
            "/mcp",
            vec![("Authorization", "Bearer scoped-ro-token")],
            (415, false),
        ),
        (
            "GET",
            "/scoped-rw-token/projects/beta/x",
            vec![],
            (404, false),
        ),
    ] {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let headers = Headers::new(headers.iter().copied());
        let req = http::Request {
            method,
            path,
            query: Some(query),
            headers: &headers,
            own_origin: "https://handoff.example",
            now_ms: 0,
        };
        assert_eq!(
            counted_or_not(route::plan(&req, &s.config)),
            expected,
            "{method} {path}"
        );
    }
    // The accepted credentials themselves plan their route, uncounted.
    for (path, auth) in [
        (format!("/{TOKEN}/mcp"), None),
        (format!("/{RW}/mcp"), None),
        ("/mcp".into(), Some(bearer(RO))),
    ] {
        let mut headers = vec![JSON];
        headers.extend(auth.as_deref().map(|auth| ("Authorization", auth)));
        assert!(
            matches!(
                plan_of(&s, "POST", &path, &headers),
                Plan::Serve {
                    endpoint: Endpoint::Mcp,
                    ..
                }
            ),
            "{path}"
        );
    }
    // With no token configured there is nothing to guess: nothing is counted.
    let none = Server::with_vars(&[]);
    let reply = plan_of(&none, "POST", "/wrong-token/mcp", &[JSON]);
    assert_eq!(counted_or_not(reply), (404, false));
}

#[test]
fn past_the_limit_every_wrong_token_gets_the_same_429() {
    let s = Server::new();
    // Within the limit, each denied credential keeps its own refusal: the bare 404, or the 401.
    let statuses: Vec<u16> = [
        plan_of(&s, "POST", "/wrong-token/mcp", &[JSON]),
        plan_of(&s, "GET", "/wrong-token/projects/alpha", &[]),
        plan_of(&s, "POST", "/mcp", &[JSON, ("Authorization", "Bearer x")]),
    ]
    .into_iter()
    .map(|plan| match plan {
        Plan::Denied(refusal) => refusal.status,
        other => panic!("expected a denied credential, got {other:?}"),
    })
    .collect();
    assert_eq!(statuses, [404, 404, 401]);
    // Past it, one answer in place of any of them (it takes no token, so it can name none),
    // which says when to try again.
    let reply = handoff_mcp::auth::check::too_many_failures();
    let reply = Reply {
        status: reply.status,
        headers: reply.headers,
        body: reply.body,
    };
    assert_eq!(reply.status, 429);
    assert_eq!(reply.header("retry-after"), Some("60"));
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
            "message": "Too Many Requests: too many wrong tokens from this address; try again in a minute"}})
    );
}

#[test]
fn failures_are_counted_per_address_and_an_ipv6_address_per_64() {
    for (address, key) in [
        (Some("203.0.113.7"), "203.0.113.7"),
        (Some(" 203.0.113.7 "), "203.0.113.7"),
        (Some("127.0.0.1"), "127.0.0.1"),
        // Every address of one /64 is one client; the next /64 is another.
        (Some("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64"),
        (
            Some("2001:db8:1:2:ffff:ffff:ffff:ffff"),
            "2001:db8:1:2::/64",
        ),
        (Some("2001:db8:1:2::"), "2001:db8:1:2::/64"),
        (Some("2001:db8:1:3::1"), "2001:db8:1:3::/64"),
        // `::` stands for as many zero groups as make eight, wherever it is.
        (Some("2001:db8::1"), "2001:db8:0:0::/64"),
        (Some("2001:db8::"), "2001:db8:0:0::/64"),
        (Some("2001:db8:1::2:3:4:5"), "2001:db8:1:0::/64"),
        (Some("2001::1:2:3:4:5:6"), "2001:0:1:2::/64"),
        (Some("::1"), "0:0:0:0::/64"),
        (Some("::"), "0:0:0:0::/64"),
        (Some("::1:2:3:4:5:6:7"), "0:1:2:3::/64"),
        // Without an address, one key for all.
        (None, "unknown"),
        (Some(""), "unknown"),
        (Some("  "), "unknown"),
    ] {
        assert_eq!(
            handoff_mcp::auth::check::failure_key(address),
            key,
            "{address:?}"
        );
    }
}

/// The numbers the Worker's 429 and docs/http.md state are the ones the binding enforces.
#[test]
fn the_rate_limit_binding_is_the_one_the_code_names() {
    use handoff_mcp::config::{
        FAILED_CREDENTIALS_BINDING, FAILED_CREDENTIALS_LIMIT, FAILED_CREDENTIALS_PERIOD_SECS,
    };
    let wrangler =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/wrangler.toml")).unwrap();
    let block = wrangler
        .split("[[ratelimits]]\n")
        .nth(1)
        .expect("wrangler.toml has a [[ratelimits]] binding");
    let block = block.split("\n\n").next().unwrap();
    assert!(
        block.contains(&format!("name = \"{FAILED_CREDENTIALS_BINDING}\"\n")),
        "{block}"
    );
    assert!(
        block.contains(&format!(
            "simple = {{ limit = {FAILED_CREDENTIALS_LIMIT}, period = {FAILED_CREDENTIALS_PERIOD_SECS} }}"
        )),
        "{block}"
    );
    assert_eq!(
        handoff_mcp::auth::check::too_many_failures().headers,
        [
            ("content-type", "application/json".to_owned()),
            ("retry-after", FAILED_CREDENTIALS_PERIOD_SECS.to_string())
        ]
    );
    let http_doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/http.md")).unwrap();
    assert!(
        http_doc.contains(&format!(
            "{FAILED_CREDENTIALS_LIMIT} wrong tokens per {FAILED_CREDENTIALS_PERIOD_SECS} s"
        )),
        "docs/http.md's Limits must state the limit"
    );
}

/// `/healthz` tells the truth (docs/troubleshooting.md, "503 everywhere"): 503 and a line for
/// each setting that is set and cannot be used, naming it and never its value; the version and
/// OAuth's state after. No token or no OAuth at all is a choice: 200.
#[test]
fn healthz_names_each_unusable_setting_and_never_its_value() {
    const KEY: &str = "0123456789abcdef0123456789abcdef";
    let version = env!("CARGO_PKG_VERSION");
    let short_rule =
        "has a token shorter than 32 characters (the least unless PUBLIC_URL is http:// loopback)";
    let key_rule =
        "OAUTH_KEY is malformed (each key 32 or more visible ASCII characters, comma-separated)";
    let public = "https://mcp.example";
    for (vars, status, body) in [
        (vec![], 200, format!("ok\nversion: {version}\noauth: off (no OAUTH_KEY secret is set)\n")),
        (
            vec![("AUTH_TOKEN", TOKEN)],
            200,
            format!("ok\nversion: {version}\noauth: off (no OAUTH_KEY secret is set)\n"),
        ),
        (
            vec![("AUTH_TOKEN", "sh0rt-secret"), ("PUBLIC_URL", public), ("OAUTH_KEY", KEY)],
            503,
            format!("unusable: AUTH_TOKEN entry 1 {short_rule}\nversion: {version}\noauth: on\n"),
        ),
        (
            vec![("AUTH_TOKEN", TOKEN), ("PROJECT_TOKENS", "good=p,sh0rt-secret")],
            503,
            format!("unusable: PROJECT_TOKENS entry 2 is not TOKEN=PROJECT_ID or TOKEN=PROJECT_ID:read\nversion: {version}\noauth: off (no OAUTH_KEY secret is set)\n"),
        ),
        (
            vec![("AUTH_TOKEN", "a-token-of-32-characters-or-more"), ("PUBLIC_URL", public)],
            503,
            format!("unusable: no OAUTH_KEY secret is set, but PUBLIC_URL is (OAuth needs both)\nversion: {version}\noauth: off (no OAUTH_KEY secret is set, but PUBLIC_URL is (OAuth needs both))\n"),
        ),
        (
            vec![("AUTH_TOKEN", TOKEN), ("OAUTH_KEY", "sh0rt-secret"), ("PUBLIC_URL", "http://127.0.0.1:8787")],
            503,
            format!("unusable: {key_rule}\nversion: {version}\noauth: off ({key_rule})\n"),
        ),
        (
            vec![("AUTH_TOKEN", TOKEN), ("OAUTH_KEY", KEY)],
            503,
            format!("unusable: no PUBLIC_URL is set, but OAUTH_KEY is (OAuth needs both)\nversion: {version}\noauth: off (no PUBLIC_URL is set, but OAUTH_KEY is (OAuth needs both))\n"),
        ),
        (
            vec![("AUTH_TOKEN", "a,,b"), ("OAUTH_KEY", KEY), ("PUBLIC_URL", "mcp.example/sh0rt-secret")],
            503,
            format!("unusable: AUTH_TOKEN entry 1 {short_rule}\nunusable: PUBLIC_URL is not an origin (https://host, or http:// on loopback)\nversion: {version}\noauth: off (PUBLIC_URL is not an origin (https://host, or http:// on loopback))\n"),
        ),
    ] {
        let s = Server::with_vars(&vars);
        let health = s.request_to("GET", "/healthz", &[], b"");
        assert_eq!((health.status, &health.body), (status, &body), "{vars:?}");
        assert!(!health.body.contains("sh0rt") && !health.body.contains(KEY), "{}", health.body);
    }
}

/// `/help`, which refusal pages link to, needs no credential and works while the credentials
/// are unusable: to the guide in the repository deployed from, or where to find it.
#[test]
fn help_leads_to_the_troubleshooting_guide_with_or_without_a_credential() {
    let linked = Server::with_vars(&[
        ("AUTH_TOKEN", "a,,b"),
        (
            "PLUGIN_MARKETPLACE",
            "https://github.com/acme/handoff-mcp.git",
        ),
    ]);
    let reply = linked.request_to("GET", "/help", &[], b"");
    assert_eq!(
        (reply.status, reply.header("location")),
        (
            302,
            Some("https://github.com/acme/handoff-mcp/blob/HEAD/docs/troubleshooting.md")
        )
    );
    let unlinked = Server::with_vars(&[("AUTH_TOKEN", TOKEN)]);
    let reply = unlinked.request_to("GET", "/help", &[], b"");
    assert_eq!(reply.status, 200);
    assert!(
        reply
            .body
            .starts_with("Troubleshooting: docs/troubleshooting.md in handoff-mcp's repository"),
        "{}",
        reply.body
    );
    // A refusal page a person sees links to it.
    let page = unlinked.request_to("GET", &format!("/{TOKEN}/projects/nope"), &[], b"");
    assert!(
        page.body.contains("<a href=/help>Troubleshooting</a>"),
        "{}",
        page.body
    );
}
