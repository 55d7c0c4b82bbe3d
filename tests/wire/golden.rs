//! Golden files: a response's exact bytes (status, headers in order, body) kept under
//! tests/golden/, so a page is pinned byte for byte as the contract text is. A golden is
//! refreshed on purpose, never by a test run alone: with `UPDATE_GOLDEN=1` in the environment,
//! `check` writes the file instead of comparing (`UPDATE_GOLDEN=1 cargo test --test wire`), and
//! `git diff tests/golden` shows what changed.

use std::fs;
use std::path::PathBuf;

use crate::support::Reply;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden");
/// The variable that turns comparing into rewriting.
const UPDATE: &str = "UPDATE_GOLDEN";
/// Characters shown either side of the first difference within a line: pages are mostly one
/// long line, so the whole line would bury it.
const WINDOW: usize = 70;

/// A response as its golden file holds it: `HTTP <status>`, one `name: value` line per header
/// in the order served, a blank line, then the body verbatim.
pub fn dump(reply: &Reply) -> String {
    let mut out = format!("HTTP {}\n", reply.status);
    for (name, value) in &reply.headers {
        out.push_str(&format!("{name}: {value}\n"));
    }
    out.push('\n');
    out.push_str(&reply.body);
    out
}

/// Compares `reply` with tests/golden/`name` (a path such as `pages/list.http`), or rewrites
/// that file when `UPDATE_GOLDEN=1`.
pub fn check(name: &str, reply: &Reply) {
    check_text(name, &dump(reply));
}

/// Compares `actual` with the golden file `name`, or rewrites it when `UPDATE_GOLDEN=1`.
pub fn check_text(name: &str, actual: &str) {
    let path = PathBuf::from(DIR).join(name);
    if std::env::var_os(UPDATE).is_some_and(|v| v == "1") {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, actual).unwrap();
        return;
    }
    let expected = fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("no golden {name} ({e}); make it with {UPDATE}=1 cargo test --test wire")
    });
    if let Some(difference) = first_difference(&expected, actual) {
        panic!(
            "the response differs from the golden {name} ({UPDATE}=1 cargo test --test wire \
             rewrites it, if the change is meant)\n{difference}"
        );
    }
}

/// Where two texts first part, said as the line and column and both versions around it; none
/// when they are the same.
fn first_difference(expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    // `split('\n')` rather than `lines()`: a trailing line break or a CR is a difference too.
    let mut golden = expected.split('\n');
    let mut response = actual.split('\n');
    for number in 1.. {
        let (g, r) = (golden.next(), response.next());
        if g == r {
            continue;
        }
        let column = g
            .unwrap_or("")
            .chars()
            .zip(r.unwrap_or("").chars())
            .take_while(|(a, b)| a == b)
            .count();
        let around = |line: Option<&str>| {
            let Some(line) = line else {
                return "(no such line)".to_owned();
            };
            let start = column.saturating_sub(WINDOW);
            let shown: String = line.chars().skip(start).take(2 * WINDOW).collect();
            let before = if start > 0 { "…" } else { "" };
            let after = if line.chars().count() > start + 2 * WINDOW {
                "…"
            } else {
                ""
            };
            format!("{before}{shown:?}{after}")
        };
        return Some(format!(
            "first difference at line {number}, column {}:\n  golden:   {}\n  response: {}",
            column + 1,
            around(g),
            around(r)
        ));
    }
    unreachable!("two different texts differ on some line")
}

#[test]
fn a_difference_is_said_at_its_line_and_column_with_both_versions() {
    assert_eq!(first_difference("a\nb", "a\nb"), None);
    assert_eq!(
        first_difference("HTTP 200\n\n<p>one</p>", "HTTP 200\n\n<p>two</p>").unwrap(),
        "first difference at line 3, column 4:\n  golden:   \"<p>one</p>\"\n  response: \"<p>two</p>\""
    );
    assert_eq!(
        first_difference("a\n", "a").unwrap(),
        "first difference at line 2, column 1:\n  golden:   \"\"\n  response: (no such line)"
    );
    // In a long line only the part around the difference is shown.
    let long = |c: char| format!("{}{c}{}", "x".repeat(200), "y".repeat(200));
    let shown = |c: char| format!("…{:?}…", format!("{}{c}{}", "x".repeat(70), "y".repeat(69)));
    assert_eq!(
        first_difference(&long('a'), &long('b')).unwrap(),
        format!(
            "first difference at line 1, column 201:\n  golden:   {}\n  response: {}",
            shown('a'),
            shown('b')
        )
    );
}
