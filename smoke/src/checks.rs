//! The check recorder: prints one line per check and keeps the tally; it knows nothing about HTTP or MCP.

use std::fmt::Debug;
use std::io::{self, Write};

/// Details longer than this are clipped so one failing check cannot bury the rest of the report.
const MAX_DETAILS: usize = 2000;

/// Counts passes and failures; every outcome is printed the moment it is recorded.
#[derive(Debug, Default)]
pub struct Checks {
    passed: usize,
    failed: usize,
}

impl Checks {
    /// Records one check: `Ok` prints `ok - name`, `Err` prints `FAIL - name: details`.
    pub fn record(&mut self, name: &str, outcome: Result<(), String>) {
        self.keep(name, outcome);
    }

    /// Records one check and hands back its value, so a later step that needs it can run or say why not.
    pub fn keep<T>(&mut self, name: &str, outcome: Result<T, String>) -> Option<T> {
        match outcome {
            Ok(value) => {
                self.passed += 1;
                say(&format!("ok - {name}"));
                Some(value)
            }
            Err(details) => {
                self.failed += 1;
                say(&format!("FAIL - {name}: {}", one_line(&details)));
                None
            }
        }
    }

    pub fn failed(&self) -> usize {
        self.failed
    }

    /// The closing line, in the `<name>: N passed, M failed` form that CI reads.
    pub fn summary(&self, name: &str) -> String {
        format!("{name}: {} passed, {} failed", self.passed, self.failed)
    }
}

/// Compares two values and, when they differ, says both in Rust's escaped form so that
/// invisible differences (newlines, full-width characters, trailing spaces) show.
pub fn expect_eq<T: PartialEq + Debug + ?Sized>(
    what: &str,
    expected: &T,
    actual: &T,
) -> Result<(), String> {
    if expected == actual {
        Ok(())
    } else {
        Err(format!("{what}: expected {expected:?}, got {actual:?}"))
    }
}

/// Turns a false condition into a failure with the given explanation.
pub fn ensure(condition: bool, explain: impl FnOnce() -> String) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(explain())
    }
}

/// Prints one line of the report. A closed stdout (the report piped into `head`) must not panic
/// the run; the exit code still carries the verdict.
pub fn say(line: &str) {
    let _ = writeln!(io::stdout().lock(), "{line}");
}

/// Keeps each report on its own line, as the output format promises, and bounds its length.
fn one_line(details: &str) -> String {
    let flat = details.replace('\r', "\\r").replace('\n', "\\n");
    clip(&flat, MAX_DETAILS)
}

/// Cuts text to at most `max` characters, on a character boundary, saying how much was dropped.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}… ({} more bytes)", &text[..cut], text.len() - cut),
        None => text.to_string(),
    }
}
