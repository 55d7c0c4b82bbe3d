//! `bench profile`: CPU profiles of every isolate in each runtime workerd, taken through
//! workerd's own inspector while the load client drives one target, so the time a request
//! spends above the one-query floor can be split by isolate and, inside the Worker, by what the
//! Rust code was doing. Prints Markdown and saves the raw `.cpuprofile` files (Chrome DevTools
//! and speedscope open them). Must not change what it measures beyond sampling it.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value as Json};

use crate::cdp::{self, Session};
use crate::cpu::{self, Sampler};
use crate::load::{self, Kind, Server, Target, Work};
use crate::perf;
use crate::stats::{median, spread_signed, Table};

pub struct Options {
    /// `http://127.0.0.1:<port>/<token>` of handoff-mcp, `http://127.0.0.1:<port>` of the floor.
    pub base: String,
    pub floor: String,
    pub handoff_pgid: i32,
    pub floor_pgid: i32,
    pub rounds: usize,
    /// Requests per profiled phase (concurrency 1).
    pub requests: usize,
    pub warmup: usize,
    /// The sampling interval asked of V8.
    pub interval_us: u64,
    /// Rounds of the whole-process `perf` phases (none without `perf`, or when 0).
    pub perf_rounds: usize,
    /// Where the raw profiles of the last round go.
    pub out: PathBuf,
    /// An earlier build, profiled in the same rounds.
    pub before: Option<load::Before>,
}

fn label(opts: &Options, kind: Kind) -> String {
    let name = match kind.work {
        Work::Floor => "D1 floor",
        Work::GetState => "get_state",
        Work::AddTask => "add_task",
        Work::Healthz => "/healthz",
        Work::StateStatement => "floor, get_state's statement",
        Work::AddStatement => "floor, add_task's statement",
    };
    match (&opts.before, kind.server) {
        (Some(before), Server::Before) => format!("{name} @ {}", before.label),
        _ => name.to_owned(),
    }
}

/// The TCP ports process `pid` listens on, from /proc: its socket inodes, matched against the
/// LISTEN rows of the kernel's socket tables.
fn listening_ports(pid: i32) -> Vec<u16> {
    let inodes: Vec<String> = fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| {
            let link = fs::read_link(fd.path()).ok()?;
            let link = link.to_str()?;
            Some(link.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["tcp", "tcp6"] {
        let text = fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address is field 1 (ADDR:PORT in hex), st field 3 (0A = LISTEN), inode field 9.
            if f.len() > 9 && f[3] == "0A" && inodes.iter().any(|i| i == f[9]) {
                if let Some(port) = f[1]
                    .rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
                {
                    ports.push(port);
                }
            }
        }
    }
    ports
}

/// workerd's own inspector in a `wrangler dev` group: the runtime workerd's listening port that
/// answers `/json/list` with the user Worker among its targets. wrangler's `--inspector-port`
/// proxies the user Worker alone; this one lists every isolate, D1's included.
pub fn inspector(pgid: i32) -> Result<(u16, Vec<cdp::Target>), String> {
    let pid = cpu::runtime_pid(pgid).ok_or(format!("no runtime workerd in group {pgid}"))?;
    listening_ports(pid)
        .into_iter()
        .find_map(|port| {
            let targets = cdp::list(port)?;
            targets
                .iter()
                .any(|t| t.id.starts_with("core:user:"))
                .then_some((port, targets))
        })
        .ok_or(format!("no inspector found on workerd {pid}"))
}

/// One frame of a profile's call tree.
pub struct Frame {
    pub name: String,
    pub url: String,
    /// Where the function starts, for naming the glue's anonymous functions (`glue_names`).
    script: String,
    line: u64,
    column: u64,
    parent: Option<usize>,
}

/// A parsed `Profiler.stop` result: the tree and which node each sample hit.
pub struct Profile {
    pub frames: Vec<Frame>,
    pub samples: Vec<usize>,
}

/// Microseconds one sample stands for in a phase: the median gap between consecutive samples
/// inside bursts (gaps up to three intervals), pooled over every isolate's profile of the phase.
/// V8 seldom keeps the interval asked for on a busy machine; the longer gaps are time an isolate
/// was not entered.
pub fn us_per_sample(profiles: &[(String, Json)], interval_us: u64) -> f64 {
    let limit = 3.0 * interval_us as f64;
    let gaps: Vec<f64> = profiles
        .iter()
        .flat_map(|(_, p)| p["timeDeltas"].as_array().into_iter().flatten())
        .filter_map(Json::as_f64)
        .filter(|d| *d > 0.0 && *d <= limit)
        .collect();
    if gaps.is_empty() {
        interval_us as f64
    } else {
        median(&gaps)
    }
}

impl Profile {
    pub fn parse(profile: &Json) -> Result<Profile, String> {
        let nodes = profile["nodes"]
            .as_array()
            .ok_or("a profile without nodes")?;
        let index: HashMap<u64, usize> = nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| Some((n["id"].as_u64()?, i)))
            .collect();
        let mut frames: Vec<Frame> = nodes
            .iter()
            .map(|n| {
                let frame = &n["callFrame"];
                Frame {
                    name: short_name(frame["functionName"].as_str().unwrap_or_default()),
                    url: frame["url"].as_str().unwrap_or_default().to_owned(),
                    script: frame["scriptId"].as_str().unwrap_or_default().to_owned(),
                    line: frame["lineNumber"].as_u64().unwrap_or_default(),
                    column: frame["columnNumber"].as_u64().unwrap_or_default(),
                    parent: None,
                }
            })
            .collect();
        for (i, n) in nodes.iter().enumerate() {
            for child in n["children"].as_array().into_iter().flatten() {
                if let Some(&c) = child.as_u64().and_then(|c| index.get(&c)) {
                    frames[c].parent = Some(i);
                }
            }
        }
        let samples = profile["samples"]
            .as_array()
            .ok_or("a profile without samples")?
            .iter()
            .filter_map(|s| index.get(&s.as_u64()?).copied())
            .collect();
        Ok(Profile { frames, samples })
    }

    /// The frames of a sample, leaf first.
    pub fn stack(&self, leaf: usize) -> Vec<&Frame> {
        let mut out = Vec::new();
        let mut at = Some(leaf);
        while let Some(i) = at {
            out.push(&self.frames[i]);
            at = self.frames[i].parent;
        }
        out
    }
}

/// A Rust symbol without its `::h<hash>` suffix.
fn short_name(name: &str) -> String {
    match name.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            head.to_owned()
        }
        _ => name.to_owned(),
    }
}

/// What a sample of the Worker isolate was doing, by the operation it served: the first rule, in
/// this order, that any frame of its stack matches. So a JavaScript import called from the D1
/// adapter counts as the D1 adapter's, not as glue. `outer > inner` matches a frame `inner` with
/// a frame `outer` above it.
const OPERATIONS: &[(&str, &[&str])] = &[
    (
        "D1 rows into cells: one row cell by cell, more through JSON.stringify",
        &[
            "handoff_mcp::store::rows",
            "serde_wasm_bindgen",
            "D1Result::results",
            "handoff_mcp::worker::d1::D1Store::run > GenericShunt",
            "handoff_mcp::worker::d1::rows",
            "handoff_mcp::worker::d1::row_by_cell",
        ],
    ),
    ("D1 client library (JS, in the Worker)", &["d1-api"]),
    (
        "D1 statements: prepare, bind, batch (the adapter)",
        &["handoff_mcp::worker::d1::"],
    ),
    (
        "request body into a tree (http::parse_json: serde_json reading json_read.rs's tree)",
        &[
            "handoff_mcp::http::parse_json",
            "handoff_mcp::json_read::",
            "serde_json::de::",
        ],
    ),
    (
        "render: contract, reference, anchor",
        &["handoff_mcp::render::"],
    ),
    (
        "reply into a JSON string (json_write::to_text; serde_json before 6ffbebf)",
        &[
            "handoff_mcp::json_write::",
            "serde_json::ser::",
            "serde_json::value::ser::",
            "serde_json::value::Value as core::fmt::Display",
        ],
    ),
    (
        "response out: status, headers and body to JS",
        &[
            "handoff_mcp::worker::into_worker",
            "handoff_mcp::worker::respond",
            "worker::response::",
            "gen_Response::Response::",
        ],
    ),
    (
        "request in: method, URL, headers, body into Rust",
        &[
            "worker::request::Request",
            "Headers::entries",
            "handoff_mcp::http::Headers::new",
            "gen_Request::Request::",
            "js_sys::Array::flat",
            "js_sys::Array::join",
            "js_sys::Uint8Array::to_vec",
            "handoff_mcp::worker::read_body",
            "handoff_mcp::worker::request_headers",
        ],
    ),
    (
        "env: Config from vars, the D1 binding",
        &[
            "handoff_mcp::config::Config",
            "handoff_mcp::worker::config",
            "worker::env::",
        ],
    ),
    (
        "futures and promises between JS and Rust (executor or driver)",
        &[
            "JsFuture",
            "Queue::schedule_task",
            "raw_wake",
            "Promise::new_typed",
            "queueMicrotask",
            "into_fn_mut",
            "=handoff_mcp::worker::drive::",
            "handoff_mcp::worker::drive::Settle",
        ],
    ),
    // wasm-opt inlines a function called once into its caller whatever Rust asked, so the shell's
    // own code (URL split, header pairs) often has no frame of its own: it lands here, under the
    // fetch entry (the fetch driver's build) or the executor's future (the build before it).
    (
        "the shell's code inlined into the fetch entry",
        &["=handoff_mcp::worker::fetch"],
    ),
    (
        "the rest of the core (dispatch, tools, store decoding)",
        &["handoff_mcp::"],
    ),
    (
        "the shell's code inlined into the fetch entry",
        &["js_sys::futures::future_to_promise"],
    ),
    (
        "worker-build entry shim and wasm-bindgen glue",
        &["index.js", "shim.mjs"],
    ),
    ("garbage collector", &["(garbage collector)"]),
    ("runtime, outside any JS (program)", &["(program)"]),
];

fn frame_matches(frame: &Frame, pattern: &str) -> bool {
    frame.name.contains(pattern) || frame.url.contains(pattern)
}

/// Whether a stack (leaf first) matches a pattern, `outer > inner` included; `=name` matches
/// when the innermost frame of ours (`handoff_mcp::`) is `name`'s.
fn stack_matches(stack: &[&Frame], pattern: &str) -> bool {
    if let Some(name) = pattern.strip_prefix('=') {
        return stack
            .iter()
            .find(|f| f.name.starts_with("handoff_mcp::"))
            .is_some_and(|f| f.name.starts_with(name));
    }
    match pattern.split_once(" > ") {
        None => stack.iter().any(|f| frame_matches(f, pattern)),
        Some((outer, inner)) => stack.iter().enumerate().any(|(i, f)| {
            frame_matches(f, inner) && stack[i + 1..].iter().any(|g| frame_matches(g, outer))
        }),
    }
}

/// The operation row of a Worker-isolate sample.
fn operation(stack: &[&Frame]) -> &'static str {
    OPERATIONS
        .iter()
        .find(|(_, patterns)| patterns.iter().any(|p| stack_matches(stack, p)))
        .map_or(
            "other JS (floor's own handler, runtime builtins)",
            |(name, _)| name,
        )
}

/// Where the CPU of a sample was burnt, by its leaf frame: the boundary's cost shows as glue
/// and builtins called from Rust.
fn leaf_kind(leaf: &Frame) -> &'static str {
    if leaf.url.starts_with("wasm://") {
        "wasm (Rust code)"
    } else if leaf.url.ends_with("index.js") || leaf.url.ends_with("shim.mjs") {
        "wasm-bindgen JS glue and shim"
    } else if leaf.url.contains("d1-api") {
        "D1 client library (JS)"
    } else if leaf.name == "(garbage collector)" {
        "garbage collector"
    } else if leaf.name == "(program)" {
        "(program): native, no JS frame"
    } else if leaf.url.is_empty() {
        "runtime builtins (Headers, Response, TextDecoder, …)"
    } else {
        "other JS"
    }
}

/// Isolate time of one target in µs, summed over its profiled phases.
#[derive(Default)]
struct Counts {
    requests: usize,
    by_isolate: HashMap<String, f64>,
    by_operation: HashMap<&'static str, f64>,
    by_leaf: HashMap<&'static str, f64>,
    by_function: HashMap<String, f64>,
    /// Runtime workerd CPU per request with and without the profilers, one value per round.
    profiled_ms: Vec<f64>,
    plain_ms: Vec<f64>,
    /// Worker-isolate and all-isolate µs per request, one value per round.
    worker_by_round: Vec<f64>,
    isolates_by_round: Vec<f64>,
}

/// The role of an isolate, from workerd's target id.
fn isolate_role(id: &str) -> String {
    if id.starts_with("core:user:") {
        "the Worker (ours, or the floor's)".to_owned()
    } else if id == "core:entry" {
        "miniflare's entry Worker (routes each request)".to_owned()
    } else if let Some(rest) = id.strip_prefix("d1:") {
        if rest.contains(':') {
            "D1 binding (forwards each query)".to_owned()
        } else {
            "D1 database object (runs the SQL)".to_owned()
        }
    } else {
        id.to_owned()
    }
}

/// Sessions on every isolate of one runtime.
struct Inspector {
    port: u16,
    sessions: Vec<(String, Session)>,
}

impl Inspector {
    fn open(pgid: i32, interval_us: u64) -> Result<Inspector, String> {
        let (port, targets) = inspector(pgid)?;
        let mut sessions = Vec::new();
        // One at a time: workerd's inspector did not answer sessions opened all at once.
        for t in targets {
            let open = || -> Result<Session, String> {
                let mut s = Session::open(port, &t.ws_path)?;
                s.call("Profiler.enable", json!({}))?;
                s.call(
                    "Profiler.setSamplingInterval",
                    json!({ "interval": interval_us }),
                )?;
                Ok(s)
            };
            // Right after wrangler dev starts, its own inspector proxy may still be attaching to
            // the Worker, and workerd then drops the other session; a second try finds it settled.
            let mut tries = 0;
            let s = loop {
                tries += 1;
                match open() {
                    Ok(s) => break s,
                    Err(e) if tries < 5 => {
                        eprintln!("[profile] isolate {}: {e}; trying again", t.id);
                        std::thread::sleep(Duration::from_secs(1));
                    }
                    Err(e) => return Err(format!("isolate {}: {e}", t.id)),
                }
            };
            sessions.push((t.id, s));
        }
        Ok(Inspector { port, sessions })
    }

    fn start(&mut self) -> Result<(), String> {
        for (_, s) in &mut self.sessions {
            s.call("Profiler.start", json!({}))?;
        }
        Ok(())
    }

    /// Stops every profiler and returns each isolate's profile as V8 gave it.
    fn stop(&mut self) -> Result<Vec<(String, Json)>, String> {
        let mut out = Vec::new();
        for (id, s) in &mut self.sessions {
            let mut result = s.call("Profiler.stop", json!({}))?;
            out.push((id.clone(), result["profile"].take()));
        }
        Ok(out)
    }
}

pub fn run(opts: &Options) -> Result<String, String> {
    let mut secret = vec![opts.base.clone()];
    secret.extend(opts.before.as_ref().map(|b| b.base.clone()));
    measure(opts).map_err(|e| secret.iter().fold(e, |e, s| e.replace(s, "<base>")))
}

fn measure(opts: &Options) -> Result<String, String> {
    let mut urls = vec![opts.base.as_str(), opts.floor.as_str()];
    urls.extend(opts.before.as_ref().map(|b| b.base.as_str()));
    load::check_loopback(&urls)?;
    let load_opts = load::Options {
        base: opts.base.clone(),
        floor: opts.floor.clone(),
        handoff_pgid: opts.handoff_pgid,
        floor_pgid: opts.floor_pgid,
        before: opts.before.clone(),
        rounds: opts.rounds,
        requests: [opts.requests, opts.requests],
        warmup: opts.warmup,
        cap: Duration::from_secs(120),
        settle: Duration::ZERO,
        paired: false,
    };
    // Indexed by `Server as usize`, as the sampler's groups are.
    let mut pgids = vec![opts.handoff_pgid, opts.floor_pgid];
    pgids.extend(opts.before.as_ref().map(|b| b.pgid));
    let sampler = Sampler::new(pgids.clone());
    sampler.check()?;
    load::seed(&opts.base)?;
    if let Some(before) = &opts.before {
        load::seed(&before.base)?;
    }
    let mut inspectors = Vec::new();
    for (i, pgid) in pgids.iter().enumerate() {
        let ins = Inspector::open(*pgid, opts.interval_us)?;
        let ids: Vec<&str> = ins.sessions.iter().map(|(id, _)| id.as_str()).collect();
        eprintln!(
            "[profile] server {i}: inspector on port {}: {}",
            ins.port,
            ids.join(", ")
        );
        inspectors.push(ins);
    }
    // bench http's targets but /healthz and the statement floors (whose database scripts/profile
    // does not migrate), so the floor comes first.
    let kinds: Vec<Kind> = load_opts
        .kinds()
        .into_iter()
        .filter(|k| matches!(k.work, Work::Floor | Work::GetState | Work::AddTask))
        .collect();
    load::warm_up_all(
        &load_opts,
        &kinds,
        "bench-profile-warm",
        opts.warmup,
        &sampler,
    )?;
    fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let mut counts: Vec<Counts> = kinds.iter().map(|_| Counts::default()).collect();
    for round in 0..opts.rounds {
        for ki in load::round_order(round, kinds.len()) {
            let kind = kinds[ki];
            let group = kind.server as usize;
            let project = format!("bench-profile-r{round}");
            load::prepare(&load_opts, kind, &project)?;
            let target = Target::build(&load_opts, kind, &project);
            let plain = load::run_phase(&target, 1, opts.requests, load_opts.cap, &sampler)?;
            let ins = &mut inspectors[group];
            ins.start()?;
            let phase = load::run_phase(&target, 1, opts.requests, load_opts.cap, &sampler)?;
            let profiles = ins.stop()?;
            let c = &mut counts[ki];
            // The phase's one untimed connection-opening request ran inside the profile too.
            c.requests += phase.done() + 1;
            c.plain_ms.push(plain.cpu_per_request(group).runtime);
            c.profiled_ms.push(phase.cpu_per_request(group).runtime);
            let mut parsed = Vec::new();
            for (id, raw) in &profiles {
                if round + 1 == opts.rounds {
                    save(&opts.out, &label(opts, kind), id, raw)?;
                }
                parsed.push((id, Profile::parse(raw)?));
            }
            let weight = us_per_sample(&profiles, opts.interval_us);
            let mut round_counts = Counts {
                requests: phase.done() + 1,
                ..Counts::default()
            };
            for (id, profile) in &parsed {
                add(c, id, profile, weight);
                add(&mut round_counts, id, profile, weight);
            }
            c.worker_by_round.push(round_counts.worker());
            c.isolates_by_round.push(round_counts.isolates());
            eprintln!(
                "[profile] round {} {:<22} runtime {:.2} ms/req plain, {:.2} profiled",
                round + 1,
                label(opts, kind),
                c.plain_ms.last().copied().unwrap_or_default(),
                c.profiled_ms.last().copied().unwrap_or_default(),
            );
        }
    }
    // The perf rounds before the glue names: naming turns the Worker's debugger on for a
    // moment, and V8 then recompiles its wasm, which perf would count.
    let whole = match (opts.perf_rounds, perf::available()) {
        (0, _) => String::new(),
        (_, true) => whole_process(opts, &load_opts, &kinds, &sampler)?,
        (_, false) => {
            "\n`perf` is not available here, so the whole-process view is left out.\n".into()
        }
    };
    let glue = glue_names(&mut inspectors[0], &counts[1].by_function);
    Ok(report(opts, &kinds, &counts, &glue) + &whole)
}

fn save(dir: &Path, kind: &str, isolate: &str, profile: &Json) -> Result<(), String> {
    let name: String = format!("{kind}-{isolate}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{name}.cpuprofile"));
    fs::write(&path, profile.to_string()).map_err(|e| format!("{}: {e}", path.display()))
}

/// The runtime workerd of each target under `perf`, no V8 profiler attached: every component of
/// the process's CPU per request, the C++ outside any isolate included.
fn whole_process(
    opts: &Options,
    load_opts: &load::Options,
    kinds: &[Kind],
    sampler: &Sampler,
) -> Result<String, String> {
    let mut samples: Vec<perf::Samples> = kinds.iter().map(|_| perf::Samples::default()).collect();
    let mut requests = vec![0usize; kinds.len()];
    let data = opts.out.join("perf.data");
    for round in 0..opts.perf_rounds {
        for ki in load::round_order(round, kinds.len()) {
            let kind = kinds[ki];
            let pgid = match kind.server {
                Server::Handoff => opts.handoff_pgid,
                Server::Floor => opts.floor_pgid,
                Server::Before => opts.before.as_ref().map_or(0, |b| b.pgid),
            };
            let pid = cpu::runtime_pid(pgid).ok_or("no runtime workerd to record")?;
            let project = format!("bench-perf-r{round}");
            load::prepare(load_opts, kind, &project)?;
            let target = Target::build(load_opts, kind, &project);
            let recording = perf::Recording::start(pid, &data)?;
            let phase = load::run_phase(&target, 1, opts.requests, load_opts.cap, sampler)?;
            recording.stop()?;
            requests[ki] += phase.done() + 1;
            samples[ki].add(&perf::report(&data)?);
            eprintln!("[profile] perf round {} {}", round + 1, label(opts, kind));
        }
    }
    let _ = fs::remove_file(&data);
    let us = |ki: usize, n: u64| n as f64 * perf::PERIOD_NS as f64 / 1000.0 / requests[ki] as f64;
    let labels: Vec<String> = kinds.iter().map(|k| label(opts, *k)).collect();
    let mut header = vec!["component (whole runtime process)".to_owned()];
    header.extend(labels.iter().map(|l| format!("{l} µs/req")));
    header.extend(labels[1..].iter().map(|l| format!("{l} − floor")));
    let mut table = Table::new(&header.iter().map(String::as_str).collect::<Vec<_>>());
    let mut components: Vec<&'static str> = samples
        .iter()
        .flat_map(|s| s.by_component.keys().copied())
        .collect();
    components.sort();
    components.dedup();
    let value = |ki: usize, c: &str| us(ki, samples[ki].by_component.get(c).copied().unwrap_or(0));
    let gap = |c: &str| value(1, c) - value(0, c);
    components.sort_by(|a, b| gap(b).total_cmp(&gap(a)));
    let total = |ki: usize| us(ki, samples[ki].by_component.values().sum());
    let mut rows: Vec<(String, Vec<f64>)> = components
        .iter()
        .map(|c| {
            (
                (*c).to_owned(),
                (0..kinds.len()).map(|ki| value(ki, c)).collect(),
            )
        })
        .collect();
    rows.push((
        "all of it".to_owned(),
        (0..kinds.len()).map(total).collect(),
    ));
    for (name, values) in rows {
        let mut cells = vec![name];
        cells.extend(values.iter().map(|v| format!("{v:.0}")));
        cells.extend(values[1..].iter().map(|v| format!("{:+.0}", v - values[0])));
        table.row(cells);
    }
    // The symbols behind get_state's gap, largest first.
    let mut symbols: Vec<(&String, f64)> = samples[1]
        .by_symbol
        .keys()
        .chain(samples[0].by_symbol.keys())
        .map(|s| {
            let of = |ki: usize| us(ki, samples[ki].by_symbol.get(s).copied().unwrap_or(0));
            (s, of(1) - of(0))
        })
        .collect();
    symbols.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    symbols.dedup_by(|a, b| a.0 == b.0);
    let mut top = Table::new(&["symbol", "get_state − floor, µs/req"]);
    for (symbol, d) in symbols.into_iter().take(30) {
        let shown: String = symbol.chars().take(110).collect();
        top.row(vec![
            format!("`{}`", shown.replace('|', "\\|")),
            format!("{d:+.1}"),
        ]);
    }
    Ok(format!(
        "\nThe whole runtime workerd under `perf record -e cpu-clock -c {}` (one sample per {} µs \
         of CPU), no V8 profiler attached: {} rounds of {} requests per target, in the order \
         of `load::round_order`. This \
         view includes what V8's profiler cannot see (the C++ outside any isolate, and V8's own \
         C++ runtime), but not which JavaScript or wasm function ran (JIT code has no \
         symbols):\n\n{}\nThe 30 symbols that grow most from the floor to get_state:\n\n{}",
        perf::PERIOD_NS,
        perf::PERIOD_NS / 1000,
        opts.perf_rounds,
        opts.requests,
        table.render(),
        top.render()
    ))
}

/// How `add` names a function without a name, with its position for `glue_names`.
const ANONYMOUS: &str = "(anonymous)";

/// Names for the anonymous functions in the top-functions table: wasm-bindgen's imports are
/// anonymous functions in an object (`__wbg_method_…: function(…)`), so the source text before
/// each one's position names it. Reads the scripts through the Worker's inspector session, with
/// the debugger on only for that, after every measurement.
fn glue_names(ins: &mut Inspector, functions: &HashMap<String, f64>) -> HashMap<String, String> {
    let Some((_, session)) = ins
        .sessions
        .iter_mut()
        .find(|(id, _)| id.starts_with("core:user:"))
    else {
        return HashMap::new();
    };
    if session.call("Debugger.enable", json!({})).is_err() {
        return HashMap::new();
    }
    let mut sources: HashMap<String, Option<String>> = HashMap::new();
    let mut names = HashMap::new();
    for key in functions.keys() {
        let Some(position) = key.strip_prefix(ANONYMOUS) else {
            continue;
        };
        let Some((script, line, column)) = position.rsplit(' ').next().and_then(|p| {
            let mut parts = p.split(':');
            Some((
                parts.next()?,
                parts.next()?.parse::<usize>().ok()?,
                parts.next()?.parse::<usize>().ok()?,
            ))
        }) else {
            continue;
        };
        let source = sources.entry(script.to_owned()).or_insert_with(|| {
            session
                .call("Debugger.getScriptSource", json!({ "scriptId": script }))
                .ok()
                .and_then(|r| r["scriptSource"].as_str().map(str::to_owned))
        });
        let before = source
            .as_deref()
            .and_then(|s| s.lines().nth(line))
            .and_then(|l| l.get(..column.min(l.len())));
        let Some(before) = before else { continue };
        let name = match import_name(before) {
            Some(name) => format!("glue `{name}`"),
            // Any other anonymous function by the code just before it.
            None => {
                let tail: String = before
                    .trim()
                    .chars()
                    .rev()
                    .take(48)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                let url = position.trim().rsplit_once(' ').map_or("", |(url, _)| url);
                format!("(anonymous) in {url} after `…{}`", tail.replace('`', "'"))
            }
        };
        names.insert(key.clone(), name);
    }
    let _ = session.call("Debugger.disable", json!({}));
    names
}

/// The wasm-bindgen import whose `name: function(` ends `before`, if any. V8 places a function
/// at its `function` keyword or at its parameters, and wrangler's bundler wraps each one as
/// `name: /* @__PURE__ */ __name(function`, so all of those endings count.
fn import_name(before: &str) -> Option<&str> {
    let mut head = before.trim_end();
    for wrapper in ["function", "__name(", "/* @__PURE__ */"] {
        head = head.strip_suffix(wrapper).map_or(head, str::trim_end);
    }
    let head = head.strip_suffix(':')?;
    let start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .map_or(0, |i| i + 1);
    let name = &head[start..];
    (name.starts_with("__wbg") || name.starts_with("__wbindgen")).then_some(name)
}

/// Adds one isolate's profile to a target's counts, each sample standing for `w` µs. Idle
/// samples are dropped: V8 takes samples only while the isolate is entered (workerd runs many
/// isolates on one thread), so every other sample is time that isolate spent on the CPU.
fn add(c: &mut Counts, isolate: &str, profile: &Profile, w: f64) {
    let user = isolate.starts_with("core:user:");
    for &leaf in &profile.samples {
        let frame = &profile.frames[leaf];
        if frame.name == "(idle)" {
            continue;
        }
        *c.by_isolate.entry(isolate.to_owned()).or_default() += w;
        if user {
            let stack = profile.stack(leaf);
            *c.by_operation.entry(operation(&stack)).or_default() += w;
            *c.by_leaf.entry(leaf_kind(frame)).or_default() += w;
            let name = if frame.name.is_empty() {
                format!(
                    "{ANONYMOUS} {} {}:{}:{}",
                    frame.url, frame.script, frame.line, frame.column
                )
            } else {
                frame.name.clone()
            };
            *c.by_function.entry(name).or_default() += w;
        }
    }
}

impl Counts {
    fn per_request(&self, us: f64) -> f64 {
        us / self.requests as f64
    }

    /// µs per request of the isolates whose role is `role`.
    fn role(&self, role: &str) -> f64 {
        self.by_isolate
            .iter()
            .filter(|(id, _)| isolate_role(id) == role)
            .map(|(_, us)| self.per_request(*us))
            .sum()
    }

    fn isolates(&self) -> f64 {
        self.per_request(self.by_isolate.values().sum())
    }

    fn operation(&self, op: &str) -> f64 {
        self.per_request(self.by_operation.get(op).copied().unwrap_or(0.0))
    }

    fn worker(&self) -> f64 {
        self.per_request(self.by_operation.values().sum())
    }

    fn leaf(&self, kind: &str) -> f64 {
        self.per_request(self.by_leaf.get(kind).copied().unwrap_or(0.0))
    }
}

/// The row of operations that no rule matched.
const OTHER: &str = "other JS (floor's own handler, runtime builtins)";

fn report(
    opts: &Options,
    kinds: &[Kind],
    counts: &[Counts],
    glue: &HashMap<String, String>,
) -> String {
    let floor = &counts[0];
    let labels: Vec<String> = kinds.iter().map(|k| label(opts, *k)).collect();
    // This tree's tools, and each one's earlier build when there is one.
    let pairs: Vec<(usize, Option<usize>)> = (1..kinds.len())
        .filter(|&i| kinds[i].server == Server::Handoff)
        .map(|i| {
            let before = kinds
                .iter()
                .position(|k| k.server == Server::Before && k.work == kinds[i].work);
            (i, before)
        })
        .collect();
    let mut out = format!(
        "CPU profiles (`bench profile`): concurrency 1, {} rounds of {} requests per target, \
         in the order of `load::round_order`; V8 asked to sample every {} µs in every isolate of each \
         runtime workerd, through workerd's own inspector. V8 samples an isolate only while it is \
         entered (workerd runs all of them on one thread), so a sample is time that isolate had \
         the CPU; it is weighted by the median gap between samples in bursts, pooled over the \
         phase's isolates (V8 rarely keeps the interval on a busy machine), and divided by the \
         requests. The profilers slow the runtime down (its /proc CPU per request with and \
         without them is in the first table), so read the µs as shares, not as production \
         costs.\n",
        opts.rounds, opts.requests, opts.interval_us
    );

    // Isolates, by role: the floor's Worker has its own name, so Workers are compared as one row.
    let mut roles: Vec<String> = counts
        .iter()
        .flat_map(|c| c.by_isolate.keys().map(|id| isolate_role(id)))
        .collect();
    roles.sort();
    roles.dedup();
    let mut header: Vec<String> = labels.iter().map(|l| format!("{l} µs/req")).collect();
    header.insert(0, "isolate".into());
    header.extend(labels[1..].iter().map(|l| format!("{l} − floor")));
    let mut isolates = Table::new(&header.iter().map(String::as_str).collect::<Vec<_>>());
    let mut row = |name: String, v: &dyn Fn(&Counts) -> f64| {
        let mut cells = vec![name];
        cells.extend(counts.iter().map(|c| format!("{:.0}", v(c))));
        cells.extend(
            counts[1..]
                .iter()
                .map(|c| format!("{:+.0}", v(c) - v(floor))),
        );
        isolates.row(cells);
    };
    for role in &roles {
        row(role.clone(), &|c| c.role(role));
    }
    row("all isolates".into(), &|c| c.isolates());
    row("runtime workerd /proc CPU, profiled".into(), &|c| {
        median(&c.profiled_ms) * 1000.0
    });
    row("runtime workerd /proc CPU, not profiled".into(), &|c| {
        median(&c.plain_ms) * 1000.0
    });
    out.push_str(&format!(
        "\nIsolate time per request, and the runtime process's whole CPU from /proc beside it \
         (median over rounds); the rest of the process is workerd's C++ outside any isolate \
         (HTTP, the RPC between isolates, the profiler's own thread):\n\n{}",
        isolates.render()
    ));

    // Inside the Worker isolate, by operation, above the floor's Worker.
    let mut header = vec!["operation (Worker isolate)".to_owned()];
    header.extend(labels.iter().map(|l| format!("{l} µs/req")));
    for &(i, before) in &pairs {
        header.push(format!("{} above floor (share)", labels[i]));
        if let Some(b) = before {
            header.push(format!("{} − {}", labels[i], labels[b]));
        }
    }
    let mut table = Table::new(&header.iter().map(String::as_str).collect::<Vec<_>>());
    // A name may head two rules (the shell's code, under either build): one row each.
    let mut ops: Vec<&str> = Vec::new();
    for name in OPERATIONS.iter().map(|(n, _)| *n).chain([OTHER]) {
        if !ops.contains(&name) {
            ops.push(name);
        }
    }
    let cells = |name: &str, v: &dyn Fn(&Counts) -> f64| -> Vec<String> {
        let mut cells = vec![name.to_owned()];
        cells.extend(counts.iter().map(|c| format!("{:.0}", v(c))));
        for &(i, before) in &pairs {
            let gap = counts[i].worker() - floor.worker();
            let above = v(&counts[i]) - v(floor);
            cells.push(format!("{above:+.0} ({:.0} %)", 100.0 * above / gap));
            if let Some(b) = before {
                cells.push(format!("{:+.0}", v(&counts[i]) - v(&counts[b])));
            }
        }
        cells
    };
    let mut rows: Vec<(f64, Vec<String>)> = ops
        .iter()
        .filter(|op| counts.iter().any(|c| c.operation(op) > 0.0))
        .map(|op| {
            let gap = pairs
                .first()
                .map_or(0.0, |&(i, _)| counts[i].operation(op) - floor.operation(op));
            (gap, cells(op, &|c| c.operation(op)))
        })
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, row) in rows {
        table.row(row);
    }
    table.row(cells("the Worker isolate in all", &|c| c.worker()));
    out.push_str(&format!(
        "\nInside the Worker isolate, by the operation a sample served (the first row whose \
         pattern any frame of its stack matches, in the order of `profile::OPERATIONS`), \
         largest gap first:\n\n{}",
        table.render()
    ));

    let mut header = vec!["where the CPU was burnt (leaf frame)".to_owned()];
    header.extend(labels.iter().map(|l| format!("{l} µs/req")));
    let mut leaves = Table::new(&header.iter().map(String::as_str).collect::<Vec<_>>());
    let mut leaf_kinds: Vec<&'static str> = counts
        .iter()
        .flat_map(|c| c.by_leaf.keys().copied())
        .collect();
    leaf_kinds.sort();
    leaf_kinds.dedup();
    for k in leaf_kinds {
        let mut cells = vec![k.to_owned()];
        cells.extend(counts.iter().map(|c| format!("{:.0}", c.leaf(k))));
        leaves.row(cells);
    }
    out.push_str(&format!(
        "\nThe same Worker-isolate samples by their leaf frame: glue and builtins are the \
         boundary between wasm and JavaScript:\n\n{}",
        leaves.render()
    ));

    if pairs.iter().any(|(_, b)| b.is_some()) {
        let mut table = Table::new(&[
            "tool",
            "Worker isolate, this − before, µs/req (rounds)",
            "all isolates, this − before (rounds)",
            "runtime /proc CPU not profiled, this − before (rounds)",
        ]);
        let diff = |a: &[f64], b: &[f64], scale: f64| -> String {
            let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| (x - y) * scale).collect();
            spread_signed(&d, 0)
        };
        for &(i, before) in &pairs {
            let Some(b) = before else { continue };
            table.row(vec![
                format!("{} against {}", labels[i], labels[b]),
                diff(&counts[i].worker_by_round, &counts[b].worker_by_round, 1.0),
                diff(
                    &counts[i].isolates_by_round,
                    &counts[b].isolates_by_round,
                    1.0,
                ),
                diff(&counts[i].plain_ms, &counts[b].plain_ms, 1000.0),
            ]);
        }
        out.push_str(&format!(
            "\nThis tree against the earlier build, per round (each round profiles both, seconds \
             apart), median with the lowest and highest round:\n\n{}",
            table.render()
        ));
    }

    let state = &counts[1];
    // Anonymous functions by their glue name where it is known, each position apart otherwise.
    let mut named: HashMap<String, f64> = HashMap::new();
    for (key, us) in &state.by_function {
        let name = match (glue.get(key), key.strip_prefix(ANONYMOUS)) {
            (Some(name), _) => name.clone(),
            (None, Some(position)) => format!("{ANONYMOUS} {}", position.trim()),
            (None, None) => format!("`{}`", key.replace('|', "\\|")),
        };
        *named.entry(name).or_default() += us;
    }
    let mut top: Vec<(&String, &f64)> = named.iter().collect();
    top.sort_by(|a, b| b.1.total_cmp(a.1));
    let mut functions = Table::new(&[
        "function (get_state, Worker isolate, self time)",
        "µs/req",
        "share",
    ]);
    let total = state.by_function.values().sum::<f64>();
    for (name, us) in top.into_iter().take(30) {
        functions.row(vec![
            name.clone(),
            format!("{:.1}", state.per_request(*us)),
            format!("{:.1} %", 100.0 * us / total),
        ]);
    }
    out.push_str(&format!(
        "\nThe 30 functions with the most self time in get_state's Worker isolate:\n\n{}",
        functions.render()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glue_imports_are_named_by_their_key() {
        assert_eq!(
            import_name("  __wbg_method_6d02ee0808a7de31: function"),
            Some("__wbg_method_6d02ee0808a7de31")
        );
        assert_eq!(
            import_name("x, __wbindgen_throw:function"),
            Some("__wbindgen_throw")
        );
        assert_eq!(import_name("__wbg_url_7b: "), Some("__wbg_url_7b"));
        assert_eq!(
            import_name("\"), __wbg_join_d6: /* @__PURE__ */ __name(function"),
            Some("__wbg_join_d6")
        );
        assert_eq!(import_name("let f = function"), None);
    }

    #[test]
    fn rust_hashes_are_dropped() {
        assert_eq!(
            short_name("handoff_mcp::render::contract::h0123456789abcdef"),
            "handoff_mcp::render::contract"
        );
        assert_eq!(short_name("fetch"), "fetch");
        assert_eq!(short_name("a::hnot_a_hash"), "a::hnot_a_hash");
    }

    #[test]
    fn the_first_matching_rule_names_the_operation() {
        let f = |name: &str, url: &str| Frame {
            name: name.into(),
            url: url.into(),
            script: String::new(),
            line: 0,
            column: 0,
            parent: None,
        };
        let glue = f("__wbg_get_1", "index.js");
        let swb = f(
            "serde_wasm_bindgen::de::Deserializer::deserialize_any",
            "wasm://x",
        );
        let fetch = f("handoff_mcp::worker::fetch::{{closure}}", "wasm://x");
        assert_eq!(operation(&[&glue, &swb, &fetch]), OPERATIONS[0].0);
        let dispatch = f("handoff_mcp::dispatch::handle::{{closure}}", "wasm://x");
        assert_eq!(
            operation(&[&glue, &dispatch, &fetch]),
            "the rest of the core (dispatch, tools, store decoding)"
        );
        assert_eq!(
            operation(&[&glue, &fetch]),
            "the shell's code inlined into the fetch entry"
        );
        assert_eq!(
            operation(&[&glue]),
            "worker-build entry shim and wasm-bindgen glue"
        );
        assert_eq!(leaf_kind(&glue), "wasm-bindgen JS glue and shim");
    }
}
