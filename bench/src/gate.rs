//! The instruction gate's driver (`scripts/instructions --gate`, which scripts/test runs): the
//! bench's `native` command alone, built from the modules it needs, so the test command compiles
//! none of the research code (load, profile, cold start, CDP) that the `bench` binary carries.
//! Takes the same command line as `bench native`.

// The modules are the bench's; the gate uses part of what each offers.
#![allow(dead_code)]

mod flags;
mod native;
mod sqlite;
mod stats;
mod workload;

use std::env;
use std::process::ExitCode;

use flags::Flags;

fn run(args: &[String]) -> Result<String, String> {
    let (command, rest) = args.split_first().ok_or("no subcommand")?;
    if command != "native" {
        return Err(format!("unknown subcommand {command:?}"));
    }
    let flags = Flags::parse(rest)?;
    flags.only(&["rounds", "requests", "request"])?;
    let opts = native::Options {
        rounds: flags.number("rounds", 10)?.max(1),
        requests: flags.number("requests", 3_000)?.max(1),
        request: flags.text("request").map(str::to_owned),
    };
    native::run(&opts)
}

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    match run(&args) {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "gate: {e}\nusage: gate native [--rounds N] [--requests N] [--request LABEL]"
            );
            ExitCode::from(2)
        }
    }
}
