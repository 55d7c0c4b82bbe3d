//! (a) The core in-process: `route::serve` over in-memory SQLite, nanoseconds per request for
//! each tool on a project with realistic state, with SQLite's share measured apart. Must not
//! touch the network or a `wrangler dev`.

use std::cell::Cell;
use std::time::Instant;

use handoff_mcp::auth::scope::{Credential, Scope};
use handoff_mcp::config::{Config, AUTH_TOKEN_VAR};
use handoff_mcp::context::{Caller, Ctx};
use handoff_mcp::http::{Headers, Response};
use serde_json::json;

use crate::sqlite::Sqlite;
use crate::stats::{median, Table};
use crate::workload::{self, Request, TOOL_OK};

pub struct Options {
    pub rounds: usize,
    pub requests: usize,
    /// Measure this row alone (its label, e.g. `get_state`), as scripts/instructions does to
    /// count one request's instructions.
    pub request: Option<String>,
}

/// The core with its inputs: configuration, database and an id source shaped like the
/// Worker's UUIDs, so replies are as long as in production.
pub(crate) struct Server {
    config: Config,
    pub(crate) db: Sqlite,
    next_id: Cell<u64>,
}

impl Server {
    pub(crate) fn new() -> Server {
        Server {
            config: Config::from_lookup(|name| {
                (name == AUTH_TOKEN_VAR).then(|| "bench-token".into())
            }),
            db: Sqlite::migrated(),
            next_id: Cell::new(0),
        }
    }

    fn serve(&self, headers: &Headers, body: &[u8]) -> Response {
        let new_id = || {
            let n = self.next_id.get() + 1;
            self.next_id.set(n);
            format!("00000000-0000-4000-8000-{n:012x}")
        };
        // The clock is read once per write; a fixed value costs what a real one does.
        let now = || 1_796_112_000_000_i64;
        let ctx = Ctx {
            db: &self.db,
            ids: &new_id,
            clock: &now,
            caller: Caller::new(headers.get("user-agent"), Credential::token(Scope::All)),
            focus_stale_days: 7,
        };
        handoff_mcp::sqlite::serve_mcp(
            &self.config,
            "POST",
            "/bench-token/mcp",
            headers,
            body,
            &ctx,
        )
    }

    /// Sends one request outside any measurement; a failure stops the bench.
    pub(crate) fn call(&self, req: &Request) -> Result<String, String> {
        let res = self.serve(&headers(req), req.body.as_bytes());
        if res.status == 200 && (res.body.contains(TOOL_OK) || !req.body.contains("tools/call")) {
            Ok(res.body)
        } else {
            Err(format!(
                "setup request failed: HTTP {} {}",
                res.status, res.body
            ))
        }
    }
}

fn headers(req: &Request) -> Headers {
    Headers::new(req.headers.iter().map(|(k, v)| (*k, v.clone())))
}

/// One measured request kind: its headers, and either one body sent every time or one body per
/// request (complete_task needs a task that is still open each time).
struct Case {
    label: &'static str,
    headers: Headers,
    bodies: Vec<Vec<u8>>,
    next: usize,
}

impl Case {
    fn same(label: &'static str, req: Request) -> Case {
        Case {
            label,
            headers: headers(&req),
            bodies: vec![req.body.into_bytes()],
            next: 0,
        }
    }

    /// Sends the next request of this case.
    fn send(&mut self, server: &Server) -> Response {
        let i = if self.bodies.len() == 1 { 0 } else { self.next };
        self.next += 1;
        server.serve(&self.headers, &self.bodies[i])
    }
}

/// Gives `project_id` the realistic state of `workload::setup`.
pub(crate) fn seed(server: &Server, project_id: &str) -> Result<(), String> {
    let mut last_task = None;
    for req in workload::setup(project_id) {
        last_task = workload::task_id(&server.call(&req)?);
    }
    let done = last_task.ok_or("setup's last add_task returned no task id")?;
    server.call(&workload::complete_task(&done)).map(drop)
}

pub fn run(opts: &Options) -> Result<String, String> {
    let server = Server::new();
    seed(&server, workload::STATE_PROJECT)?;
    let state = server.call(&workload::get_state(workload::STATE_PROJECT))?;
    if let Some(body) = workload::unlisted_deferred(&state) {
        return Err(format!("get_state does not list {body:?}: {state}"));
    }
    server.call(&workload::set_north_star("bench-add"))?;
    server.call(&workload::set_north_star("bench-done"))?;

    let warmup = (opts.requests / 10).max(1);
    let per_case = warmup + opts.rounds * opts.requests;
    let mut open_tasks = Vec::with_capacity(per_case);
    for n in 0..per_case {
        let body = workload::numbered(workload::ADD_BODY, n as u64);
        let add = workload::add_task("bench-done", "main", &body);
        let id = workload::task_id(&server.call(&add)?).ok_or("add_task returned no task id")?;
        open_tasks.push(workload::complete_task(&id).body.into_bytes());
    }
    let mut complete = Case::same("complete_task", workload::complete_task("x"));
    complete.bodies = open_tasks;
    // A new task each time, as in the HTTP half.
    let mut add = Case::same("add_task", workload::add_task("bench-add", "main", "x"));
    add.bodies = (0..per_case)
        .map(|n| {
            let body = workload::numbered(workload::ADD_BODY, (per_case + n) as u64);
            workload::add_task("bench-add", "main", &body)
                .body
                .into_bytes()
        })
        .collect();

    let mut cases = vec![
        Case::same(
            "tools/list (no D1)",
            workload::request("tools/list", json!({})),
        ),
        Case::same("get_state", workload::get_state(workload::STATE_PROJECT)),
        Case::same(
            "set_north_star",
            workload::set_north_star(workload::STATE_PROJECT),
        ),
        Case::same("set_focus", workload::set_focus(workload::STATE_PROJECT)),
        add,
        complete,
    ];
    if let Some(only) = &opts.request {
        cases.retain(|case| case.label == only);
        if cases.is_empty() {
            return Err(format!(
                "no request {only:?}; the rows are the labels of the table"
            ));
        }
    }

    for case in &mut cases {
        for i in 0..warmup {
            let res = case.send(&server);
            let ok = res.status == 200
                && (res.body.contains(TOOL_OK) || case.label.starts_with("tools/list"));
            if i == 0 && !ok {
                return Err(format!("{}: HTTP {} {}", case.label, res.status, res.body));
            }
        }
    }
    server.db.take_time();

    // Rounds go round-robin over the cases, so a burst of other load on the machine lands on
    // every case alike instead of on whichever ran at that moment.
    let mut total = vec![Vec::new(); cases.len()];
    let mut sql = vec![Vec::new(); cases.len()];
    for _ in 0..opts.rounds {
        for (i, case) in cases.iter_mut().enumerate() {
            let start = Instant::now();
            for _ in 0..opts.requests {
                let res = case.send(&server);
                if res.status != 200 {
                    return Err(format!("{}: HTTP {} {}", case.label, res.status, res.body));
                }
            }
            let elapsed = start.elapsed();
            let in_sql = server.db.take_time();
            let n = opts.requests as f64;
            total[i].push(elapsed.as_nanos() as f64 / n);
            sql[i].push(in_sql.as_nanos() as f64 / n);
        }
    }

    let mut table = Table::new(&[
        "request",
        "ns/request",
        "fastest round",
        "of which SQLite",
        "core (dispatch + tool + render + JSON)",
    ]);
    for (i, case) in cases.iter().enumerate() {
        let all = median(&total[i]);
        let db = median(&sql[i]);
        let fastest = total[i].iter().copied().fold(f64::INFINITY, f64::min);
        table.row(vec![
            case.label.to_owned(),
            format!("{all:.0}"),
            format!("{fastest:.0}"),
            format!("{db:.0}"),
            format!("{:.0}", all - db),
        ]);
    }
    Ok(format!(
        "Native, in-process (`bench native`): `route::serve` over in-memory SQLite \
         (statements cached), median of {} rounds of {} requests per row, after {} warm-up \
         requests. The request body is parsed and the reply serialized on every call, as in \
         the Worker; the Workers shell (headers, D1 bindings, wasm) is not included.\n\n{}",
        opts.rounds,
        opts.requests,
        warmup,
        table.render()
    ))
}
