//! `bench coldprofile`: where the first get_state of a fresh isolate spends its time, above the
//! floor Worker's. Fresh starts as `bench coldstart` makes them, three views of the first call:
//! V8's CPU profile of the Worker isolate (first and second call of each start, by category),
//! the whole runtime process under Linux `perf` (V8's compilers, wasm's among them, and the rest
//! of workerd's C++), and `wrangler check startup`'s profile of the start-up phase, when the
//! wrangler in use has that command. Saves the raw profiles; prints Markdown. Must not change
//! what it measures beyond sampling it.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;

use serde_json::{json, Value as Json};

use crate::coldstart::{self, Client, Dev, Kind};
use crate::cpu::{self, Sampler};
use crate::load;
use crate::perf;
use crate::profile::{self, Frame, Profile};
use crate::stats::{median, Table};

pub struct Options {
    pub wrangler: PathBuf,
    /// `name=dir` pairs as for `bench coldstart`; `floor` is the floor Worker. The Worker's
    /// should be built with its name section (`HANDOFF_KEEP_NAMES=1 scripts/build`).
    pub variants: Vec<(String, PathBuf)>,
    /// Starts per variant under V8's profiler, and under `perf` (none when 0 or no perf).
    pub starts: usize,
    pub perf_starts: usize,
    pub work: PathBuf,
    /// Where the raw profiles go.
    pub out: PathBuf,
    pub interval_us: u64,
    /// Bundles `wrangler check startup` profiles, and how many times each.
    pub startup: Vec<(String, PathBuf)>,
    pub startup_runs: usize,
}

/// V8's own sampling interval when none is asked for (`--cpu-profiler-sampling-interval`),
/// which is what `wrangler check startup` gets.
const V8_DEFAULT_INTERVAL_US: u64 = 1000;

/// Self time by category and by function, in µs summed over starts.
#[derive(Default)]
struct Split {
    starts: usize,
    by_category: HashMap<String, f64>,
    by_function: HashMap<String, f64>,
}

impl Split {
    fn add(&mut self, profile: &Json, interval_us: u64) -> Result<(), String> {
        let parsed = Profile::parse(profile)?;
        let w = profile::us_per_sample(&[(String::new(), profile.clone())], interval_us);
        for &leaf in &parsed.samples {
            let stack = parsed.stack(leaf);
            *self.by_category.entry(category(&stack)).or_default() += w;
            let frame = stack[0];
            let name = if frame.name.is_empty() {
                format!("(anonymous) {}", frame.url)
            } else {
                frame.name.clone()
            };
            *self.by_function.entry(name).or_default() += w;
        }
        self.starts += 1;
        Ok(())
    }

    /// µs per start.
    fn category(&self, name: &str) -> f64 {
        self.by_category.get(name).copied().unwrap_or(0.0) / self.starts.max(1) as f64
    }

    fn function(&self, name: &str) -> f64 {
        self.by_function.get(name).copied().unwrap_or(0.0) / self.starts.max(1) as f64
    }

    /// µs per start of every category but idle: the isolate's CPU.
    fn busy(&self) -> f64 {
        self.by_category
            .iter()
            .filter(|(k, _)| k.as_str() != IDLE)
            .map(|(_, v)| v)
            .sum::<f64>()
            / self.starts.max(1) as f64
    }
}

/// Below this share of a call, a wasm module is folded into one row.
const SMALL: f64 = 0.03;

const IDLE: &str = "(idle): the isolate entered but waiting (not CPU)";
const D1: &str = "D1 calls: the D1 client library (JS) and what runs under it";
const OWN_JS: &str =
    "the Worker's own JS (handoff-mcp: entry module and wasm-bindgen glue; the floor: its handler)";

/// A sample's category, by its leaf frame, except that anything under the D1 client library
/// counts as D1. V8 puts a function's lazy compilation (wasm's Liftoff, JavaScript's parse and
/// bytecode) on the frame that called it, not on a frame of its own, so compile time lands in
/// the caller's row: the first call against the second of the same start shows it.
fn category(stack: &[&Frame]) -> String {
    let leaf = stack[0];
    match leaf.name.as_str() {
        "(idle)" => return IDLE.to_owned(),
        "(garbage collector)" => return "garbage collector".to_owned(),
        "(program)" => {
            return "(program): native code with no JS or wasm frame (workerd, V8's runtime)"
                .to_owned()
        }
        _ => {}
    }
    if stack.iter().any(|f| f.url.contains("d1-api")) {
        return D1.to_owned();
    }
    // V8's wrappers at the boundary, named `js-to-wasm::<signature>` or `wasm-to-js`.
    if leaf.name.starts_with("wasm-to-js") || leaf.name.starts_with("js-to-wasm") {
        return "V8's wrappers between JS and wasm".to_owned();
    }
    if leaf.url.starts_with("wasm://") {
        return format!("wasm: {}", module_prefix(&leaf.name));
    }
    if leaf.url.is_empty() {
        return "runtime builtins (Request, Response, Headers, TextDecoder, …)".to_owned();
    }
    if leaf.url.starts_with("cloudflare") || leaf.url.starts_with("node") {
        return "workerd's built-in JS modules".to_owned();
    }
    OWN_JS.to_owned()
}

/// Rust's primitive types, whose inherent methods live in core.
const PRIMITIVES: &[&str] = &[
    "str", "T", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128",
    "isize", "f32", "f64", "bool", "char",
];

/// The module path a wasm function's Rust name starts with: two segments of ours
/// (`handoff_mcp::worker`), the crate of anything else (`alloc`, `serde_json`), the type's path
/// of a trait method (`<A as B>::f`), no hash (`alloc[3ca5…]`). Names without a path are
/// wasm-bindgen's exports and shims; `wasm-function[N]` a build without its name section.
fn module_prefix(name: &str) -> String {
    if name.starts_with("wasm-function[") {
        return "unnamed functions (no name section)".to_owned();
    }
    let path = name.trim_start_matches('<');
    let path = path.split(" as ").next().unwrap_or(path);
    let segments: Vec<&str> = path
        .split("::")
        .map(|s| s.split(['[', '<']).next().unwrap_or(s))
        .collect();
    // An inherent method of a primitive type (`<str>::find`, `<[T]>::sort`) is core's.
    let krate = segments[0].trim_matches(|c: char| "<>&[]* ".contains(c));
    match segments.as_slice() {
        [_] => "wasm-bindgen's exports and shims".to_owned(),
        ["handoff_mcp", module, ..] => format!("handoff_mcp::{module}"),
        // The global allocator's entry points (`__rustc::__rdl_alloc`) are alloc's.
        ["__rustc", ..] => "alloc".to_owned(),
        _ if krate.is_empty() || PRIMITIVES.contains(&krate) => "core".to_owned(),
        _ => krate.to_owned(),
    }
}

/// perf's samples of the runtime process during the first call, summed over starts.
#[derive(Default)]
struct Whole {
    starts: usize,
    samples: perf::Samples,
    /// The runtime's /proc CPU for the same calls, ms, one per start.
    runtime_ms: Vec<f64>,
}

impl Whole {
    /// ms per start of `samples` perf samples.
    fn ms(&self, samples: u64) -> f64 {
        samples as f64 * perf::PERIOD_NS as f64 / 1e6 / self.starts.max(1) as f64
    }
}

/// V8's wasm compiler and its code space, by symbol: the Liftoff baseline compiler and its
/// assembler, the function-body decoder it runs on, lazy compilation's entry, and the code
/// manager that places the result.
fn wasm_compile(symbol: &str) -> bool {
    symbol.contains("wasm::")
        && [
            "Liftoff",
            "Decoder",
            "Compil",
            "CodeManager",
            "NativeModule",
            "JumpTable",
            "WasmCode",
        ]
        .iter()
        .any(|p| symbol.contains(p))
}

/// The runtime's JavaScript compilers: parser, bytecode generator, and the optimising tiers.
fn js_compile(symbol: &str) -> bool {
    !symbol.contains("wasm::")
        && [
            "Parser",
            "Scanner",
            "BytecodeGenerator",
            "interpreter::",
            "Compiler::",
            "compiler::",
            "maglev",
            "turboshaft",
        ]
        .iter()
        .any(|p| symbol.contains(p))
}

fn start_variant(
    opts: &Options,
    name: &str,
    dir: &Path,
    template: &Path,
    tag: &str,
) -> Result<(Dev, PathBuf), String> {
    let state = opts.work.join(format!("{name}-{tag}-state"));
    let log = opts.work.join(format!("{name}-{tag}.log"));
    let _ = fs::remove_dir_all(&state);
    coldstart::copy_tree(template, &state)?;
    let mut dev = Dev::start(&opts.wrangler, dir, &state, &log)?;
    dev.wait_ready()?;
    thread::sleep(std::time::Duration::from_millis(250));
    Ok((dev, state))
}

pub fn run(opts: &Options) -> Result<String, String> {
    fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let mut templates = Vec::new();
    for (name, dir) in &opts.variants {
        eprintln!("[coldprofile] preparing {name}'s database");
        templates.push(coldstart::prepare(
            &opts.wrangler,
            &opts.work,
            name,
            dir,
            &[Kind::GetState],
        )?);
    }
    let n = opts.variants.len();
    let mut first: Vec<Split> = (0..n).map(|_| Split::default()).collect();
    let mut second: Vec<Split> = (0..n).map(|_| Split::default()).collect();
    for round in 0..opts.starts {
        for vi in load::round_order(round, n) {
            let (name, dir) = &opts.variants[vi];
            let (dev, state) = start_variant(opts, name, dir, &templates[vi], "v8")?;
            let mut session = coldstart::own_session(dev.pgid())?;
            session.call("Profiler.enable", json!({}))?;
            session.call(
                "Profiler.setSamplingInterval",
                json!({ "interval": opts.interval_us }),
            )?;
            let runtime = cpu::runtime_pid(dev.pgid()).ok_or("no runtime workerd")?;
            coldstart::wait_idle(runtime);
            let sampler = Sampler::new(vec![dev.pgid()]);
            let mut client = Client::new(Kind::GetState, name == "floor", dev.base());
            let mut isolate = Vec::new();
            for (call, split) in [("first", &mut first[vi]), ("second", &mut second[vi])] {
                let (_, busy, raw) =
                    coldstart::profiled(&mut session, opts.interval_us, &sampler, || {
                        client.call()
                    })?;
                isolate.push(busy.ms);
                let file = opts
                    .out
                    .join(format!("{name}-start{}-{call}.cpuprofile", round + 1));
                fs::write(&file, raw.to_string())
                    .map_err(|e| format!("{}: {e}", file.display()))?;
                split.add(&raw, opts.interval_us)?;
            }
            eprintln!(
                "[coldprofile] V8, start {} {name:<10} isolate: first {:.1} ms, second {:.1} ms",
                round + 1,
                isolate[0],
                isolate[1]
            );
            drop(session);
            drop(dev);
            let _ = fs::remove_dir_all(&state);
        }
    }
    let mut whole: Vec<Whole> = (0..n).map(|_| Whole::default()).collect();
    let perf_starts = if perf::available() {
        opts.perf_starts
    } else {
        0
    };
    for round in 0..perf_starts {
        for vi in load::round_order(round, n) {
            let (name, dir) = &opts.variants[vi];
            let (dev, state) = start_variant(opts, name, dir, &templates[vi], "perf")?;
            // Ours, then none: wrangler's session goes with it.
            drop(coldstart::own_session(dev.pgid())?);
            let runtime = cpu::runtime_pid(dev.pgid()).ok_or("no runtime workerd")?;
            coldstart::wait_idle(runtime);
            let sampler = Sampler::new(vec![dev.pgid()]);
            let mut client = Client::new(Kind::GetState, name == "floor", dev.base());
            let data = opts.work.join(format!("{name}-perf-{round}.data"));
            let recording = perf::Recording::start(runtime, &data)?;
            let figures = coldstart::timed(&sampler, || client.call())?;
            recording.stop()?;
            let samples = perf::report(&data)?;
            let _ = fs::remove_file(&data);
            let w = &mut whole[vi];
            w.samples.add(&samples);
            w.starts += 1;
            w.runtime_ms.push(figures.runtime);
            eprintln!(
                "[coldprofile] perf, start {} {name:<10} first call runtime {:.1} ms, {} samples",
                round + 1,
                figures.runtime,
                samples.by_component.values().sum::<u64>()
            );
            drop(dev);
            let _ = fs::remove_dir_all(&state);
        }
    }
    let startup = startup_profiles(opts)?;
    Ok(report(opts, &first, &second, &whole, perf_starts, &startup))
}

/// One bundle's `wrangler check startup` runs: each profile's span, busy samples and the time
/// they stand for, and every busy frame's samples.
#[derive(Default)]
struct Startup {
    span_ms: Vec<f64>,
    busy_samples: Vec<f64>,
    busy_ms: Vec<f64>,
    frames: HashMap<String, usize>,
}

/// Whether the wrangler in use has `wrangler check startup` (4.86, the pinned one when this was
/// written, has it as alpha; the project is moving to 4.164).
fn has_check_startup(wrangler: &Path) -> bool {
    Command::new(wrangler)
        .args(["check", "startup", "--help"])
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("outfile"))
}

/// `wrangler check startup` on each bundle, `startup_runs` times: it bundles the Worker as
/// `wrangler deploy --dry-run` would, loads it into a fresh local runtime whose entry imports it
/// inside a request, and saves V8's profile of that import (the module's top-level code: the
/// glue evaluated, the wasm compiled and instantiated). `None` without the command.
fn startup_profiles(opts: &Options) -> Result<Option<Vec<Startup>>, String> {
    if opts.startup.is_empty() || opts.startup_runs == 0 {
        return Ok(Some(Vec::new()));
    }
    if !has_check_startup(&opts.wrangler) {
        return Ok(None);
    }
    let mut all = Vec::new();
    for (name, dir) in &opts.startup {
        let mut s = Startup::default();
        for run in 0..opts.startup_runs {
            let file = opts
                .out
                .join(format!("{name}-startup-{}.cpuprofile", run + 1));
            let out = Command::new(&opts.wrangler)
                .args(["check", "startup", "--config"])
                .arg(dir.join("wrangler.toml"))
                .arg("--outfile")
                .arg(&file)
                .current_dir(dir)
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("wrangler check startup: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "wrangler check startup on {name} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                        .chars()
                        .take(500)
                        .collect::<String>()
                ));
            }
            let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let raw: Json = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            let parsed = Profile::parse(&raw)?;
            let busy: Vec<usize> = parsed
                .samples
                .iter()
                .copied()
                .filter(|&l| parsed.frames[l].name != "(idle)")
                .collect();
            let w = profile::us_per_sample(&[(String::new(), raw.clone())], V8_DEFAULT_INTERVAL_US);
            let span =
                raw["endTime"].as_f64().unwrap_or(0.0) - raw["startTime"].as_f64().unwrap_or(0.0);
            s.span_ms.push(span / 1000.0);
            s.busy_samples.push(busy.len() as f64);
            s.busy_ms.push(busy.len() as f64 * w / 1000.0);
            for leaf in busy {
                let f = &parsed.frames[leaf];
                let name = if f.name.is_empty() {
                    format!("(top level) {}", f.url.rsplit('/').next().unwrap_or(""))
                } else {
                    f.name.clone()
                };
                *s.frames.entry(name).or_default() += 1;
            }
            eprintln!(
                "[coldprofile] check startup {name} run {}: span {:.1} ms, {} busy samples",
                run + 1,
                span / 1000.0,
                s.busy_samples.last().copied().unwrap_or(0.0)
            );
        }
        all.push(s);
    }
    Ok(Some(all))
}

fn report(
    opts: &Options,
    first: &[Split],
    second: &[Split],
    whole: &[Whole],
    perf_starts: usize,
    startup: &Option<Vec<Startup>>,
) -> String {
    let names: Vec<&str> = opts.variants.iter().map(|(n, _)| n.as_str()).collect();
    let floor = names.iter().position(|n| *n == "floor");
    let this = names.iter().position(|n| *n != "floor");
    let mut out = format!(
        "Where the first get_state of a fresh isolate goes (`bench coldprofile`): {} fresh \
         starts per variant, made and settled as `bench coldstart` makes them, V8's profiler on \
         the Worker isolate around the first get_state and around the second, sampling every \
         {} µs; each sample counts for the median gap between samples in bursts, and the µs \
         are means per start. The Worker's build keeps its name section, so wasm frames carry \
         Rust names (the code is the same, byte for byte, as the deployed build's). Raw \
         profiles: `target/coldstart/*.cpuprofile`.\n\n\
         V8 puts a function's lazy compilation (Liftoff for wasm, the parser and bytecode \
         generator for JavaScript) on the frame that called it, so the profile has no row for \
         compilation: the first call's excess over the second of the same start is what the \
         isolate pays once, compilation the bulk of it, and the perf table below measures V8's \
         compilers directly.\n",
        opts.starts, opts.interval_us
    );

    // Categories, by this build's gap over the floor.
    let mut header = vec!["category (self time of the sample's leaf frame)".to_owned()];
    for n in &names {
        header.push(format!("{n} first, µs"));
        header.push(format!("{n} second, µs"));
    }
    if let (Some(t), Some(_)) = (this, floor) {
        header.push(format!("{} first − floor first (share)", names[t]));
        header.push(format!("{} first − its second (share)", names[t]));
    }
    let mut table = Table::new(&header.iter().map(String::as_str).collect::<Vec<_>>());
    let mut categories: Vec<String> = first
        .iter()
        .chain(second)
        .flat_map(|s| s.by_category.keys().cloned())
        .collect();
    categories.sort();
    categories.dedup();
    let gap = |t: usize, f: usize| first[t].busy() - first[f].busy();
    let once = |t: usize| first[t].busy() - second[t].busy();
    let key = |c: &str| match (this, floor) {
        (Some(t), Some(f)) => first[t].category(c) - first[f].category(c),
        (Some(t), None) => first[t].category(c),
        _ => 0.0,
    };
    categories.sort_by(|a, b| key(b).total_cmp(&key(a)));
    // wasm modules under `SMALL` of this build's first call are one row: a few samples each.
    let small: Vec<String> = categories
        .iter()
        .filter(|c| {
            c.starts_with("wasm: ")
                && this.is_some_and(|t| {
                    first[t].category(c) < SMALL * first[t].busy()
                        && second[t].category(c) < SMALL * second[t].busy()
                })
        })
        .cloned()
        .collect();
    categories.retain(|c| !small.contains(c));
    let row = |label: &str, v: &dyn Fn(&Split) -> f64, share: bool| -> Vec<String> {
        let mut cells = vec![label.to_owned()];
        for i in 0..names.len() {
            cells.push(format!("{:.0}", v(&first[i])));
            cells.push(format!("{:.0}", v(&second[i])));
        }
        if let (Some(t), Some(f)) = (this, floor) {
            let above = v(&first[t]) - v(&first[f]);
            let extra = v(&first[t]) - v(&second[t]);
            if share {
                cells.push(format!("{above:+.0} ({:.0} %)", 100.0 * above / gap(t, f)));
                cells.push(format!("{extra:+.0} ({:.0} %)", 100.0 * extra / once(t)));
            } else {
                cells.push(format!("{above:+.0}"));
                cells.push(format!("{extra:+.0}"));
            }
        }
        cells
    };
    for c in categories.iter().filter(|c| c.as_str() != IDLE) {
        table.row(row(c, &|s: &Split| s.category(c), true));
    }
    if !small.is_empty() {
        let label = format!(
            "wasm: {} other modules, each under {:.0} % of either call",
            small.len(),
            SMALL * 100.0
        );
        let sum = |s: &Split| small.iter().map(|c| s.category(c)).sum::<f64>();
        table.row(row(&label, &sum, true));
    }
    table.row(row(
        "the isolate's CPU (all but idle)",
        &|s: &Split| s.busy(),
        true,
    ));
    table.row(row(IDLE, &|s: &Split| s.category(IDLE), false));
    out.push_str(&format!(
        "\nThe Worker isolate, by category, largest gap over the floor first:\n\n{}",
        table.render()
    ));

    // The functions with the most self time in this build's first call.
    if let Some(t) = this {
        let mut top: Vec<(&String, &f64)> = first[t]
            .by_function
            .iter()
            .filter(|(k, _)| k.as_str() != "(idle)")
            .collect();
        top.sort_by(|a, b| b.1.total_cmp(a.1));
        let mut functions = Table::new(&[
            "function (self time)",
            "first call, µs",
            "second call, µs",
            "share of the first call's isolate CPU",
        ]);
        let busy = first[t].busy();
        for (name, _) in top.into_iter().take(20) {
            let us = first[t].function(name);
            functions.row(vec![
                format!("`{}`", name.replace('|', "\\|")),
                format!("{us:.0}"),
                format!("{:.0}", second[t].function(name)),
                format!("{:.1} %", 100.0 * us / busy),
            ]);
        }
        out.push_str(&format!(
            "\nThe 20 functions with the most self time in {}'s first get_state (a wasm-bindgen \
             shim or glue function high here is mostly the lazy compilation of what it called):\
             \n\n{}",
            names[t],
            functions.render()
        ));
    }

    // perf.
    if perf_starts == 0 {
        out.push_str("\n`perf` is not usable here, so the whole-process view is left out.\n");
    } else {
        let mut header = vec!["runtime workerd, first get_state (perf)".to_owned()];
        header.extend(names.iter().map(|n| format!("{n}, ms")));
        let mut table = Table::new(&header.iter().map(String::as_str).collect::<Vec<_>>());
        let mut components: Vec<&'static str> = whole
            .iter()
            .flat_map(|w| w.samples.by_component.keys().copied())
            .collect();
        components.sort();
        components.dedup();
        let component =
            |w: &Whole, c: &str| w.ms(w.samples.by_component.get(c).copied().unwrap_or(0));
        components.sort_by(|a, b| {
            let k = |c: &str| this.map_or(0.0, |t| component(&whole[t], c));
            k(b).total_cmp(&k(a))
        });
        for c in components {
            let mut cells = vec![c.to_owned()];
            cells.extend(whole.iter().map(|w| format!("{:.2}", component(w, c))));
            table.row(cells);
        }
        let by = |w: &Whole, f: fn(&str) -> bool| -> f64 {
            w.ms(w
                .samples
                .by_symbol
                .iter()
                .filter(|(s, _)| f(s))
                .map(|(_, n)| n)
                .sum())
        };
        let mut cells =
            vec!["of all these: V8's wasm compiler (Liftoff, decoder, code space)".to_owned()];
        cells.extend(whole.iter().map(|w| format!("{:.2}", by(w, wasm_compile))));
        table.row(cells);
        let mut cells = vec![
            "of all these: V8's JavaScript compilers (parser, bytecode, optimising tiers)"
                .to_owned(),
        ];
        cells.extend(whole.iter().map(|w| format!("{:.2}", by(w, js_compile))));
        table.row(cells);
        let mut cells = vec!["all perf samples".to_owned()];
        cells.extend(
            whole
                .iter()
                .map(|w| format!("{:.2}", w.ms(w.samples.by_component.values().sum()))),
        );
        table.row(cells);
        let mut cells = vec!["the same calls' runtime CPU from /proc (median)".to_owned()];
        cells.extend(
            whole
                .iter()
                .map(|w| format!("{:.2}", median(&w.runtime_ms))),
        );
        table.row(cells);
        out.push_str(&format!(
            "\nThe whole runtime workerd under `perf record` (cpu-clock, one sample per {} µs of \
             CPU, every thread) during the first get_state of {perf_starts} other fresh starts \
             per variant, with no inspector session attached: ms per start. workerd is built \
             with symbols, so V8's own compilers show by name, and the wasm compiler rows are \
             V8's wasm compilation figures for this call (workerd takes no \
             `--trace-wasm-compilation-times`); JIT code (wasm and JavaScript running) has no \
             symbols here:\n\n{}",
            perf::PERIOD_NS / 1000,
            table.render()
        ));
        if let Some(t) = this {
            let mut top: Vec<(&String, &u64)> = whole[t]
                .samples
                .by_symbol
                .iter()
                .filter(|(s, _)| wasm_compile(s) || js_compile(s))
                .collect();
            top.sort_by(|a, b| b.1.cmp(a.1));
            let mut symbols = Table::new(&["compiler symbol (perf)", "ms per start"]);
            for (s, n) in top.into_iter().take(12) {
                symbols.row(vec![
                    format!(
                        "`{}`",
                        s.chars().take(110).collect::<String>().replace('|', "\\|")
                    ),
                    format!("{:.2}", whole[t].ms(*n)),
                ]);
            }
            out.push_str(&format!(
                "\nThe compiler symbols with the most samples in {}'s first get_state:\n\n{}",
                names[t],
                symbols.render()
            ));
        }
    }

    // wrangler check startup.
    match startup {
        None => out.push_str(
            "\nThe wrangler in use has no `wrangler check startup`, so the start-up phase is \
             left out.\n",
        ),
        Some(s) if s.is_empty() => {}
        Some(all) => {
            let mut table = Table::new(&[
                "bundle",
                "runs",
                "profile span, ms",
                "busy samples",
                "≈ busy ms",
                "busy frames (samples over all runs)",
            ]);
            for ((name, _), s) in opts.startup.iter().zip(all) {
                let mut frames: Vec<(&String, &usize)> = s.frames.iter().collect();
                frames.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
                table.row(vec![
                    name.clone(),
                    s.span_ms.len().to_string(),
                    format!("{:.1}", median(&s.span_ms)),
                    format!("{:.0}", median(&s.busy_samples)),
                    format!("{:.1}", median(&s.busy_ms)),
                    frames
                        .iter()
                        .map(|(f, n)| format!("`{f}` {n}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                ]);
            }
            out.push_str(&format!(
                "\nThe start-up phase, `wrangler check startup` (an alpha command; the toolchain \
                 line above names the wrangler that ran it): it bundles the Worker as `wrangler \
                 deploy --dry-run` does, loads it in a fresh local runtime whose entry imports it \
                 inside a request, and keeps V8's profile of that import: the bundle's top-level code, the wasm module instantiated (and, \
                 where workerd has not done it at load, compiled). It takes V8's default \
                 sampling interval ({} µs), so a phase this short gets a handful of samples: \
                 medians over the runs, the busy time as samples times the median gap. Raw \
                 profiles: `target/coldstart/*-startup-*.cpuprofile`.\n\n{}",
                V8_DEFAULT_INTERVAL_US,
                table.render()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wasm_frames_are_grouped_by_module_path() {
        assert_eq!(
            module_prefix("handoff_mcp::worker::drive::poll::h983c9558653e058a"),
            "handoff_mcp::worker"
        );
        assert_eq!(
            module_prefix("<handoff_mcp::worker::d1::D1Store as handoff_mcp::store::Sql>::batch"),
            "handoff_mcp::worker"
        );
        assert_eq!(
            module_prefix("<alloc[3ca501edff3f0c7c]::string::String>::with_capacity"),
            "alloc"
        );
        assert_eq!(
            module_prefix("core::ptr::drop_in_place<handoff_mcp::model::Task>"),
            "core"
        );
        assert_eq!(
            module_prefix("__rustc[b7974e8690430dd9]::__rdl_alloc"),
            "alloc"
        );
        assert_eq!(
            module_prefix("fetch externref shim"),
            "wasm-bindgen's exports and shims"
        );
        assert_eq!(
            module_prefix("wasm-function[123]"),
            "unnamed functions (no name section)"
        );
    }

    #[test]
    fn compiler_symbols() {
        assert!(wasm_compile(
            "v8::internal::wasm::LiftoffCompiler::EmitCall(v8::internal::wasm::FullDecoder*)"
        ));
        assert!(wasm_compile(
            "v8::internal::wasm::CompileLazy(v8::internal::Isolate*)"
        ));
        assert!(!wasm_compile("v8::internal::Parser::ParseProgram"));
        assert!(js_compile("v8::internal::Parser::ParseProgram"));
        assert!(!js_compile("v8::internal::wasm::LiftoffCompiler::EmitCall"));
    }
}
