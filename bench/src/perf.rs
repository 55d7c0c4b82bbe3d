//! The whole runtime process under Linux `perf` (software clock, no hardware counters needed):
//! where its CPU goes by component, C++ included, which V8's profiler cannot see (it samples an
//! isolate only while one is entered). Used by `bench profile` when `perf` is on PATH. Runs
//! `perf record` on one process id for one phase and `perf report` on the result; must not
//! touch the process otherwise.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

/// One sample per this many nanoseconds of CPU (`cpu-clock` with a fixed period), so a sample
/// is exactly this much CPU time.
pub const PERIOD_NS: u64 = 250_000;

/// Whether `perf record` works here (installed, and allowed to sample this user's processes).
pub fn available() -> bool {
    Command::new("perf")
        .args([
            "record",
            "-q",
            "-e",
            "cpu-clock",
            "-o",
            "/dev/null",
            "--",
            "true",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A `perf record` running on one process.
pub struct Recording {
    child: Child,
}

impl Recording {
    pub fn start(pid: i32, out: &Path) -> Result<Recording, String> {
        let child = Command::new("perf")
            .args([
                "record",
                "-q",
                "-e",
                "cpu-clock",
                "-c",
                &PERIOD_NS.to_string(),
            ])
            .args(["-p", &pid.to_string(), "-o"])
            .arg(out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("perf record: {e}"))?;
        // perf attaches to every thread before it counts; the phase must not start earlier.
        thread::sleep(Duration::from_millis(300));
        Ok(Recording { child })
    }

    /// Stops the recording (SIGINT, as perf expects) and waits for the file to be written.
    pub fn stop(mut self) -> Result<(), String> {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        self.child.wait().map_err(|e| e.to_string())?;
        Ok(())
    }
}

/// Samples by component and by symbol, from `perf report` of one recording.
#[derive(Default)]
pub struct Samples {
    pub by_component: HashMap<&'static str, u64>,
    pub by_symbol: HashMap<String, u64>,
}

impl Samples {
    pub fn add(&mut self, other: &Samples) {
        for (k, v) in &other.by_component {
            *self.by_component.entry(k).or_default() += v;
        }
        for (k, v) in &other.by_symbol {
            *self.by_symbol.entry(k.clone()).or_default() += v;
        }
    }
}

/// Reads a recording: `perf report` lines of `samples dso [k|.] symbol`.
pub fn report(data: &Path) -> Result<Samples, String> {
    let out = Command::new("perf")
        .args(["report", "-i"])
        .arg(data)
        .args(["--stdio", "-q", "--sort", "dso,sym", "-F", "sample,dso,sym"])
        .args(["--percent-limit", "0"])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("perf report: {e}"))?;
    let mut samples = Samples::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some((count, dso, kernel, symbol)) = parse_line(line) {
            *samples
                .by_component
                .entry(component(dso, kernel, symbol))
                .or_default() += count;
            // JIT code has no symbols, only addresses: one row for all of it.
            let symbol = if dso.starts_with("[JIT]") {
                "(JIT code)"
            } else {
                symbol
            };
            *samples.by_symbol.entry(symbol.to_owned()).or_default() += count;
        }
    }
    Ok(samples)
}

/// `   12  workerd   [.] v8::internal::Foo` → (12, "workerd", false, "v8::internal::Foo").
fn parse_line(line: &str) -> Option<(u64, &str, bool, &str)> {
    let line = line.trim_start();
    let (count, rest) = line.split_once(char::is_whitespace)?;
    let count = count.parse().ok()?;
    let (marker, kernel) = match (rest.find(" [k] "), rest.find(" [.] ")) {
        (Some(i), _) => (i, true),
        (None, Some(i)) => (i, false),
        (None, None) => return None,
    };
    Some((
        count,
        rest[..marker].trim(),
        kernel,
        rest[marker + 5..].trim(),
    ))
}

/// The component a symbol belongs to.
fn component(dso: &str, kernel: bool, symbol: &str) -> &'static str {
    if kernel {
        "kernel (syscalls, scheduling, loopback TCP)"
    } else if dso.starts_with("[JIT]") {
        "JIT code: our wasm and all JavaScript"
    } else if symbol.starts_with("Builtins_") {
        "V8 builtins (calls between wasm, JS and C++; ICs)"
    } else if symbol.contains("tcmalloc") || symbol.contains("TCMalloc") {
        "malloc (tcmalloc)"
    } else if [
        "compiler::",
        "turboshaft",
        "maglev",
        "Liftoff",
        "WasmFullDecoder",
        "wasm::Compil",
    ]
    .iter()
    .any(|p| symbol.contains(p))
    {
        "V8 compilers (tier-up, on background threads too)"
    } else if [
        "Scaveng",
        "MarkCompact",
        "Marking",
        "Sweep",
        "Heap::",
        "GlobalHandles",
        "Traced",
        "Weak",
    ]
    .iter()
    .any(|p| symbol.contains(p))
    {
        "V8 garbage collection and handles"
    } else if symbol.contains("Json") {
        "V8 JSON (parse, stringify)"
    } else if ["Utf8", "unibrow::", "String", "CopyChars"]
        .iter()
        .any(|p| symbol.contains(p))
    {
        "V8 strings (UTF-8 in and out)"
    } else if symbol.contains("v8::") {
        "V8 runtime, the rest (objects, properties, API calls)"
    } else if symbol.contains("workerd::jsg") {
        "workerd's JS bindings (jsg)"
    } else if symbol.contains("sqlite3") {
        "SQLite"
    } else if symbol.contains("workerd::") {
        "workerd's APIs and I/O"
    } else if symbol.contains("kj::") || symbol.contains("capnp") {
        "kj and capnp (event loop, RPC, HTTP)"
    } else if dso.starts_with("libc") {
        "libc (memcpy, locks)"
    } else {
        "other"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_lines() {
        assert_eq!(
            parse_line("    12  workerd           [.] v8::internal::Factory::New"),
            Some((12, "workerd", false, "v8::internal::Factory::New"))
        );
        assert_eq!(
            parse_line("     9  [JIT] tid 2901     [.] 0x000028df2f543540"),
            Some((9, "[JIT] tid 2901", false, "0x000028df2f543540"))
        );
        assert_eq!(
            parse_line("  3  [kernel.kallsyms]  [k] finish_task_switch.isra.0"),
            Some((3, "[kernel.kallsyms]", true, "finish_task_switch.isra.0"))
        );
        assert_eq!(parse_line("# comment"), None);
        assert_eq!(
            component("[JIT] tid 1", false, "0x1"),
            "JIT code: our wasm and all JavaScript"
        );
    }
}
