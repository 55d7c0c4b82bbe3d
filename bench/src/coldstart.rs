//! `bench coldstart`: what the first request of a fresh isolate costs, next to the floor Worker's.
//! Starts `wrangler dev` again and again on prebuilt bundles (nothing is built on the way), each
//! start on a copy of one prepared database, and waits until it is ready without sending the
//! Worker anything; then sends one kind of request (get_state, the 2025-11-25 handshake, the
//! legacy /sse transport, a page) and times its first call, the second and warm ones, with the
//! CPU of both workerd processes from /proc and, in the starts that take it, the Worker isolate's
//! own CPU through V8's profiler. Every variant and kind runs in one rotation. Spawns and stops
//! only the `wrangler dev`s it starts, each in its own process group; loopback only.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::cdp::Session;
use crate::cpu::{self, Sampler};
use crate::load::{self, Target};
use crate::profile::{self, Profile};
use crate::stats::{median, spread, Table};
use crate::workload::{self, TOOL_OK};

pub struct Options {
    pub wrangler: PathBuf,
    /// `name=dir` pairs: each dir holds a `wrangler.toml` for a prebuilt bundle. The name
    /// `floor` is the floor Worker.
    pub variants: Vec<(String, PathBuf)>,
    pub kinds: Vec<Kind>,
    /// Starts per variant and kind with nothing attached to the isolate: wall time and /proc CPU.
    pub starts: usize,
    /// Starts per variant and kind with V8's profiler on the isolate: its own CPU.
    pub isolate_starts: usize,
    /// Scratch space for databases and logs.
    pub work: PathBuf,
    /// Warm requests after the second one, for the steady-state figures.
    pub warm: usize,
    /// The sampling interval asked of V8 in the profiled starts.
    pub interval_us: u64,
}

/// The token every start is served with: throwaway, and only in the scratch folder's logs.
pub const TOKEN: &str = "coldstart-token";

/// The revision of the handshake kind.
const HANDSHAKE: &str = "2025-11-25";

/// No start may take longer than this to be ready, and no reply longer than `load::agent`'s
/// timeout.
const START_LIMIT: Duration = Duration::from_secs(120);

/// After wrangler's `Ready on`, before the inspector is touched: wrangler's inspector proxy
/// attaches to the Worker right after printing it.
const SETTLE: Duration = Duration::from_millis(250);

/// How long a session of ours must live before it counts as the isolate's only one
/// (`own_session`): workerd drops both sessions about 100 ms after a second one attaches.
const HOLD: Duration = Duration::from_millis(300);

/// The runtime counts as idle once it spends less than `QUIET` of CPU in a `WINDOW`, and the
/// wait for it gives up (and says so) after `IDLE_LIMIT`.
const WINDOW: Duration = Duration::from_millis(50);
const QUIET: Duration = Duration::from_micros(500);
const IDLE_LIMIT: Duration = Duration::from_secs(5);

/// What one start measures: one request sequence of a real client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A 2026-07-28 stateless tools/call of get_state: the isolate's first request.
    GetState,
    /// 2025-11-25: initialize (the isolate's first request), then tools/call get_state.
    Handshake,
    /// The legacy HTTP+SSE transport: GET /sse (the isolate's first request) to its endpoint
    /// event, then a tools/call POSTed there, timed to its reply on the stream.
    Sse,
    /// The human view's project page, GET /<token>/projects/<id>.
    Page,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::GetState, Kind::Handshake, Kind::Sse, Kind::Page];

    pub fn name(self) -> &'static str {
        match self {
            Kind::GetState => "get_state",
            Kind::Handshake => "handshake",
            Kind::Sse => "sse",
            Kind::Page => "page",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What the request before the measured call is, for the kinds that have one.
    fn opener(self) -> Option<&'static str> {
        match self {
            Kind::Handshake => Some("initialize"),
            Kind::Sse => Some("GET /sse to its endpoint event"),
            Kind::GetState | Kind::Page => None,
        }
    }
}

/// A started `wrangler dev`, stopped by its process group when dropped.
pub struct Dev {
    child: Child,
    pub port: u16,
    log: PathBuf,
    spawned: Instant,
}

impl Dev {
    /// At log level info, which prints `Ready on` (and each request's path, with the throwaway
    /// token, into the scratch folder's log).
    pub fn start(wrangler: &Path, dir: &Path, state: &Path, log: &Path) -> Result<Dev, String> {
        let port = free_port()?;
        let inspector = free_port()?;
        let file = fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
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
                &format!("AUTH_TOKEN:{TOKEN}"),
                "--log-level",
                "info",
            ])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("wrangler dev: {e}"))?;
        Ok(Dev {
            child,
            port,
            log: log.to_owned(),
            spawned: Instant::now(),
        })
    }

    pub fn pgid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Waits for wrangler's `Ready on` line: the runtime has loaded the Worker (its top-level
    /// code has run) and the proxy listens, and no request has reached the Worker. Returns the
    /// time since the spawn.
    pub fn wait_ready(&mut self) -> Result<Duration, String> {
        loop {
            let text = fs::read_to_string(&self.log).unwrap_or_default();
            if text.contains("Ready on http") {
                return Ok(self.spawned.elapsed());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "wrangler dev exited ({status}) before it was ready; see {}",
                    self.log.display()
                ));
            }
            if self.spawned.elapsed() > START_LIMIT {
                return Err(format!(
                    "wrangler dev was not ready within {START_LIMIT:?}; see {}",
                    self.log.display()
                ));
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// `http://127.0.0.1:<port>/<token>`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/{TOKEN}", self.port)
    }
}

impl Drop for Dev {
    /// Stops the whole group and waits until none of it is left (at most 5 s, then KILL), so
    /// a dying runtime does not share the cores with the next start.
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let signal = |s: &str| {
            Command::new("kill")
                .args([s, "--", &group])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|st| st.success())
        };
        signal("-TERM");
        let _ = self.child.wait();
        let stopping = Instant::now();
        while signal("-0") {
            if stopping.elapsed() > Duration::from_secs(5) {
                signal("-KILL");
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// Copies a folder tree (a persisted local D1).
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
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

/// A session on the Worker isolate that is the isolate's only one. workerd's inspector serves
/// one session per isolate: when a second attaches, it drops both (its log says an RPC message
/// exceeded its size limit). wrangler's inspector proxy attaches one as the Worker comes up,
/// with Runtime.enable and Network.enable (the runtime then reports every subrequest to it,
/// which production never does), and does not attach again once dropped. So a session of ours
/// that still answers after `HOLD` has the isolate to itself, and once it is closed nothing is
/// attached at all.
pub fn own_session(pgid: i32) -> Result<Session, String> {
    let (port, targets) = profile::inspector(pgid)?;
    let worker = targets
        .iter()
        .find(|t| t.id.starts_with("core:user:"))
        .ok_or("the runtime's inspector lists no Worker isolate")?;
    let mut last = String::new();
    for _ in 0..10 {
        match Session::open(port, &worker.ws_path) {
            Ok(mut session) => {
                thread::sleep(HOLD);
                match session.call("Schema.getDomains", json!({})) {
                    Ok(_) => return Ok(session),
                    Err(e) => last = e,
                }
            }
            Err(e) => {
                last = e;
                thread::sleep(HOLD);
            }
        }
    }
    Err(format!("no inspector session of ours lasted: {last}"))
}

/// Waits until the runtime workerd is idle (under `QUIET` of CPU in a `WINDOW`), at most
/// `IDLE_LIMIT`. Returns how long it waited and whether it went idle.
pub fn wait_idle(runtime: i32) -> (Duration, bool) {
    let start = Instant::now();
    let mut before = cpu::threads_ns(runtime);
    while start.elapsed() < IDLE_LIMIT {
        thread::sleep(WINDOW);
        let now = cpu::threads_ns(runtime);
        if now.saturating_sub(before) < QUIET.as_nanos() as u64 {
            return (start.elapsed(), true);
        }
        before = now;
    }
    (start.elapsed(), false)
}

/// One server-sent event.
struct Event {
    name: String,
    data: String,
}

/// Reads a stream's events until it ends (the `wrangler dev` is stopped, or the client gone).
fn read_events(reader: impl BufRead, tx: &Sender<Event>) {
    let (mut name, mut data) = (String::new(), String::new());
    for line in reader.lines() {
        let Ok(line) = line else { return };
        if line.is_empty() {
            if !data.is_empty() || !name.is_empty() {
                let event = Event {
                    name: std::mem::take(&mut name),
                    data: std::mem::take(&mut data),
                };
                if tx.send(event).is_err() {
                    return;
                }
            }
        } else if let Some(v) = line.strip_prefix("event:") {
            name = v.trim().to_owned();
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push_str(v.trim_start());
        }
    }
}

/// One client of one kind against one start: what it sends, in order. The floor Worker answers
/// every request of every kind with its one query (it reads the path only for `/healthz`,
/// `/statement` and `/batch`), so each kind's floor is the floor sent the same requests.
pub struct Client {
    kind: Kind,
    floor: bool,
    base: String,
    agent: ureq::Agent,
    /// The legacy session: where to POST, and its stream's events.
    post_url: String,
    events: Option<Receiver<Event>>,
    next_id: u64,
}

/// What every reply of the floor holds.
const FLOOR_OK: &str = "\"one\":1";

impl Client {
    pub fn new(kind: Kind, floor: bool, base: String) -> Client {
        Client {
            kind,
            floor,
            base,
            agent: load::agent(),
            post_url: String::new(),
            events: None,
            next_id: 0,
        }
    }

    fn expect(&self, handoff: &'static str) -> &'static str {
        if self.floor {
            FLOOR_OK
        } else {
            handoff
        }
    }

    fn send(&self, target: &Target) -> Result<(), String> {
        load::send(&self.agent, target)
            .map(drop)
            .map_err(|e| format!("{}: {e}", self.kind.name()))
    }

    /// The request a kind sends before the one measured, if any.
    pub fn open(&mut self) -> Result<(), String> {
        match self.kind {
            Kind::GetState | Kind::Page => Ok(()),
            Kind::Handshake => {
                let body = json!({
                    "jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {
                        "protocolVersion": HANDSHAKE,
                        "capabilities": {},
                        "clientInfo": {"name": "handoff-bench", "version": "0.1"},
                    },
                });
                let target = Target::new(
                    "POST",
                    format!("{}/mcp", self.base),
                    json_headers(),
                    Some(body.to_string()),
                    self.expect("\"protocolVersion\""),
                );
                self.send(&target)
            }
            Kind::Sse if self.floor => {
                let target = Target::new(
                    "GET",
                    format!("{}/sse", self.base),
                    Vec::new(),
                    None,
                    FLOOR_OK,
                );
                self.send(&target)
            }
            Kind::Sse => self.open_stream(),
        }
    }

    /// GET /sse, read up to its endpoint event; the stream stays open for the calls.
    fn open_stream(&mut self) -> Result<(), String> {
        let stream_agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10))
            .timeout_read(Duration::from_secs(60))
            .redirects(0)
            .build();
        let response = stream_agent
            .get(&format!("{}/sse", self.base))
            .set("Accept", "text/event-stream")
            .call()
            .map_err(|e| format!("GET /sse: {e}"))?;
        let (tx, rx) = mpsc::channel();
        let reader = BufReader::new(response.into_reader());
        thread::spawn(move || read_events(reader, &tx));
        let endpoint = rx
            .recv_timeout(Duration::from_secs(30))
            .map_err(|e| format!("GET /sse: no endpoint event ({e})"))?;
        if endpoint.name != "endpoint" || !endpoint.data.starts_with('/') {
            return Err(format!(
                "GET /sse: the first event is {:?}, not the endpoint",
                endpoint.name
            ));
        }
        let origin = self.base.rsplit_once('/').map_or("", |(o, _)| o);
        self.post_url = format!("{origin}{}", endpoint.data);
        self.events = Some(rx);
        Ok(())
    }

    /// One call of the kind, to its whole reply (for /sse, to the reply event on the stream).
    pub fn call(&mut self) -> Result<(), String> {
        self.next_id += 1;
        // The 2025-era tools/call of the handshake and sse kinds (the floor gets it too).
        let tools_call = json!({
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {"name": "get_state", "arguments": {"project_id": workload::STATE_PROJECT}},
        })
        .to_string();
        let target = match self.kind {
            Kind::GetState => {
                let req = workload::get_state(workload::STATE_PROJECT);
                Target::new(
                    "POST",
                    format!("{}/mcp", self.base),
                    req.headers,
                    Some(req.body),
                    self.expect(TOOL_OK),
                )
            }
            Kind::Handshake => {
                let mut headers = json_headers();
                headers.push(("MCP-Protocol-Version", HANDSHAKE.to_owned()));
                Target::new(
                    "POST",
                    format!("{}/mcp", self.base),
                    headers,
                    Some(tools_call),
                    self.expect(TOOL_OK),
                )
            }
            Kind::Sse if self.floor => Target::new(
                "POST",
                format!("{}/sse/message", self.base),
                json_headers(),
                Some(tools_call),
                FLOOR_OK,
            ),
            Kind::Sse => {
                // 202 Accepted with no promise about its body: any 2xx will do.
                let target = Target::new(
                    "POST",
                    self.post_url.clone(),
                    json_headers(),
                    Some(tools_call),
                    "",
                );
                self.send(&target)?;
                return self.reply_event();
            }
            Kind::Page => Target::new(
                "GET",
                format!("{}/projects/{}", self.base, workload::STATE_PROJECT),
                Vec::new(),
                None,
                self.expect("<title>bench-state"),
            ),
        };
        self.send(&target)
    }

    /// Waits for the stream's reply to the last POST.
    fn reply_event(&self) -> Result<(), String> {
        let events = self.events.as_ref().ok_or("no open stream")?;
        let id = format!("\"id\":{}", self.next_id);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let event = events
                .recv_timeout(left)
                .map_err(|e| format!("sse: no reply on the stream ({e})"))?;
            if event.name == "message" && event.data.contains(&id) {
                return if event.data.contains(TOOL_OK) {
                    Ok(())
                } else {
                    Err(format!(
                        "sse: unexpected reply: {}",
                        event.data.chars().take(300).collect::<String>()
                    ))
                };
            }
        }
    }
}

fn json_headers() -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
    ]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One request's figures, in ms: wall time on the client, and the CPU both workerd processes
/// spent between just before it was sent and just after its reply was read.
#[derive(Debug, Default, Clone, Copy)]
pub struct Figures {
    pub wall: f64,
    pub runtime: f64,
    pub proxy: f64,
}

/// Times `f` and reads the group's CPU around it.
pub fn timed(sampler: &Sampler, f: impl FnOnce() -> Result<(), String>) -> Result<Figures, String> {
    let before = sampler.snapshot();
    let t = Instant::now();
    f()?;
    let wall = ms(t.elapsed());
    let split = sampler.delta(&before, &sampler.snapshot()).groups[0];
    Ok(Figures {
        wall,
        runtime: split.runtime,
        proxy: split.proxy,
    })
}

/// The isolate's own CPU in a profile, in ms: its samples that are not `(idle)`, each standing
/// for the median gap between consecutive samples within bursts (`profile::us_per_sample`). V8
/// samples an isolate only while a thread has it entered, so the other samples are time the
/// isolate ran, in JavaScript, wasm, the garbage collector or V8's and workerd's C++ under it.
pub fn isolate_ms(profile: &Json, interval_us: u64) -> Result<Isolate, String> {
    let parsed = Profile::parse(profile)?;
    let busy = parsed
        .samples
        .iter()
        .filter(|&&leaf| parsed.frames[leaf].name != "(idle)")
        .count();
    let weight = profile::us_per_sample(&[(String::new(), profile.clone())], interval_us);
    Ok(Isolate {
        ms: busy as f64 * weight / 1000.0,
        samples: busy,
    })
}

/// The Worker isolate's CPU for one request, and how many samples it stands on.
#[derive(Debug, Clone, Copy)]
pub struct Isolate {
    pub ms: f64,
    pub samples: usize,
}

/// `timed` inside a V8 profile of the isolate; returns the figures, the isolate's CPU in ms and
/// the raw profile.
pub fn profiled(
    session: &mut Session,
    interval_us: u64,
    sampler: &Sampler,
    f: impl FnOnce() -> Result<(), String>,
) -> Result<(Figures, Isolate, Json), String> {
    session.call("Profiler.start", json!({}))?;
    let figures = timed(sampler, f)?;
    let mut stopped = session.call("Profiler.stop", json!({}))?;
    let profile = stopped["profile"].take();
    Ok((figures, isolate_ms(&profile, interval_us)?, profile))
}

/// One start's figures.
#[derive(Debug, Default, Clone)]
struct Start {
    /// Spawn to wrangler's `Ready on`, ms.
    ready: f64,
    /// The runtime workerd's CPU from its start to `Ready on` (ticks, 10 ms), ms.
    ready_cpu: f64,
    idle: bool,
    opener: Option<Figures>,
    first: Figures,
    second: Figures,
    /// Medians over the warm calls.
    warm: Figures,
    /// The isolate's CPU (profiled starts only): the opener's, the first and second call's.
    isolate: Option<[Option<Isolate>; 3]>,
}

/// Makes each variant's template database: one start on it, the get_state project seeded (or,
/// for the floor, its query run once, so its database file exists), every kind's request sent
/// once, then stopped. Every timed start copies it.
pub fn prepare(
    wrangler: &Path,
    work: &Path,
    name: &str,
    dir: &Path,
    kinds: &[Kind],
) -> Result<PathBuf, String> {
    let template = work.join(format!("{name}-template"));
    fs::create_dir_all(&template).map_err(|e| e.to_string())?;
    let log = work.join(format!("{name}-prepare.log"));
    let mut dev = Dev::start(wrangler, dir, &template, &log)?;
    dev.wait_ready()?;
    let floor = name == "floor";
    let base = dev.base();
    if !floor {
        load::seed(&base)?;
    }
    for &kind in kinds {
        let mut client = Client::new(kind, floor, base.clone());
        client.open()?;
        client.call()?;
    }
    drop(dev);
    Ok(template)
}

/// Starts one variant on a copy of its template database and measures one kind, with V8's
/// profiler on the isolate or with nothing attached to it.
fn measure_start(
    opts: &Options,
    variant: (&str, &Path, &Path),
    kind: Kind,
    profile: bool,
    n: usize,
) -> Result<Start, String> {
    let (name, dir, template) = variant;
    let tag = format!(
        "{name}-{}-{}-{n}",
        kind.name(),
        if profile { "isolate" } else { "plain" }
    );
    let state = opts.work.join(format!("{tag}-state"));
    copy_tree(template, &state)?;
    let log = opts.work.join(format!("{tag}.log"));
    let mut dev = Dev::start(&opts.wrangler, dir, &state, &log)?;
    let ready = dev.wait_ready()?;
    let runtime = cpu::runtime_pid(dev.pgid()).ok_or("no runtime workerd")?;
    let ready_cpu = cpu::process_cpu_ms(runtime).unwrap_or(0.0);
    thread::sleep(SETTLE);
    let mut session = own_session(dev.pgid())?;
    // A plain start closes it here: nothing is attached to the isolate then.
    let mut session = if profile {
        session.call("Profiler.enable", json!({}))?;
        session.call(
            "Profiler.setSamplingInterval",
            json!({ "interval": opts.interval_us }),
        )?;
        Some(session)
    } else {
        None
    };
    let (_, idle) = wait_idle(runtime);
    let sampler = Sampler::new(vec![dev.pgid()]);
    let mut client = Client::new(kind, name == "floor", dev.base());
    let mut start = Start {
        ready: ms(ready),
        ready_cpu,
        idle,
        ..Start::default()
    };
    if let Some(session) = &mut session {
        let mut isolate = [None; 3];
        if kind.opener().is_some() {
            let (f, i, _) = profiled(session, opts.interval_us, &sampler, || client.open())?;
            start.opener = Some(f);
            isolate[0] = Some(i);
        }
        let (f, i, _) = profiled(session, opts.interval_us, &sampler, || client.call())?;
        start.first = f;
        isolate[1] = Some(i);
        let (f, i, _) = profiled(session, opts.interval_us, &sampler, || client.call())?;
        start.second = f;
        isolate[2] = Some(i);
        start.isolate = Some(isolate);
    } else {
        if kind.opener().is_some() {
            start.opener = Some(timed(&sampler, || client.open())?);
        }
        start.first = timed(&sampler, || client.call())?;
        start.second = timed(&sampler, || client.call())?;
    }
    let mut warm = Vec::with_capacity(opts.warm);
    for _ in 0..opts.warm {
        warm.push(timed(&sampler, || client.call())?);
    }
    let column = |f: fn(&Figures) -> f64| median(&warm.iter().map(f).collect::<Vec<_>>());
    start.warm = Figures {
        wall: column(|f| f.wall),
        runtime: column(|f| f.runtime),
        proxy: column(|f| f.proxy),
    };
    drop(client);
    drop(session);
    drop(dev);
    let _ = fs::remove_dir_all(&state);
    let _ = fs::remove_file(&log);
    Ok(start)
}

/// Every start of one variant and kind.
#[derive(Default)]
struct Cell {
    plain: Vec<Start>,
    profiled: Vec<Start>,
}

pub fn run(opts: &Options) -> Result<String, String> {
    let began = Instant::now();
    let mut templates = Vec::new();
    for (name, dir) in &opts.variants {
        eprintln!("[coldstart] preparing {name}'s database");
        templates.push(prepare(&opts.wrangler, &opts.work, name, dir, &opts.kinds)?);
    }
    // Every variant and kind, plain and profiled, in one list that each round runs in the order
    // `load::round_order` gives it.
    let mut items = Vec::new();
    for vi in 0..opts.variants.len() {
        for ki in 0..opts.kinds.len() {
            for profile in [false, true] {
                items.push((vi, ki, profile));
            }
        }
    }
    let mut cells: Vec<Vec<Cell>> = opts
        .variants
        .iter()
        .map(|_| opts.kinds.iter().map(|_| Cell::default()).collect())
        .collect();
    let rounds = opts.starts.max(opts.isolate_starts);
    let total = opts.variants.len() * opts.kinds.len() * (opts.starts + opts.isolate_starts);
    let mut done = 0;
    let mut not_idle = 0;
    let mut again = Vec::new();
    for round in 0..rounds {
        for i in load::round_order(round, items.len()) {
            let (vi, ki, profile) = items[i];
            let wanted = if profile {
                opts.isolate_starts
            } else {
                opts.starts
            };
            if round >= wanted {
                continue;
            }
            let (name, dir) = &opts.variants[vi];
            let kind = opts.kinds[ki];
            let variant = (name.as_str(), dir.as_path(), templates[vi].as_path());
            // A start that fails (the local runtime now and then replaces a Worker under a
            // request, and says "Your worker restarted mid-request") is started again once.
            let s = match measure_start(opts, variant, kind, profile, round) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!(
                        "[coldstart] {name} {} failed ({e}); starting it again",
                        kind.name()
                    );
                    again.push(e.replace(TOKEN, "<token>"));
                    measure_start(opts, variant, kind, profile, round)?
                }
            };
            done += 1;
            not_idle += usize::from(!s.idle);
            let isolate = s.isolate.and_then(|i| i[1]).map_or(String::new(), |i| {
                format!(", isolate {:.1} in {} samples", i.ms, i.samples)
            });
            eprintln!(
                "[coldstart] {done}/{total} {:<9} {name:<10} {}: ready {:.0} ms, first {:.1} ms \
                 (runtime {:.1}, proxy {:.1}{isolate}), second {:.1}, warm {:.1}  [{:.0} s]",
                kind.name(),
                if profile { "profiled" } else { "plain   " },
                s.ready,
                s.first.wall,
                s.first.runtime,
                s.first.proxy,
                s.second.wall,
                s.warm.wall,
                began.elapsed().as_secs_f64(),
            );
            let cell = &mut cells[vi][ki];
            if profile {
                cell.profiled.push(s);
            } else {
                cell.plain.push(s);
            }
        }
    }
    let mut out = report(opts, &cells, not_idle, began.elapsed());
    if !again.is_empty() {
        out.push_str(&format!(
            "\n{} start(s) failed and were started again, each once: {}.\n",
            again.len(),
            again.join("; ")
        ));
    }
    Ok(out)
}

/// `median (low–high)` of one figure over some starts.
fn col(starts: &[Start], f: impl Fn(&Start) -> Option<f64>, d: usize) -> String {
    let v: Vec<f64> = starts.iter().filter_map(f).collect();
    if v.is_empty() {
        "—".to_owned()
    } else {
        spread(&v, d)
    }
}

fn med(starts: &[Start], f: impl Fn(&Start) -> Option<f64>) -> f64 {
    median(&starts.iter().filter_map(f).collect::<Vec<_>>())
}

/// This median ÷ the floor's, or a dash.
fn ratio(this: f64, floor: Option<f64>) -> String {
    match floor {
        Some(f) if f > 0.0 && this.is_finite() => format!("{:.2}", this / f),
        _ => "—".to_owned(),
    }
}

fn report(opts: &Options, cells: &[Vec<Cell>], not_idle: usize, took: Duration) -> String {
    let floor = opts.variants.iter().position(|(n, _)| n == "floor");
    type Pick = fn(&Start) -> Option<f64>;
    let first_wall: Pick = |s| Some(s.first.wall);
    let first_runtime: Pick = |s| Some(s.first.runtime);
    let first_workerd: Pick = |s| Some(s.first.runtime + s.first.proxy);
    let first_isolate: Pick = |s| s.isolate.and_then(|i| i[1]).map(|i| i.ms);
    let first_samples: Pick = |s| s.isolate.and_then(|i| i[1]).map(|i| i.samples as f64);
    let floor_med = |ki: usize, plain: bool, f: Pick| {
        floor.map(|fi| {
            let c = &cells[fi][ki];
            med(if plain { &c.plain } else { &c.profiled }, f)
        })
    };

    let mut first = Table::new(&[
        "kind",
        "variant",
        "first call, ms",
        "÷ floor",
        "its runtime workerd CPU, ms",
        "÷ floor",
        "runtime + proxy workerd CPU, ms",
        "÷ floor",
        "Worker isolate CPU (profiled starts), ms",
        "÷ floor",
        "busy samples behind it",
    ]);
    let mut around = Table::new(&[
        "kind",
        "variant",
        "spawn → Ready, ms",
        "runtime workerd CPU until Ready, ms",
        "opener, ms",
        "opener's runtime CPU, ms",
        "opener's isolate CPU, ms",
        "second call, ms",
        "its runtime CPU, ms",
        "its isolate CPU, ms",
        "warm call, ms",
        "warm runtime CPU, ms",
    ]);
    let mut targets = Table::new(&[
        "first call of",
        "variant",
        "wall ÷ floor",
        "runtime workerd CPU ÷ floor",
        "runtime + proxy CPU ÷ floor",
        "all three ≤ 1.50",
    ]);
    let mut overhead = Vec::new();
    for (ki, kind) in opts.kinds.iter().enumerate() {
        for (vi, (name, _)) in opts.variants.iter().enumerate() {
            let c = &cells[vi][ki];
            let (p, q) = (&c.plain, &c.profiled);
            let r = |starts: &[Start], plain: bool, f: Pick| {
                if Some(vi) == floor {
                    String::new()
                } else {
                    ratio(med(starts, f), floor_med(ki, plain, f))
                }
            };
            first.row(vec![
                kind.name().to_owned(),
                name.clone(),
                col(p, first_wall, 1),
                r(p, true, first_wall),
                col(p, first_runtime, 2),
                r(p, true, first_runtime),
                col(p, first_workerd, 2),
                r(p, true, first_workerd),
                col(q, first_isolate, 2),
                r(q, false, first_isolate),
                col(q, first_samples, 0),
            ]);
            let opener = |f: fn(&Figures) -> f64| move |s: &Start| s.opener.as_ref().map(f);
            around.row(vec![
                kind.name().to_owned(),
                name.clone(),
                col(p, |s| Some(s.ready), 0),
                col(p, |s| Some(s.ready_cpu), 0),
                col(p, opener(|f| f.wall), 1),
                col(p, opener(|f| f.runtime), 2),
                col(q, |s| s.isolate.and_then(|i| i[0]).map(|i| i.ms), 2),
                col(p, |s| Some(s.second.wall), 1),
                col(p, |s| Some(s.second.runtime), 2),
                col(q, |s| s.isolate.and_then(|i| i[2]).map(|i| i.ms), 2),
                col(p, |s| Some(s.warm.wall), 1),
                col(p, |s| Some(s.warm.runtime), 2),
            ]);
            if Some(vi) != floor && floor.is_some() {
                let rs: Vec<f64> = [first_wall, first_runtime, first_workerd]
                    .iter()
                    .map(|f| med(p, *f) / floor_med(ki, true, *f).unwrap_or(f64::NAN))
                    .collect();
                targets.row(vec![
                    kind.name().to_owned(),
                    name.clone(),
                    format!("{:.2}", rs[0]),
                    format!("{:.2}", rs[1]),
                    format!("{:.2}", rs[2]),
                    if rs.iter().all(|r| *r <= 1.5) {
                        "yes"
                    } else {
                        "no"
                    }
                    .to_owned(),
                ]);
            }
            if !q.is_empty() && !p.is_empty() {
                overhead.push(format!(
                    "{} {name} {:.2} → {:.2} ms",
                    kind.name(),
                    med(p, first_runtime),
                    med(q, first_runtime)
                ));
            }
        }
    }
    let openers: Vec<String> = opts
        .kinds
        .iter()
        .filter_map(|k| k.opener().map(|o| format!("{}: {o}", k.name())))
        .collect();
    let mut out = format!(
        "Cold starts (`bench coldstart`, {:.0} s): for each variant and kind, {} starts with \
         nothing attached to the Worker's isolate and {} with V8's profiler on it, all in one \
         rotation (`load::round_order` over every variant, kind and mode, so neighbours in time \
         change from round to round). A start is a new `wrangler dev` on a prebuilt bundle \
         (nothing is built on the way) and a copy of one prepared database. It is ready when \
         wrangler prints `Ready on` (log level info): the runtime has loaded the Worker and run \
         its top-level code (the wasm module compiled and instantiated), and no request has \
         reached it. Then {} ms to let wrangler's inspector proxy attach, one inspector session \
         of ours on the isolate, which makes workerd drop wrangler's (so no DevTools domain is \
         on, as in production; the plain starts then close ours too), and a wait until the \
         runtime workerd spends under {} µs of CPU in {} ms ({not_idle} of the starts never got \
         there within {} s and ran anyway). Then the kind's requests on one connection: its \
         opener where it has one ({}), the first call, the second, and {} warm calls (their \
         median).\n\n\
         Wall time is the client's, from sending the request to reading its whole reply (for \
         sse, to the reply event on the stream). Runtime and proxy CPU are the two workerd \
         processes' (the one that runs the Worker, its D1 and every other isolate, and the one \
         in front that owns the port), summed over their threads from `/proc/<pid>/task/*/\
         schedstat` in ns, read just before the request and just after its reply. The Worker \
         isolate's CPU is taken in the profiled starts: `Profiler.start` just before the \
         request and `Profiler.stop` after, V8 asked to sample every {} µs, and the isolate's \
         time is its samples that are not `(idle)` times the median gap between samples in \
         bursts (V8 samples an isolate only while it is entered, and seldom keeps the interval \
         asked for). V8's sampling thread competes for the cores with everything else, so on \
         a busy machine samples are lost and this figure reads low: the busy samples behind \
         it are beside it. The profiler costs CPU of its own (a sampling thread in the runtime \
         and a signal per sample), so the profiled starts' wall and /proc figures are not \
         used; their first call's runtime CPU, plain → profiled: {}.\n\n\
         The floor Worker answers every request of every kind with its one `SELECT 1` (it reads \
         the path only for /healthz, /statement and /batch), so each kind's floor is the floor \
         sent the same requests. Medians over the starts, the range beside them; ÷ floor is the \
         ratio of the medians.\n\n### The first call\n\n{}",
        took.as_secs_f64(),
        opts.starts,
        opts.isolate_starts,
        SETTLE.as_millis(),
        QUIET.as_micros(),
        WINDOW.as_millis(),
        IDLE_LIMIT.as_secs(),
        if openers.is_empty() {
            "none here".to_owned()
        } else {
            openers.join("; ")
        },
        opts.warm,
        opts.interval_us,
        if overhead.is_empty() {
            "none measured".to_owned()
        } else {
            overhead.join(", ")
        },
        first.render(),
    );
    out.push_str(&format!(
        "\n### Around it: the start, the opener, the second call, warm calls\n\n\
         The opener is the isolate's first request where a kind has one; \"spawn → Ready\" is \
         wrangler's start, mostly node and workerd, not the Worker.\n\n{}",
        around.render()
    ));
    if floor.is_some() {
        out.push_str(&format!(
            "\n### Against the targets (first call ≤ 1.5 × the floor's)\n\n{}",
            targets.render()
        ));
    }
    out
}
