//! `smoke scopes`: the credential table of a running server, from outside. A second full token
//! (rotation), a read-write token and a read-only token for one project, each in the path and
//! in the Authorization header, over Streamable HTTP and the legacy SSE transport. What the
//! tokens are is the calling script's business; none is ever printed.

use std::process::ExitCode;

use serde_json::{json, Value};

use crate::checks::{ensure, expect_eq, Checks};
use crate::client::{Client, Era, Session};
use crate::http::{self, Target};
use crate::sse;
use crate::stress;
use crate::tools;

const USAGE: &str =
    "usage: smoke scopes <BASE_URL> <PROJECT> <SECOND_TOKEN> <READ_WRITE_TOKEN> <READ_ONLY_TOKEN>
       BASE_URL holds a full token (http://host:port/<token>); the scoped tokens reach PROJECT";

/// Runs `smoke scopes …` when `args` names it; `None` leaves other runs alone.
pub fn command(args: &[String]) -> Option<ExitCode> {
    let (name, rest) = args.split_first()?;
    if name != "scopes" {
        return None;
    }
    let [base, project, second, rw, ro] = rest else {
        eprintln!("{USAGE}");
        return Some(ExitCode::from(2));
    };
    let Ok(full) = Target::parse(base) else {
        eprintln!("{USAGE}");
        return Some(ExitCode::from(2));
    };
    let with = |token: &str| Target::parse(&format!("{}/{token}", full.origin()));
    let (Ok(second), Ok(rw), Ok(ro)) = (with(second), with(rw), with(ro)) else {
        eprintln!("{USAGE}");
        return Some(ExitCode::from(2));
    };
    let mut checks = Checks::default();
    run(&mut checks, &full, &second, &rw, &ro, project);
    crate::checks::say(&checks.summary("scopes"));
    Some(if checks.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn run(
    checks: &mut Checks,
    full: &Target,
    second: &Target,
    rw: &Target,
    ro: &Target,
    project: &str,
) {
    let other = format!("scopes-other-{}", crate::unix_nanos());
    // The full token sets up another project with one open task, which the scoped tokens must
    // neither see nor touch.
    let setup = stress::create(full, &other).and_then(|()| {
        let mut admin = Client::new(full, Era::Modern);
        let added = tools::call(
            &mut admin,
            "add_task",
            json!({"project_id": other, "body": "keep open", "kind": "cleanup"}),
        )?;
        added.expect_ok()?;
        added.added_task_id()
    });
    let Some(other_task) = checks.keep("scopes: the full token sets up another project", setup)
    else {
        return;
    };

    for (how, target) in [
        ("path", second.clone()),
        ("header", second.clone().with_bearer()),
    ] {
        let outcome = tool_names(&mut Client::new(&target, Era::Modern))
            .and_then(|names| expect_eq("tools", &all_tools(), &names));
        checks.record(
            &format!("scopes: a second AUTH_TOKEN token works in the {how}"),
            outcome,
        );
    }

    for (how, target) in [("header", rw.clone().with_bearer()), ("path", rw.clone())] {
        let mut client = Client::new(&target, Era::Modern);
        let outcome = (|| {
            let text = format!("scoped star via the {how}");
            tools::call(
                &mut client,
                "set_north_star",
                json!({"project_id": project, "text": text}),
            )?
            .expect_ok()?;
            tools::call(&mut client, "get_state", json!({"project_id": project}))?.expect_ok()?;
            let refused = tools::call(&mut client, "get_state", json!({"project_id": other}))?;
            refused.expect_tool_error()?;
            ensure(refused.text.contains("only"), || refused.text.clone())
        })();
        checks.record(
            &format!(
                "scopes: a read-write token in the {how} writes its project and is refused another"
            ),
            outcome,
        );
        let outcome = client
            .result("resources/list", json!({}))
            .and_then(|listed| {
                let uris: Vec<Value> = listed["resources"]
                    .as_array()
                    .map(|items| items.iter().map(|r| r["uri"].clone()).collect())
                    .unwrap_or_default();
                expect_eq(
                    "listed",
                    &vec![json!(format!("handoff://projects/{project}/state"))],
                    &uris,
                )
            });
        checks.record(
            &format!(
                "scopes: resources/list for a read-write token in the {how} names its project only"
            ),
            outcome,
        );
        let outcome = tools::call(&mut client, "complete_task", json!({"task_id": other_task}))
            .and_then(|done| {
                done.expect_tool_error()?;
                ensure(done.text.starts_with("No task"), || done.text.clone())
            });
        checks.record(
            &format!(
                "scopes: complete_task of another project's task via the {how} is an unknown task"
            ),
            outcome,
        );
    }
    let still_open = stress::open_tasks(full, &other).and_then(|tasks| {
        ensure(tasks.iter().any(|(id, _)| *id == other_task), || {
            format!("open tasks: {tasks:?}")
        })
    });
    checks.record("scopes: the other project's task is still open", still_open);

    for (how, target) in [("path", ro.clone()), ("header", ro.clone().with_bearer())] {
        let mut client = Client::new(&target, Era::Modern);
        let outcome = tool_names(&mut client)
            .and_then(|names| expect_eq("tools", &read_only_tools(), &names))
            .and_then(|()| {
                tools::call(&mut client, "get_state", json!({"project_id": project}))?
                    .expect_ok()?;
                let refused = tools::call(
                    &mut client,
                    "set_focus",
                    json!({"project_id": project, "statement": "must not land"}),
                )?;
                refused.expect_tool_error()?;
                ensure(refused.text.contains("read-only"), || refused.text.clone())
            });
        checks.record(
            &format!("scopes: a read-only token in the {how} lists get_state and search only, reads, and writes nothing"),
            outcome,
        );
    }

    // Over the legacy transport the Durable Object serves the session with the opener's scope.
    let bearer_ro = ro.clone().with_bearer();
    if let Some(mut session) = sse::open(checks, &bearer_ro, "scopes sse", "RO") {
        let outcome = tool_names(&mut session)
            .and_then(|names| expect_eq("tools", &read_only_tools(), &names))
            .and_then(|()| {
                let refused = tools::call(
                    &mut session,
                    "add_task",
                    json!({"project_id": project, "body": "must not land", "kind": "record"}),
                )?;
                refused.expect_tool_error()?;
                ensure(refused.text.contains("read-only"), || refused.text.clone())
            });
        checks.record(
            "scopes: over /sse with a read-only bearer token, tools/list and tools/call keep the scope",
            outcome,
        );
    }
    let bearer_full = full.clone().with_bearer();
    if let Some(session) = sse::open(checks, &bearer_full, "scopes sse", "FULL") {
        let outcome = session
            .post_as(&bearer_ro, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .and_then(|reply| expect_eq("status", &404, &reply.status));
        checks.record(
            "scopes: a POST with another scope's token to an open /sse session is 404",
            outcome,
        );
    }
    let outcome = (|| {
        let mut admin = Client::new(full, Era::Modern);
        let state = tools::call(&mut admin, "get_state", json!({"project_id": project}))?;
        state.expect_ok()?;
        let all = state.texts.join("\n");
        ensure(!all.contains("must not land"), || {
            format!("a refused write landed: {all}")
        })
    })();
    checks.record(
        "scopes: nothing the read-only token sent was written",
        outcome,
    );
    // The refusals above must not depend on the project being unknown: a path with a wrong
    // scoped token is still the bare 404.
    let wrong = http::send(
        &http::agent(),
        "POST",
        &format!("{}/{}x/mcp", full.origin(), ro.token()),
        &[("Content-Type", "application/json")],
        Some(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
    )
    .and_then(|reply| expect_eq("status", &404, &reply.status));
    checks.record(
        "scopes: a scoped token with one character more is the bare 404",
        wrong,
    );
}

fn all_tools() -> Vec<String> {
    [
        "get_state",
        "set_north_star",
        "set_focus",
        "add_task",
        "complete_task",
        "search",
    ]
    .map(String::from)
    .to_vec()
}

/// What a read-only token lists: the read-only tools.
fn read_only_tools() -> Vec<String> {
    vec!["get_state".to_owned(), "search".to_owned()]
}

fn tool_names(session: &mut dyn Session) -> Result<Vec<String>, String> {
    let listed = session.result("tools/list", json!({}))?;
    let tools = listed["tools"]
        .as_array()
        .ok_or_else(|| format!("no tools array: {listed}"))?;
    Ok(tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect())
}
