//! `bench coldstart`: what a fresh isolate costs before its first answer. Starts `wrangler dev`
//! again and again on prebuilt bundles (no build on the way), each start on a copy of the same
//! prepared database, and times the start to the first answer, the runtime workerd's CPU until
//! then, and the first tool calls of the fresh isolate against its warm ones; the floor Worker
//! is started the same way in the same rotation. Spawns and stops only the `wrangler dev`s it
//! starts, each in its own process group; loopback only.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::cpu::{self, Sampler};
use crate::load::{self, Kind, Server, Target, Work};
use crate::stats::{median, spread, Table};

pub struct Options {
    pub wrangler: PathBuf,
    /// `name=dir` pairs: each dir holds a `wrangler.toml` for a prebuilt bundle. The name
    /// `floor` is the floor Worker.
    pub variants: Vec<(String, PathBuf)>,
    pub starts: usize,
    /// Scratch space for databases and logs.
    pub work: PathBuf,
    /// Warm requests after the first ones, for the steady-state figures.
    pub warm: usize,
}

/// No start may take longer than this to answer.
const START_LIMIT: Duration = Duration::from_secs(120);

/// A started `wrangler dev`, stopped by its process group when dropped.
struct Dev {
    child: Child,
    port: u16,
}

impl Dev {
    fn start(
        wrangler: &Path,
        dir: &Path,
        state: &Path,
        log: &Path,
        token: &str,
    ) -> Result<Dev, String> {
        let port = free_port()?;
        let inspector = free_port()?;
        let log = fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        // setsid: the child is not a group leader, so setsid execs wrangler in a new session
        // without forking, and the child's pid names the whole group.
        let child = Command::new("setsid")
            .arg(wrangler)
            .args(["dev", "--config"])
            .arg(dir.join("wrangler.toml"))
            .args(["--ip", "127.0.0.1", "--port", &port.to_string()])
            .args(["--inspector-port", &inspector.to_string(), "--persist-to"])
            .arg(state)
            .args([
                "--var",
                &format!("AUTH_TOKEN:{token}"),
                "--log-level",
                "warn",
            ])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("wrangler dev: {e}"))?;
        Ok(Dev { child, port })
    }

    fn pgid(&self) -> i32 {
        self.child.id() as i32
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// Copies a folder tree (a persisted local D1).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target).map_err(|e| format!("{}: {e}", target.display()))?;
        }
    }
    Ok(())
}

/// One start's figures, in ms.
#[derive(Default, Clone)]
struct Start {
    to_first_answer: f64,
    runtime_cpu_to_first: f64,
    first_call: f64,
    first_call_cpu: f64,
    second_call: f64,
    warm_call: f64,
    warm_cpu: f64,
}

/// The requests a variant is measured with: `/healthz` (no D1, for both Workers), then
/// get_state for handoff-mcp and the one query for the floor.
struct Probes {
    first: Target,
    call: Target,
}

fn probes(base: &str, floor: bool) -> Probes {
    let opts = load::Options {
        base: base.to_owned(),
        floor: base.to_owned(),
        handoff_pgid: 0,
        floor_pgid: 0,
        before: None,
        rounds: 1,
        requests: [1, 1],
        warmup: 1,
        cap: START_LIMIT,
        settle: Duration::ZERO,
        paired: false,
    };
    let (first, call) = if floor {
        (
            Kind::new(Work::Floor, Server::Floor),
            Kind::new(Work::Floor, Server::Floor),
        )
    } else {
        (
            Kind::new(Work::Healthz, Server::Handoff),
            Kind::new(Work::GetState, Server::Handoff),
        )
    };
    Probes {
        first: Target::build(&opts, first, ""),
        call: Target::build(&opts, call, ""),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Starts one variant on a copy of its template database and measures it.
fn measure_start(
    opts: &Options,
    name: &str,
    dir: &Path,
    template: &Path,
    n: usize,
) -> Result<Start, String> {
    let token = "coldstart-token";
    let state = opts.work.join(format!("{name}-state-{n}"));
    copy_tree(template, &state)?;
    let log = opts.work.join(format!("{name}-{n}.log"));
    let spawned = Instant::now();
    let dev = Dev::start(&opts.wrangler, dir, &state, &log, token)?;
    let base = format!("http://127.0.0.1:{}/{token}", dev.port);
    let floor = name == "floor";
    let p = probes(&base, floor);
    let agent = load::agent();
    let first_answer = loop {
        if spawned.elapsed() > START_LIMIT {
            return Err(format!(
                "{name} did not answer within {START_LIMIT:?}; see {}",
                log.display()
            ));
        }
        if load::send(&agent, &p.first).is_ok() {
            break spawned.elapsed();
        }
        thread::sleep(Duration::from_millis(5));
    };
    let sampler = Sampler::new(vec![dev.pgid()]);
    let runtime = cpu::runtime_pid(dev.pgid()).ok_or("no runtime workerd")?;
    let runtime_cpu_to_first = cpu::process_cpu_ms(runtime).unwrap_or(0.0);
    let timed = |target: &Target| -> Result<(f64, f64), String> {
        let before = sampler.snapshot();
        let t = Instant::now();
        load::send(&agent, target)?;
        let latency = ms(t.elapsed());
        let cpu = sampler.delta(&before, &sampler.snapshot()).groups[0].runtime;
        Ok((latency, cpu))
    };
    let (first_call, first_call_cpu) = timed(&p.call)?;
    let (second_call, _) = timed(&p.call)?;
    let mut warm = Vec::new();
    let mut warm_cpu = Vec::new();
    for _ in 0..opts.warm {
        let (l, c) = timed(&p.call)?;
        warm.push(l);
        warm_cpu.push(c);
    }
    drop(dev);
    let _ = fs::remove_dir_all(&state);
    Ok(Start {
        to_first_answer: ms(first_answer),
        runtime_cpu_to_first,
        first_call,
        first_call_cpu,
        second_call,
        warm_call: median(&warm),
        warm_cpu: median(&warm_cpu),
    })
}

/// Makes each variant's template database: one start on it, the get_state project seeded (or,
/// for the floor, its query run once), then stopped. Every timed start copies it.
fn prepare(opts: &Options, name: &str, dir: &Path) -> Result<PathBuf, String> {
    let template = opts.work.join(format!("{name}-template"));
    fs::create_dir_all(&template).map_err(|e| e.to_string())?;
    let token = "coldstart-token";
    let log = opts.work.join(format!("{name}-prepare.log"));
    let dev = Dev::start(&opts.wrangler, dir, &template, &log, token)?;
    let base = format!("http://127.0.0.1:{}/{token}", dev.port);
    let p = probes(&base, name == "floor");
    let agent = load::agent();
    let started = Instant::now();
    while load::send(&agent, &p.first).is_err() {
        if started.elapsed() > START_LIMIT {
            return Err(format!("{name} did not come up; see {}", log.display()));
        }
        thread::sleep(Duration::from_millis(50));
    }
    if name != "floor" {
        load::seed(&base)?;
    }
    load::send(&agent, &p.call)?;
    drop(dev);
    Ok(template)
}

pub fn run(opts: &Options) -> Result<String, String> {
    let mut templates = Vec::new();
    for (name, dir) in &opts.variants {
        eprintln!("[coldstart] preparing {name}'s database");
        templates.push(prepare(opts, name, dir)?);
    }
    let mut starts: Vec<Vec<Start>> = opts.variants.iter().map(|_| Vec::new()).collect();
    for n in 0..opts.starts {
        // The order rotates, so no variant always starts right after the same neighbour.
        for k in 0..opts.variants.len() {
            let vi = (k + n) % opts.variants.len();
            let (name, dir) = &opts.variants[vi];
            let s = measure_start(opts, name, dir, &templates[vi], n)?;
            eprintln!(
                "[coldstart] start {} {name:<10} first answer {:>6.0} ms (runtime CPU {:>4.0} ms), \
                 first call {:>6.1} ms, second {:>5.1} ms, warm {:>5.1} ms",
                n + 1,
                s.to_first_answer,
                s.runtime_cpu_to_first,
                s.first_call,
                s.second_call,
                s.warm_call
            );
            starts[vi].push(s);
        }
    }
    let mut table = Table::new(&[
        "variant",
        "start → first answer, ms",
        "runtime workerd CPU until then, ms",
        "first call, ms",
        "its runtime CPU, ms",
        "second call, ms",
        "warm call, ms",
        "warm runtime CPU, ms",
    ]);
    for ((name, _), s) in opts.variants.iter().zip(&starts) {
        let col = |f: fn(&Start) -> f64, d: usize| spread(&s.iter().map(f).collect::<Vec<_>>(), d);
        table.row(vec![
            name.clone(),
            col(|s| s.to_first_answer, 0),
            col(|s| s.runtime_cpu_to_first, 0),
            col(|s| s.first_call, 1),
            col(|s| s.first_call_cpu, 2),
            col(|s| s.second_call, 1),
            col(|s| s.warm_call, 1),
            col(|s| s.warm_cpu, 2),
        ]);
    }
    Ok(format!(
        "Cold starts (`bench coldstart`): {} starts per variant, rotating, each a new `wrangler \
         dev` process on a prebuilt bundle (nothing is built on the way) and a copy of one \
         prepared database, so every start makes a fresh isolate over the same data. The first \
         answer is `/healthz` (no D1, in both Workers: the isolate is up); the first call is \
         then the first request that reaches D1 (get_state, or the floor's query), which opens \
         the database in this process, and for handoff-mcp is the isolate's first MCP request, \
         which also reads the migration ledger once; warm is the median of {} calls after it. \
         Medians over the starts, the range beside them.\n\n{}",
        opts.starts,
        opts.warm,
        table.render()
    ))
}
