//! The bench entry point: `bench native` times the core in-process (a); `bench http` loads two
//! (or three) running `wrangler dev`s and samples their CPU (b, c); `bench profile` takes CPU
//! profiles of their isolates under load; `bench coldstart` and `bench coldprofile` measure and
//! profile the first requests of fresh isolates. All print Markdown for docs/benchmarks.md.
//! Argument parsing lives here; nothing here measures. `scripts/bench` and `scripts/profile`
//! start the servers; the cold-start commands start their own, from prebuilt bundles
//! `scripts/coldstart` makes.

mod cdp;
mod coldprofile;
mod coldstart;
mod cpu;
mod flags;
mod load;
mod native;
mod perf;
mod profile;
mod search;
mod sqlite;
mod statement;
mod stats;
mod workload;

use std::env;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use flags::Flags;

const USAGE: &str = "usage:
  bench native [--rounds N] [--requests N] [--request LABEL]
  bench search [--sizes 100,1000,10000,100000] [--rounds N] [--calls N]
  bench http --base http://127.0.0.1:PORT/TOKEN --floor http://127.0.0.1:PORT \\
             --handoff-pgid PGID --floor-pgid PGID \\
             [--before-base http://127.0.0.1:PORT/TOKEN --before-pgid PGID --before-label REV] \\
             [--rounds N] [--requests-c1 N] [--requests-c16 N] [--warmup N] \\
             [--cap-secs S] [--settle-secs S] [--mode targets|paired]
  bench profile --base http://127.0.0.1:PORT/TOKEN --floor http://127.0.0.1:PORT \\
             --handoff-pgid PGID --floor-pgid PGID \\
             [--before-base http://127.0.0.1:PORT/TOKEN --before-pgid PGID --before-label REV] \\
             [--rounds N] [--requests N] [--warmup N] [--interval-us N] [--perf-rounds N] [--out DIR]
  bench network-off --inspector PORT
  bench coldstart --wrangler PATH --variants NAME=DIR,NAME=DIR,... --work DIR \\
             [--kinds get_state,handshake,sse,page] [--starts N] [--isolate-starts N] \\
             [--warm N] [--interval-us N]
  bench coldprofile --wrangler PATH --variants NAME=DIR,floor=DIR --work DIR --out DIR \\
             [--starts N] [--perf-starts N] [--interval-us N] \\
             [--startup NAME=DIR,... --startup-runs N]";

/// The earlier build's server, when `--before-base` names one.
fn before(flags: &Flags) -> Result<Option<load::Before>, String> {
    let Some(base) = flags.text("before-base") else {
        return Ok(None);
    };
    Ok(Some(load::Before {
        base: base.trim_end_matches('/').to_owned(),
        pgid: flags.pgid("before-pgid")?,
        label: flags.text("before-label").unwrap_or("before").to_owned(),
    }))
}

/// `--variants NAME=DIR,NAME=DIR,...`: the bundles a cold-start run starts.
fn variants(flags: &Flags) -> Result<Vec<(String, PathBuf)>, String> {
    pairs(flags, "variants")
}

/// A flag's `NAME=DIR,NAME=DIR,...`.
fn pairs(flags: &Flags, flag: &str) -> Result<Vec<(String, PathBuf)>, String> {
    flags
        .required(flag)?
        .split(',')
        .map(|pair| {
            pair.split_once('=')
                .map(|(name, dir)| (name.to_owned(), PathBuf::from(dir)))
                .ok_or_else(|| format!("--{flag} wants NAME=DIR pairs, got {pair:?}"))
        })
        .collect()
}

/// Why a run stopped: a wrong command line (the usage follows) or a failed measurement.
enum Failure {
    Usage(String),
    Run(String),
}

impl From<String> for Failure {
    fn from(e: String) -> Failure {
        Failure::Usage(e)
    }
}

impl From<&str> for Failure {
    fn from(e: &str) -> Failure {
        Failure::Usage(e.to_owned())
    }
}

fn run(args: &[String]) -> Result<String, Failure> {
    let (command, rest) = args.split_first().ok_or("no subcommand")?;
    let flags = Flags::parse(rest)?;
    match command.as_str() {
        "native" => {
            flags.only(&["rounds", "requests", "request"])?;
            let opts = native::Options {
                rounds: flags.number("rounds", 10)?.max(1),
                requests: flags.number("requests", 3_000)?.max(1),
                request: flags.text("request").map(str::to_owned),
            };
            native::run(&opts).map_err(Failure::Run)
        }
        "search" => {
            flags.only(&["sizes", "rounds", "calls"])?;
            let sizes = flags
                .text("sizes")
                .unwrap_or("100,1000,10000,100000")
                .split(',')
                .map(|n| {
                    n.parse::<u64>()
                        .map_err(|_| format!("--sizes: {n:?} is not a number"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if sizes.iter().any(|&n| n < 5) {
                return Err("--sizes: each size needs at least 5 events".into());
            }
            let opts = search::Options {
                sizes,
                rounds: flags.number("rounds", 5)?.max(1),
                calls: flags.number("calls", 200)?.max(1),
            };
            search::run(&opts).map_err(Failure::Run)
        }
        "http" => {
            flags.only(&[
                "base",
                "floor",
                "handoff-pgid",
                "floor-pgid",
                "before-base",
                "before-pgid",
                "before-label",
                "rounds",
                "requests-c1",
                "requests-c16",
                "warmup",
                "cap-secs",
                "settle-secs",
                "mode",
            ])?;
            let paired = match flags.text("mode").unwrap_or("targets") {
                "targets" => false,
                "paired" => true,
                other => return Err(format!("--mode is targets or paired, not {other:?}").into()),
            };
            let before = before(&flags)?;
            if paired && before.is_none() {
                return Err("--mode paired compares two builds: it needs --before-base".into());
            }
            let opts = load::Options {
                base: flags.required("base")?.trim_end_matches('/').to_owned(),
                floor: flags.required("floor")?.trim_end_matches('/').to_owned(),
                handoff_pgid: flags.pgid("handoff-pgid")?,
                floor_pgid: flags.pgid("floor-pgid")?,
                before,
                paired,
                // Twelve rounds: an even number, so every pair of targets runs in each order
                // equally often (`load::round_order`), with six targets (`--against`) each takes
                // every position twice, and a median over rounds shrugs off the rounds another
                // build disturbed.
                rounds: flags.number("rounds", 12)?.max(1),
                // At c=16 each thread makes 25 requests a phase, so the ragged end of a phase
                // (fewer than 16 in flight) stays a few per cent of it.
                requests: [
                    flags.number("requests-c1", 100)?.max(1),
                    flags.number("requests-c16", 400)?.max(1),
                ],
                warmup: flags.number("warmup", load::DEFAULT_WARMUP)?.max(1),
                cap: Duration::from_secs(flags.number("cap-secs", 30)?.max(1)),
                settle: Duration::from_secs(flags.number("settle-secs", 5)?),
            };
            load::run(&opts).map_err(Failure::Run)
        }
        "profile" => {
            flags.only(&[
                "base",
                "floor",
                "handoff-pgid",
                "floor-pgid",
                "rounds",
                "requests",
                "warmup",
                "interval-us",
                "perf-rounds",
                "out",
                "before-base",
                "before-pgid",
                "before-label",
            ])?;
            let opts = profile::Options {
                base: flags.required("base")?.trim_end_matches('/').to_owned(),
                floor: flags.required("floor")?.trim_end_matches('/').to_owned(),
                handoff_pgid: flags.pgid("handoff-pgid")?,
                floor_pgid: flags.pgid("floor-pgid")?,
                // Many short rounds: a comparison pairs phases seconds apart, so other load on the
                // machine falls on both sides alike.
                rounds: flags.number("rounds", 10)?.max(1),
                requests: flags.number("requests", 150)?.max(1),
                warmup: flags.number("warmup", load::DEFAULT_WARMUP)?.max(1),
                interval_us: flags.number("interval-us", 100)?.max(10),
                perf_rounds: flags.number("perf-rounds", 4)?,
                out: PathBuf::from(flags.text("out").unwrap_or("target/profile")),
                before: before(&flags)?,
            };
            profile::run(&opts).map_err(Failure::Run)
        }
        "coldstart" => {
            flags.only(&[
                "wrangler",
                "variants",
                "work",
                "kinds",
                "starts",
                "isolate-starts",
                "warm",
                "interval-us",
            ])?;
            let kinds = match flags.text("kinds") {
                None => coldstart::Kind::ALL.to_vec(),
                Some(list) => list
                    .split(',')
                    .map(|k| {
                        coldstart::Kind::parse(k).ok_or_else(|| format!("--kinds: no kind {k:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            };
            let opts = coldstart::Options {
                wrangler: PathBuf::from(flags.required("wrangler")?),
                variants: variants(&flags)?,
                kinds,
                // Eight of each: the fewest the targets are read off.
                starts: flags.number("starts", 8)?.max(1),
                isolate_starts: flags.number("isolate-starts", 8)?,
                work: PathBuf::from(flags.required("work")?),
                warm: flags.number("warm", 20)?.max(1),
                interval_us: flags.number("interval-us", 100)?.max(10),
            };
            coldstart::run(&opts).map_err(Failure::Run)
        }
        "coldprofile" => {
            flags.only(&[
                "wrangler",
                "variants",
                "work",
                "out",
                "starts",
                "perf-starts",
                "interval-us",
                "startup",
                "startup-runs",
            ])?;
            let startup = match flags.text("startup") {
                None => Vec::new(),
                Some(_) => pairs(&flags, "startup")?,
            };
            let opts = coldprofile::Options {
                wrangler: PathBuf::from(flags.required("wrangler")?),
                variants: variants(&flags)?,
                starts: flags.number("starts", 4)?.max(1),
                perf_starts: flags.number("perf-starts", 4)?,
                work: PathBuf::from(flags.required("work")?),
                out: PathBuf::from(flags.required("out")?),
                interval_us: flags.number("interval-us", 100)?.max(10),
                startup,
                startup_runs: flags.number("startup-runs", 3)?,
            };
            coldprofile::run(&opts).map_err(Failure::Run)
        }
        "network-off" => {
            flags.only(&["inspector"])?;
            let port: u16 = flags.number("inspector", 0)?;
            if port == 0 {
                return Err("--inspector wants a port".into());
            }
            let isolates = cdp::network_off(port).map_err(Failure::Run)?;
            Ok(format!(
                "[bench] DevTools' Network domain off in {isolates} isolate(s) behind inspector port {port}"
            ))
        }
        other => Err(Failure::Usage(format!("unknown subcommand {other:?}"))),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    match run(&args) {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(Failure::Usage(e)) => {
            eprintln!("bench: {e}\n{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::Run(e)) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}
