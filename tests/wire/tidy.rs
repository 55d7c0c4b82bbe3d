//! Invariants a machine checks: ARCHITECTURE.md's absences, enforced by reading the source.
//! Each rule names what must not appear where, and the only file allowed to hold it. Comment
//! lines and a file's `#[cfg(test)]` module are not searched: they describe, they do not do.

use std::fs;
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// Every .rs file under src/, with its code lines (1-based numbers).
fn sources() -> Vec<(String, Vec<(usize, String)>)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(Path::new(SRC), &mut files);
    files.sort();
    assert!(files.len() > 20, "src/ should hold the crate");
    files
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(SRC)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = fs::read_to_string(&path).unwrap();
            let code = text
                .lines()
                .enumerate()
                .take_while(|(_, line)| line.trim() != "#[cfg(test)]")
                .filter(|(_, line)| !line.trim_start().starts_with("//"))
                .map(|(i, line)| (i + 1, line.to_owned()))
                .collect();
            (name, code)
        })
        .collect()
}

/// The lines outside `allowed` (file names or folder prefixes) where `found` holds.
fn offenders(allowed: &[&str], found: impl Fn(&str) -> bool) -> Vec<String> {
    sources()
        .into_iter()
        .filter(|(name, _)| !allowed.iter().any(|a| name == a || name.starts_with(a)))
        .flat_map(|(name, lines)| {
            lines
                .into_iter()
                .filter(|(_, line)| found(line))
                .map(move |(n, line)| format!("src/{name}:{n}: {}", line.trim()))
        })
        .collect()
}

fn assert_none(rule: &str, found: Vec<String>) {
    assert!(found.is_empty(), "{rule}:\n{}", found.join("\n"));
}

#[test]
fn sql_lives_in_the_store_only() {
    let sql = |line: &str| {
        [
            "SELECT ",
            "INSERT INTO",
            "UPDATE ",
            "DELETE FROM",
            "CREATE TABLE",
            "CREATE INDEX",
            "ALTER TABLE",
            "PRAGMA",
            "BEGIN",
            "COMMIT",
        ]
        .iter()
        .any(|kw| {
            line.contains(&format!("\"{kw}"))
                || line.contains(&format!(" {kw}")) && line.contains('"')
        })
    };
    // sqlite.rs is the test adapter standing in for D1: it turns on foreign keys as D1 does.
    assert_none(
        "SQL outside store.rs",
        offenders(&["store.rs", "store/", "sqlite.rs"], sql),
    );
}

#[test]
fn protocol_versions_live_in_version_rs_only() {
    let date_literal = |line: &str| {
        let bytes = line.as_bytes();
        bytes.windows(12).any(|w| {
            w[0] == b'"'
                && w[1..5].iter().all(u8::is_ascii_digit)
                && w[5] == b'-'
                && w[6..8].iter().all(u8::is_ascii_digit)
                && w[8] == b'-'
                && w[9..11].iter().all(u8::is_ascii_digit)
                && w[11] == b'"'
        })
    };
    assert_none(
        "a protocol version string outside protocol/version.rs",
        offenders(&["protocol/version.rs"], date_literal),
    );
}

#[test]
fn json_rpc_codes_live_in_the_error_module_only() {
    let code = |line: &str| {
        line.match_indices("-32").any(|(i, _)| {
            line[i + 3..]
                .chars()
                .take(3)
                .filter(char::is_ascii_digit)
                .count()
                == 3
        })
    };
    assert_none(
        "a JSON-RPC code literal outside error.rs",
        offenders(&["error.rs"], code),
    );
    assert_none(
        "a JSON-RPC error body built outside error.rs",
        offenders(&["error.rs", "jsonrpc.rs"], |l| {
            l.contains("jsonrpc::error(")
        }),
    );
}

#[test]
fn only_the_shell_names_worker() {
    assert_none(
        "worker:: outside src/worker/",
        offenders(&["worker/"], |l| l.contains("worker::")),
    );
}

#[test]
fn binding_and_variable_names_live_in_config_rs_only() {
    let config = fs::read_to_string(format!("{SRC}/config.rs")).unwrap();
    let names: Vec<String> = config
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const "))
        .filter_map(|l| l.split_once("&str = \"").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_once('"').map(|(name, _)| format!("\"{name}\"")))
        .collect();
    assert!(names.len() >= 4, "{names:?}");
    assert_none(
        "a binding or variable name outside config.rs",
        offenders(&["config.rs"], |l| {
            names.iter().any(|n| l.contains(n.as_str()))
        }),
    );
    // And the other way: every binding and var wrangler.toml declares is named in config.rs.
    let wrangler =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/wrangler.toml")).unwrap();
    let mut in_vars = false;
    let mut in_ratelimits = false;
    for line in wrangler.lines().map(str::trim) {
        if line.starts_with('[') {
            in_vars = line == "[vars]";
            in_ratelimits = line == "[[ratelimits]]";
        }
        let declared = if let Some(rest) = line.strip_prefix("binding = \"") {
            rest.split('"').next()
        } else if let Some(rest) = line.strip_prefix("name = \"").filter(|_| in_ratelimits) {
            rest.split('"').next()
        } else if let Some((_, rest)) = line.split_once("{ name = \"") {
            rest.split('"').next()
        } else if in_vars && line.contains(" = ") && !line.starts_with('#') {
            line.split(' ').next()
        } else {
            None
        };
        if let Some(name) = declared {
            assert!(
                names.contains(&format!("\"{name}\"")),
                "wrangler.toml declares {name}, which config.rs does not name"
            );
        }
    }
}

#[test]
fn credentials_are_read_and_compared_in_one_place_each() {
    assert_none(
        "a token comparison outside config.rs",
        offenders(&["config.rs"], |l| l.contains("constant_time_eq(")),
    );
    assert_none(
        "the Authorization header read outside http.rs",
        offenders(&["http.rs"], |l| {
            l.to_ascii_lowercase().contains("\"authorization\"")
        }),
    );
    // A client that finds OAuth metadata starts a flow this server does not offer.
    assert_none(
        "OAuth metadata served",
        offenders(&[], |l| {
            l.contains("well-known") || l.contains("resource_metadata")
        }),
    );
}

#[test]
fn page_markup_comes_from_literals_only() {
    // `web::html::Html::raw` takes `&'static str`: a leaked String is the one way a stored
    // string could pass as markup, so nothing in src/ leaks one.
    assert_none(
        "a leaked string (it could reach a page as markup)",
        offenders(&[], |l| l.contains(".leak(") || l.contains("Box::leak")),
    );
    // And only html.rs writes into a page's buffer; the other web files go through `Html`.
    assert_none(
        "a page buffer written outside web/html.rs",
        offenders(&["web/html.rs"], |l| l.contains(".0.push")),
    );
}
