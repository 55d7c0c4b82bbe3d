//! The smoke entry point: a black-box client that runs every check against a running handoff-mcp
//! and prints the tally. It shares no code with the server, so the two cannot share a bug.

mod checks;
mod client;
mod http;
mod limits;
mod oauth;
mod protocol;
mod raw;
mod routes;
mod scenario;
mod scopes;
mod sse;
mod stress;
mod tools;

use std::env;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::checks::Checks;
use crate::client::{Era, Session};
use crate::http::Target;

const USAGE: &str =
    "usage: smoke [--bearer] <BASE_URL>   (for example http://127.0.0.1:8787/<token>)
       --bearer: reach /mcp and /sse with the token in Authorization: Bearer, not in the path";

fn main() -> ExitCode {
    let args = env::args().skip(1).collect::<Vec<_>>();
    if let Some(code) = stress::command(&args) {
        return code;
    }
    if let Some(code) = scopes::command(&args) {
        return code;
    }
    let (bearer, raw) = match args.as_slice() {
        [flag, raw] if flag == "--bearer" => (true, raw),
        [raw] => (false, raw),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let target = match Target::parse(raw) {
        Ok(target) if bearer => target.with_bearer(),
        Ok(target) => target,
        Err(err) => {
            eprintln!("smoke: {err}\n{USAGE}");
            return ExitCode::from(2);
        }
    };

    let mut checks = Checks::default();
    routes::run(&mut checks, &target);
    if !bearer {
        oauth::run(&mut checks, &target);
    }
    for era in Era::ALL {
        run_era(&mut checks, &target, era);
    }
    cross_transport(&mut checks, &target);
    sse::transport_checks(&mut checks, &target);
    limits::run(&mut checks, &target);

    checks::say(&checks.summary(if bearer { "smoke-bearer" } else { "smoke" }));
    if checks.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Everything one era must pass: the scenario on a fresh project, tools/list, and its own errors.
fn run_era(checks: &mut Checks, target: &Target, era: Era) {
    let tag = era.version();
    let project = format!("smoke-{}-{}", &tag[..4], unix_nanos());
    let mut open = |who: &str, checks: &mut Checks| -> Box<dyn Session> {
        Box::new(protocol::open(checks, target, era, who))
    };
    scenario::run(checks, tag, &project, &mut open);

    // D is a fourth client, so these checks do not lean on the scenario's clients.
    let mut d = protocol::open(checks, target, era, "D");
    protocol::tools_list(checks, tag, "D", &mut d);
    match era {
        Era::Modern => protocol::modern_errors(checks, "D", &mut d),
        Era::Legacy => protocol::ping(checks, "D", &mut d),
    }
}

/// The handoff across transports: A writes over /mcp, B reads and completes over the legacy
/// HTTP+SSE transport, C reads over /mcp and must see B's change.
fn cross_transport(checks: &mut Checks, target: &Target) {
    let tag = "mcp→sse→mcp";
    let project = format!("smoke-sse-{}", unix_nanos());
    let mut open = |who: &str, checks: &mut Checks| -> Box<dyn Session> {
        if who == "B" {
            if let Some(client) = sse::open(checks, target, tag, who) {
                return Box::new(client);
            }
        }
        Box::new(protocol::open(checks, target, Era::Modern, who))
    };
    scenario::run(checks, tag, &project, &mut open);
}

/// A fresh suffix per run, so repeated runs against one database never see each other's tasks.
pub fn unix_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos())
}
