//! (b) and (c): the HTTP load client and its report. Std threads, one blocking ureq agent (one
//! kept-alive connection) per thread, a fixed request count and a time cap per phase, loopback
//! only; the floors run in the same rounds as the tools so every ratio compares neighbours in time.
//! Must not parse replies beyond a substring check, so the client's CPU stays small.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::cpu::{self, Delta, Sampler, Split};
use crate::stats::{median, percentile, range, Table};
use crate::workload::{self, TOOL_OK};

pub struct Options {
    /// `http://127.0.0.1:<port>/<token>` of the handoff-mcp `wrangler dev`.
    pub base: String,
    /// `http://127.0.0.1:<port>` of the floor Worker's `wrangler dev`.
    pub floor: String,
    pub handoff_pgid: i32,
    pub floor_pgid: i32,
    pub rounds: usize,
    /// Requests per phase at concurrency 1 and at concurrency 16.
    pub requests: [usize; 2],
    /// Untimed requests per target and concurrency before the first round.
    pub warmup: usize,
    pub cap: Duration,
    /// How long to wait at most, before each round, for the machine to go quiet.
    pub settle: Duration,
}

pub const CONCURRENCY: [usize; 2] = [1, 16];

/// Below this many busy cores (servers idle, client idle) the machine counts as quiet.
const QUIET_CORES: f64 = 0.25;

/// Every request gives up after this long, so a hung server fails the phase instead of stalling it.
const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Healthz,
    Floor,
    GetState,
    AddTask,
}

const KINDS: [Kind; 4] = [Kind::Healthz, Kind::Floor, Kind::GetState, Kind::AddTask];

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Healthz => "/healthz (no D1)",
            Kind::Floor => "D1 floor (1 query)",
            Kind::GetState => "get_state",
            Kind::AddTask => "add_task",
        }
    }

    /// Index of the process group that serves it: 0 handoff-mcp, 1 the floor Worker.
    fn group(self) -> usize {
        usize::from(self == Kind::Floor)
    }
}

/// One request, sent over and over in a phase.
struct Target {
    method: &'static str,
    url: String,
    headers: Vec<(&'static str, String)>,
    body: Option<String>,
    /// Whether the body holds `workload::NUMBER`, filled in with a fresh number per request.
    numbered: bool,
    /// A substring every good reply holds.
    expect: &'static str,
}

/// The numbers `workload::numbered` bodies get: one counter for the whole run, so no two
/// requests send the same task.
static NEXT_NUMBER: AtomicU64 = AtomicU64::new(0);

impl Target {
    fn mcp(opts: &Options, req: workload::Request) -> Target {
        Target {
            method: "POST",
            url: format!("{}/mcp", opts.base),
            headers: req.headers,
            numbered: req.body.contains(workload::NUMBER),
            body: Some(req.body),
            expect: TOOL_OK,
        }
    }

    fn build(opts: &Options, kind: Kind, add_project: &str) -> Target {
        match kind {
            Kind::Healthz => Target {
                method: "GET",
                url: format!("{}/healthz", origin(&opts.base)),
                headers: Vec::new(),
                body: None,
                numbered: false,
                expect: "ok",
            },
            // The floor gets the same POST as get_state, so both pay for the same upload.
            Kind::Floor => {
                let req = workload::get_state(workload::STATE_PROJECT);
                Target {
                    method: "POST",
                    url: format!("{}/", opts.floor),
                    headers: req.headers,
                    body: Some(req.body),
                    numbered: false,
                    expect: "\"one\":1",
                }
            }
            Kind::GetState => Target::mcp(opts, workload::get_state(workload::STATE_PROJECT)),
            Kind::AddTask => Target::mcp(
                opts,
                workload::add_task(add_project, "cleanup", workload::ADD_BODY),
            ),
        }
    }
}

/// `http://host:port` of a base URL that may carry a path.
fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    url[after_scheme..]
        .find('/')
        .map_or(url, |i| &url[..after_scheme + i])
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(TIMEOUT)
        .redirects(0)
        .build()
}

/// Sends one request and reads the whole reply; only a 2xx reply holding `expect` is good.
fn send(agent: &ureq::Agent, target: &Target) -> Result<String, String> {
    let mut request = agent.request(target.method, &target.url);
    for (name, value) in &target.headers {
        request = request.set(name, value);
    }
    let sent = match &target.body {
        Some(body) if target.numbered => {
            let n = NEXT_NUMBER.fetch_add(1, Ordering::Relaxed);
            request.send_string(&workload::numbered(body, n))
        }
        Some(body) => request.send_string(body),
        None => request.call(),
    };
    let body = match sent {
        Ok(response) => response.into_string().map_err(|e| e.to_string())?,
        Err(ureq::Error::Status(status, response)) => {
            let body = response.into_string().unwrap_or_default();
            return Err(format!("HTTP {status}: {}", clip(&body)));
        }
        Err(e) => return Err(e.to_string()),
    };
    if body.contains(target.expect) {
        Ok(body)
    } else {
        Err(format!("unexpected reply: {}", clip(&body)))
    }
}

fn clip(s: &str) -> String {
    s.chars().take(300).collect()
}

/// What one phase (one target, one concurrency, one round) measured.
struct Phase {
    /// Latency of every request, in microseconds, sorted.
    latencies: Vec<u64>,
    wall: Duration,
    capped: bool,
    cpu: Delta,
}

impl Phase {
    fn done(&self) -> usize {
        self.latencies.len()
    }

    fn rate(&self) -> f64 {
        self.done() as f64 / self.wall.as_secs_f64()
    }
}

/// Runs `requests` requests on `concurrency` threads (or until `cap`), with CPU snapshots just
/// before the first and just after the last. Each thread opens its connection with one untimed
/// request first, so connection set-up is not measured. Any failed request fails the phase.
fn run_phase(
    target: &Target,
    concurrency: usize,
    requests: usize,
    cap: Duration,
    sampler: &Sampler,
) -> Result<Phase, String> {
    let next = AtomicUsize::new(0);
    let ready = Barrier::new(concurrency + 1);
    let go = Barrier::new(concurrency + 1);
    let start: OnceLock<Instant> = OnceLock::new();
    let (outcomes, before) = thread::scope(|scope| {
        let workers: Vec<_> = (0..concurrency)
            .map(|_| {
                scope.spawn(|| {
                    let agent = agent();
                    let warm = send(&agent, target);
                    ready.wait();
                    go.wait();
                    warm?;
                    let start = *start.get().expect("set before the go barrier");
                    let mut latencies = Vec::with_capacity(requests / concurrency + 1);
                    let mut capped = false;
                    while next.fetch_add(1, Ordering::Relaxed) < requests {
                        if start.elapsed() > cap {
                            capped = true;
                            break;
                        }
                        let t = Instant::now();
                        send(&agent, target)?;
                        latencies.push(t.elapsed().as_micros() as u64);
                    }
                    Ok::<_, String>((latencies, Instant::now(), capped))
                })
            })
            .collect();
        ready.wait();
        let before = sampler.snapshot();
        start.get_or_init(Instant::now);
        go.wait();
        let outcomes: Vec<_> = workers
            .into_iter()
            .map(|w| w.join().expect("a load thread panicked"))
            .collect();
        (outcomes, before)
    });
    let after = sampler.snapshot();
    let start = *start.get().expect("set above");
    let mut phase = Phase {
        latencies: Vec::with_capacity(requests),
        wall: Duration::ZERO,
        capped: false,
        cpu: sampler.delta(&before, &after),
    };
    for outcome in outcomes {
        let (latencies, end, capped) = outcome?;
        phase.latencies.extend(latencies);
        phase.wall = phase.wall.max(end.duration_since(start));
        phase.capped |= capped;
    }
    phase.latencies.sort_unstable();
    if phase.latencies.is_empty() {
        return Err("no request finished within the cap".into());
    }
    Ok(phase)
}

/// Waits, up to `limit`, until nothing else on the machine is busy: on two shared cores another
/// engineer's build halves the servers' CPU. Returns how long it waited.
fn settle(limit: Duration) -> Duration {
    let start = Instant::now();
    while cpu::busy_cores(Duration::from_millis(500)) > QUIET_CORES && start.elapsed() < limit {}
    start.elapsed()
}

/// Calls a tool once outside any measurement and returns the reply.
fn call(opts: &Options, req: workload::Request) -> Result<String, String> {
    let target = Target::mcp(opts, req);
    send(&agent(), &target).map_err(|e| format!("setup {}: {e}", target.url))
}

/// Gives the get_state project its realistic state over HTTP and checks get_state lists it.
fn seed(opts: &Options) -> Result<(), String> {
    let mut last_task = None;
    for req in workload::setup(workload::STATE_PROJECT) {
        last_task = workload::task_id(&call(opts, req)?);
    }
    let done = last_task.ok_or("setup's last add_task returned no task id")?;
    call(opts, workload::complete_task(&done))?;
    let state = call(opts, workload::get_state(workload::STATE_PROJECT))?;
    match workload::DEFERRED
        .iter()
        .find(|(_, body)| !state.contains(body))
    {
        Some((_, body)) => Err(format!("get_state does not list {body:?}")),
        None => Ok(()),
    }
}

/// Every phase of every round, by concurrency index and kind.
struct Results {
    phases: Vec<Vec<Vec<Phase>>>,
}

impl Results {
    fn of(&self, ci: usize, kind: Kind) -> &[Phase] {
        &self.phases[ci][kind as usize]
    }

    /// Requests per second over every round together.
    fn pooled_rate(&self, ci: usize, kind: Kind) -> f64 {
        let phases = self.of(ci, kind);
        let done: usize = phases.iter().map(Phase::done).sum();
        let wall: f64 = phases.iter().map(|p| p.wall.as_secs_f64()).sum();
        done as f64 / wall
    }

    fn latencies(&self, ci: usize, kind: Kind) -> Vec<u64> {
        let mut all: Vec<u64> = self
            .of(ci, kind)
            .iter()
            .flat_map(|p| p.latencies.iter().copied())
            .collect();
        all.sort_unstable();
        all
    }

    /// Server CPU per request in the group that served `kind`, pooled over rounds.
    fn cpu_per_request(&self, ci: usize, kind: Kind) -> Split {
        let phases = self.of(ci, kind);
        let done = phases.iter().map(Phase::done).sum::<usize>() as f64;
        let mut sum = Split::default();
        for p in phases {
            let g = p.cpu.groups[kind.group()];
            sum.node += g.node;
            sum.runtime += g.runtime;
            sum.proxy += g.proxy;
            sum.other += g.other;
        }
        Split {
            node: sum.node / done,
            runtime: sum.runtime / done,
            proxy: sum.proxy / done,
            other: sum.other / done,
        }
    }

    /// Per-round ratios of `kind`'s throughput to `floor`'s in the same round.
    fn round_ratios(&self, ci: usize, kind: Kind, floor: Kind) -> Vec<f64> {
        self.of(ci, kind)
            .iter()
            .zip(self.of(ci, floor))
            .map(|(a, b)| a.rate() / b.rate())
            .collect()
    }
}

fn ms(us: u64) -> String {
    format!("{:.2}", us as f64 / 1000.0)
}

/// Runs the warm-up and every round and returns the report. Errors never show the token: ureq
/// names the URL in its messages, and the base URL holds it.
pub fn run(opts: &Options) -> Result<String, String> {
    measure(opts).map_err(|e| e.replace(&opts.base, "<base>"))
}

fn measure(opts: &Options) -> Result<String, String> {
    for url in [&opts.base, &opts.floor] {
        if !["http://127.0.0.1:", "http://localhost:", "http://[::1]:"]
            .iter()
            .any(|p| url.starts_with(p))
        {
            return Err("the bench loads loopback servers only (http://127.0.0.1:<port>…)".into());
        }
    }
    let sampler = Sampler::new(vec![opts.handoff_pgid, opts.floor_pgid]);
    sampler.check()?;
    let groups = sampler.describe();
    eprintln!(
        "[bench] processes: handoff-mcp {}; floor {}",
        groups[0], groups[1]
    );
    seed(opts)?;

    eprintln!(
        "[bench] warm-up: {} requests per target and concurrency",
        opts.warmup
    );
    call(opts, workload::set_north_star("bench-add-warm"))?;
    for kind in KINDS {
        let target = Target::build(opts, kind, "bench-add-warm");
        for c in CONCURRENCY {
            run_phase(&target, c, opts.warmup, opts.cap, &sampler)?;
        }
    }

    let mut results = Results {
        phases: (0..CONCURRENCY.len())
            .map(|_| KINDS.iter().map(|_| Vec::new()).collect())
            .collect(),
    };
    let mut waited = Duration::ZERO;
    for (ci, c) in CONCURRENCY.into_iter().enumerate() {
        // Short phases, the four targets back to back in each round: other load on the machine
        // (two cores, shared) changes over seconds, so it falls on a tool and its floors alike.
        for round in 0..opts.rounds {
            waited += settle(opts.settle);
            // The order rotates each round so no phase always follows the same neighbour.
            for k in 0..KINDS.len() {
                let kind = KINDS[(k + round) % KINDS.len()];
                let project = format!("bench-add-c{c}-r{round}");
                if kind == Kind::AddTask {
                    call(opts, workload::set_north_star(&project))?;
                }
                let target = Target::build(opts, kind, &project);
                let phase = run_phase(&target, c, opts.requests[ci], opts.cap, &sampler)
                    .map_err(|e| format!("round {} c={c} {}: {e}", round + 1, kind.label()))?;
                let g = phase.cpu.groups[kind.group()];
                eprintln!(
                    "[bench] round {} c={c:<2} {:<20} {:>7.1} req/s  p50 {:>6} ms  p99 {:>6} ms  \
                     workerd {:.2} ms/req  node {:.2} ms/req  foreign {:.2} cores{}",
                    round + 1,
                    kind.label(),
                    phase.rate(),
                    ms(percentile(&phase.latencies, 50.0)),
                    ms(percentile(&phase.latencies, 99.0)),
                    g.workerd() / phase.done() as f64,
                    g.node / phase.done() as f64,
                    phase.cpu.foreign() / phase.wall.as_secs_f64() / 1000.0,
                    if phase.capped { "  (capped)" } else { "" },
                );
                results.phases[ci][kind as usize].push(phase);
            }
        }
    }
    Ok(report(opts, &results, waited))
}

fn report(opts: &Options, results: &Results, waited: Duration) -> String {
    let mut out = format!(
        "HTTP against `wrangler dev` (`bench http`): at concurrency 1, then at 16, {} rounds; \
         a round is one phase per target back to back, in an order that rotates by round. A \
         phase is {} requests at c=1 and {} at c=16 (time cap {} s), after {} untimed warm-up \
         requests per target and concurrency; before each round the bench waited up to {} s for \
         the machine to go quiet ({} s in all). req/s and CPU are pooled over the rounds, \
         p50/p99 over every request. A ratio is taken within each round, between phases seconds \
         apart, and the median over the rounds is shown, with the range beside it.\n",
        opts.rounds,
        opts.requests[0],
        opts.requests[1],
        opts.cap.as_secs(),
        opts.warmup,
        opts.settle.as_secs(),
        waited.as_secs(),
    );
    for (ci, c) in CONCURRENCY.into_iter().enumerate() {
        let floor_p50 = percentile(&results.latencies(ci, Kind::Floor), 50.0);
        let floor_cpu = results.cpu_per_request(ci, Kind::Floor);
        let mut speed = Table::new(&[
            "phase",
            "req/s",
            "req/s by round",
            "p50 ms",
            "p99 ms",
            "÷ /healthz",
            "÷ D1 floor",
            "÷ D1 floor, rounds",
            "p50 ÷ floor p50",
        ]);
        let mut cpu = Table::new(&[
            "phase",
            "server",
            "workerd ms/req",
            "= runtime + proxy",
            "runtime − floor's runtime",
            "node ms/req",
            "other ms/req",
            "floor's server CPU ÷ this",
            "client ms/req",
            "foreign load, cores (median / max)",
        ]);
        for kind in KINDS {
            let phases = results.of(ci, kind);
            let rates: Vec<f64> = phases.iter().map(Phase::rate).collect();
            let to_floor = results.round_ratios(ci, kind, Kind::Floor);
            let lat = results.latencies(ci, kind);
            let p50 = percentile(&lat, 50.0);
            let capped = phases.iter().any(|p| p.capped);
            speed.row(vec![
                format!("{}{}", kind.label(), if capped { " (capped)" } else { "" }),
                format!("{:.0}", results.pooled_rate(ci, kind)),
                range(&rates, 0),
                ms(p50),
                ms(percentile(&lat, 99.0)),
                format!(
                    "{:.2}",
                    median(&results.round_ratios(ci, kind, Kind::Healthz))
                ),
                format!("{:.2}", median(&to_floor)),
                range(&to_floor, 2),
                format!("{:.2}", p50 as f64 / floor_p50 as f64),
            ]);
            let split = results.cpu_per_request(ci, kind);
            let done = phases.iter().map(Phase::done).sum::<usize>() as f64;
            let client: f64 = phases.iter().map(|p| p.cpu.client).sum::<f64>() / done;
            let foreign: Vec<f64> = phases
                .iter()
                .map(|p| p.cpu.foreign() / p.wall.as_secs_f64() / 1000.0)
                .collect();
            cpu.row(vec![
                kind.label().to_owned(),
                (if kind == Kind::Floor {
                    "floor Worker"
                } else {
                    "handoff-mcp"
                })
                .to_owned(),
                format!("{:.2}", split.workerd()),
                format!("{:.2} + {:.2}", split.runtime, split.proxy),
                format!("{:+.2}", split.runtime - floor_cpu.runtime),
                format!("{:.2}", split.node),
                format!("{:.2}", split.other),
                format!("{:.2}", floor_cpu.total() / split.total()),
                format!("{client:.2}"),
                format!(
                    "{:.2} / {:.2}",
                    median(&foreign),
                    foreign.iter().copied().fold(0.0, f64::max)
                ),
            ]);
        }
        out.push_str(&format!(
            "\nConcurrency {c}, throughput and latency:\n\n{}\nConcurrency {c}, server CPU per \
             request (ms of utime + stime from /proc, between the phase's first and last request; \
             runtime is the workerd running the Worker and its D1, proxy the workerd in front; \
             the floor's server CPU ÷ this is the throughput ratio to expect once the server \
             processes alone fill the cores, and it moves less with other load than req/s):\n\n{}",
            speed.render(),
            cpu.render()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_drops_the_path() {
        assert_eq!(origin("http://127.0.0.1:8787/tok"), "http://127.0.0.1:8787");
        assert_eq!(origin("http://127.0.0.1:8787"), "http://127.0.0.1:8787");
    }
}
