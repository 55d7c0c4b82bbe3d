//! (c) CPU time read from /proc: the on-CPU time of every process in the watched `wrangler dev`
//! process groups, split into wrangler's node, workerd and anything else, plus this client and
//! the whole machine. Server processes are read per thread from `schedstat` (nanoseconds), not
//! from `stat` (10 ms ticks): a 100-request phase at concurrency 1 costs the runtime about
//! 300 ms, so ticks alone would blur a per-request figure by ±0.1 ms. Linux only. Must not
//! signal, wait for or otherwise touch those processes.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::Duration;

/// Who burnt the CPU inside a `wrangler dev` process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// wrangler itself (and miniflare, the inspector proxy) on Node.
    Node,
    /// The workerd that runs the Worker and its local D1 (the one wrangler attaches its
    /// inspector to).
    Runtime,
    /// The workerd in front of it that owns the public port and forwards each request.
    Proxy,
    /// Anything else in the group, e.g. a rebuild wrangler started because a source file changed.
    Other,
}

/// CPU milliseconds by class for one process group.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Split {
    pub node: f64,
    pub runtime: f64,
    pub proxy: f64,
    pub other: f64,
}

impl Split {
    /// Both workerd processes together.
    pub fn workerd(&self) -> f64 {
        self.runtime + self.proxy
    }

    pub fn total(&self) -> f64 {
        self.node + self.workerd() + self.other
    }

    /// Every part multiplied by `factor`, e.g. 1 / requests for a per-request split.
    pub fn scaled(&self, factor: f64) -> Split {
        Split {
            node: self.node * factor,
            runtime: self.runtime * factor,
            proxy: self.proxy * factor,
            other: self.other * factor,
        }
    }

    fn add(&mut self, class: Class, ms: f64) {
        match class {
            Class::Node => self.node += ms,
            Class::Runtime => self.runtime += ms,
            Class::Proxy => self.proxy += ms,
            Class::Other => self.other += ms,
        }
    }
}

/// The fields of `/proc/<pid>/stat` the sampler needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub pgrp: i32,
    /// utime + stime, in clock ticks.
    pub ticks: u64,
}

/// Parses `/proc/<pid>/stat`. The command name may hold spaces and parentheses, so fields are
/// counted from the last `)`: after it come state (field 3), ppid, pgrp (5), … utime (14) and
/// stime (15).
pub fn parse_stat(line: &str) -> Option<Stat> {
    let rest = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<i64>().ok());
    Some(Stat {
        pgrp: i32::try_from(field(5)?).ok()?,
        ticks: u64::try_from(field(14)? + field(15)?).ok()?,
    })
}

/// One watched process at one moment.
#[derive(Debug, Clone)]
struct Proc {
    group: usize,
    class: Class,
    /// utime + stime of the whole process (its exited threads included), in ticks.
    ticks: u64,
    /// Nanoseconds on CPU of each live thread, by thread id.
    threads: HashMap<i32, u64>,
}

/// One reading of every watched process, this process and the machine.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    procs: HashMap<i32, Proc>,
    client: u64,
    machine_busy: u64,
}

/// The CPU spent between two snapshots, in milliseconds.
#[derive(Debug, Clone, Default)]
pub struct Delta {
    /// One split per watched group, in the order the groups were given.
    pub groups: Vec<Split>,
    pub client: f64,
    /// Busy time of the whole machine (all cores).
    pub machine: f64,
}

impl Delta {
    /// Machine time that none of the watched groups nor this client account for: other
    /// engineers' builds, the kernel's own work, anything else competing for the two cores.
    pub fn foreign(&self) -> f64 {
        let ours: f64 = self.groups.iter().map(Split::total).sum::<f64>() + self.client;
        (self.machine - ours).max(0.0)
    }
}

pub struct Sampler {
    /// Process-group ids: `wrangler dev` is started with setsid, so its pid is its group's id.
    groups: Vec<i32>,
    ms_per_tick: f64,
}

impl Sampler {
    pub fn new(groups: Vec<i32>) -> Sampler {
        Sampler {
            groups,
            ms_per_tick: 1000.0 / clock_ticks_per_second(),
        }
    }

    /// Whether each group still has a live process; a group that is gone would read as zero CPU.
    pub fn check(&self) -> Result<(), String> {
        let snap = self.snapshot();
        for (i, pgid) in self.groups.iter().enumerate() {
            if !snap.procs.values().any(|p| p.group == i) {
                return Err(format!("no process in process group {pgid}"));
            }
        }
        Ok(())
    }

    /// What each group holds right now, e.g. `node×2 runtime×1 proxy×1 other×1`, so a run shows
    /// which processes its split is made of.
    pub fn describe(&self) -> Vec<String> {
        let snap = self.snapshot();
        (0..self.groups.len())
            .map(|i| {
                [Class::Node, Class::Runtime, Class::Proxy, Class::Other]
                    .iter()
                    .map(|class| {
                        let n = snap
                            .procs
                            .values()
                            .filter(|p| p.group == i && p.class == *class)
                            .count();
                        format!("{}×{n}", format!("{class:?}").to_lowercase())
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    pub fn snapshot(&self) -> Snapshot {
        let mut snap = Snapshot::default();
        if let Ok(entries) = fs::read_dir("/proc") {
            for entry in entries.flatten() {
                let Some(pid) = entry
                    .file_name()
                    .to_str()
                    .and_then(|s| s.parse::<i32>().ok())
                else {
                    continue;
                };
                // A process may exit between listing and reading; it is then simply not counted.
                let Some(stat) = read_stat(&entry.path()) else {
                    continue;
                };
                if let Some(group) = self.groups.iter().position(|g| *g == stat.pgrp) {
                    let proc = Proc {
                        group,
                        class: classify(&entry.path()),
                        ticks: stat.ticks,
                        threads: thread_times(&entry.path()),
                    };
                    snap.procs.insert(pid, proc);
                }
            }
        }
        snap.client = read_stat(Path::new("/proc/self")).map_or(0, |s| s.ticks);
        snap.machine_busy = machine_busy_ticks().unwrap_or(0);
        snap
    }

    /// CPU between two snapshots. A process that started in between counts from zero; one that
    /// exited in between is lost, which is why the phases are measured on warm servers. A
    /// process whose threads all lived through the interval is counted in nanoseconds; one that
    /// lost a thread meanwhile falls back to its ticks, which still hold the lost thread's time.
    pub fn delta(&self, before: &Snapshot, after: &Snapshot) -> Delta {
        let ms = |ticks: u64| ticks as f64 * self.ms_per_tick;
        let mut groups = vec![Split::default(); self.groups.len()];
        for (pid, now) in &after.procs {
            let spent = match before.procs.get(pid) {
                None => ms(now.ticks),
                Some(then) if then.threads.keys().all(|t| now.threads.contains_key(t)) => {
                    let ns: u64 = now
                        .threads
                        .iter()
                        .map(|(tid, ns)| {
                            ns.saturating_sub(then.threads.get(tid).copied().unwrap_or(0))
                        })
                        .sum();
                    ns as f64 / 1e6
                }
                Some(then) => ms(now.ticks.saturating_sub(then.ticks)),
            };
            groups[now.group].add(now.class, spent);
        }
        Delta {
            groups,
            client: ms(after.client.saturating_sub(before.client)),
            machine: ms(after.machine_busy.saturating_sub(before.machine_busy)),
        }
    }
}

fn read_stat(proc_dir: &Path) -> Option<Stat> {
    parse_stat(&fs::read_to_string(proc_dir.join("stat")).ok()?)
}

/// The first field of `/proc/<pid>/task/<tid>/schedstat`: nanoseconds on CPU, for each thread.
fn thread_times(proc_dir: &Path) -> HashMap<i32, u64> {
    let Ok(tasks) = fs::read_dir(proc_dir.join("task")) else {
        return HashMap::new();
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let line = fs::read_to_string(task.path().join("schedstat")).ok()?;
            Some((tid, line.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// The CPU a process has used since it started (its exited threads included), in ms.
pub fn process_cpu_ms(pid: i32) -> Option<f64> {
    let stat = read_stat(Path::new(&format!("/proc/{pid}")))?;
    Some(stat.ticks as f64 * 1000.0 / clock_ticks_per_second())
}

/// Nanoseconds on CPU of a process's live threads, summed: enough to tell whether it is idle
/// (`coldstart` waits for the runtime to go quiet), not to account a phase (use `Sampler`).
pub fn threads_ns(pid: i32) -> u64 {
    thread_times(Path::new(&format!("/proc/{pid}")))
        .values()
        .sum()
}

/// The pid of the runtime workerd (the one that runs the Worker and its D1) in a process group.
pub fn runtime_pid(pgid: i32) -> Option<i32> {
    fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
        let stat = read_stat(&entry.path())?;
        (stat.pgrp == pgid && classify(&entry.path()) == Class::Runtime).then_some(pid)
    })
}

/// By executable, not by `comm`, because Node may rename its main thread. Of wrangler 4's two
/// workerd processes, the runtime is the one started with `--inspector-addr`.
fn classify(proc_dir: &Path) -> Class {
    let exe = fs::read_link(proc_dir.join("exe")).ok();
    let name = exe
        .as_deref()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .or_else(|| fs::read_to_string(proc_dir.join("comm")).ok())
        .unwrap_or_default();
    let name = name.trim();
    if name == "node" || name.starts_with("node") {
        Class::Node
    } else if name.starts_with("workerd") {
        let cmdline = fs::read(proc_dir.join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("--inspector-addr") {
            Class::Runtime
        } else {
            Class::Proxy
        }
    } else {
        Class::Other
    }
}

/// The first line of /proc/stat: user nice system idle iowait irq softirq steal …, in ticks.
/// Busy is everything but idle and iowait.
fn machine_busy_ticks() -> Option<u64> {
    let text = fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    Some(v.iter().sum::<u64>() - v.get(3)? - v.get(4)?)
}

/// How many cores the whole machine kept busy over `window` (sleeps for that long).
pub fn busy_cores(window: Duration) -> f64 {
    let ms_per_tick = 1000.0 / clock_ticks_per_second();
    let before = machine_busy_ticks().unwrap_or(0);
    thread::sleep(window);
    let after = machine_busy_ticks().unwrap_or(0);
    after.saturating_sub(before) as f64 * ms_per_tick / window.as_secs_f64() / 1000.0
}

/// USER_HZ, from `getconf` because std has no sysconf; 100 is what Linux uses everywhere else.
fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|hz| *hz > 0.0)
        .unwrap_or(100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_count_from_the_last_parenthesis() {
        let line = "4242 (node (wr) x) S 1 4240 4240 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 11 0";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                pgrp: 4240,
                ticks: 325
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn this_process_is_readable() {
        let stat = read_stat(Path::new("/proc/self")).expect("/proc/self/stat parses");
        assert!(stat.pgrp > 0);
        let threads = thread_times(Path::new("/proc/self"));
        assert!(!threads.is_empty() && threads.values().any(|ns| *ns > 0));
    }

    #[test]
    fn foreign_time_never_goes_negative() {
        let delta = Delta {
            groups: vec![Split {
                node: 10.0,
                runtime: 20.0,
                proxy: 10.0,
                other: 0.0,
            }],
            client: 20.0,
            machine: 50.0,
        };
        assert_eq!(delta.foreign(), 0.0);
    }
}
