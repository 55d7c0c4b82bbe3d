//! Invariants a machine checks: ARCHITECTURE.md's absences, enforced by reading the source.
//! Each rule names what must not appear where, and the only file allowed to hold it. Comment
//! lines and a file's `#[cfg(test)]` module are not searched: they describe, they do not do.

use std::fs;
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// Every file under `dir`, at any depth, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        match path.is_dir() {
            true => out.extend(files_under(&path)),
            false => out.push(path),
        }
    }
    out.sort();
    out
}

/// Every .rs file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = files_under(dir);
    files.retain(|path| path.extension().is_some_and(|e| e == "rs"));
    files
}

/// Every .rs file under src/, with its code lines (1-based numbers).
fn sources() -> Vec<(String, Vec<(usize, String)>)> {
    let files = rust_files(Path::new(SRC));
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
    offenders_in(&sources(), allowed, found)
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
        "SQL outside the store (store.rs, store/)",
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
        "a token comparison outside auth/credentials.rs",
        offenders(&["auth/credentials.rs"], |l| {
            l.contains("constant_time_eq(")
        }),
    );
    assert_none(
        "the Authorization header read outside http.rs and auth/check.rs",
        offenders(&["http.rs", "auth/check.rs"], |l| {
            l.to_ascii_lowercase().contains("\"authorization\"")
        }),
    );
    // A client that finds OAuth metadata starts a flow, so only the OAuth server names it, and
    // the path table that serves it only while OAuth is on.
    assert_none(
        "OAuth metadata named outside auth/oauth/ and route/",
        offenders(&["auth/oauth/", "route"], |l| {
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
    // And only html.rs (the builder) writes into a page's buffer; every page goes through
    // `Html`.
    assert_none(
        "a page buffer written outside html.rs",
        offenders(&["html.rs"], |l| l.contains(".0.push")),
    );
}

/// A source file as the rules read it: its name under src/ and its code lines.
type Source = (String, Vec<(usize, String)>);

/// The rows of the Markdown table that follows `heading` in ARCHITECTURE.md, as cells.
fn architecture_table(heading: &str) -> Vec<Vec<String>> {
    let text = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/ARCHITECTURE.md")).unwrap();
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no section {heading:?}"));
    section
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .skip(1)
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

/// The names in backticks in a table cell.
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The module a file of src/ belongs to: its first path segment (`store/rows.rs` is `store`),
/// or for the files of `auth/`, which sit in different bands, `auth::` and their own
/// (`auth/oauth/client.rs` is `auth::oauth`; `auth/mod.rs`, which only declares them, `auth`).
fn module_of(file: &str) -> String {
    let mut segments = file.split('/');
    let first = segments.next().unwrap_or_default();
    let stem = |s: &str| s.strip_suffix(".rs").unwrap_or(s).to_owned();
    match (stem(first).as_str(), segments.next()) {
        ("auth", Some("mod.rs")) | ("auth", None) => "auth".into(),
        ("auth", Some(second)) => format!("auth::{}", stem(second)),
        (module, _) => module.into(),
    }
}

/// The crate modules a file's code names (`crate::x`, `use crate::{x, y::z}`, `crate::auth::y`
/// as `auth::y`), its own aside.
fn imports(source: &Source) -> Vec<(usize, String)> {
    let own = module_of(&source.0);
    let mut found = Vec::new();
    let lines = &source.1;
    let name_of = |text: &str| -> String {
        let name: String = text
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        match name.as_str() {
            "auth" => {
                let rest = text.trim().strip_prefix("auth::").unwrap_or_default();
                let inner: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if inner.is_empty() {
                    name
                } else {
                    format!("auth::{inner}")
                }
            }
            _ => name,
        }
    };
    for (i, (n, line)) in lines.iter().enumerate() {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let group = rest
                .strip_prefix('{')
                .or_else(|| rest.strip_prefix("auth::{"));
            if let Some(group) = group {
                let within_auth = rest.starts_with("auth::");
                // A group may run over several lines: read on to its closing brace.
                let mut text = group.to_owned();
                let mut more = lines[i + 1..].iter();
                while !text.contains('}') {
                    match more.next() {
                        Some((_, next)) => text.push_str(next),
                        None => break,
                    }
                }
                let inner = text.split('}').next().unwrap_or_default();
                for item in inner.split(',') {
                    let name = name_of(item);
                    found.push((
                        *n,
                        match within_auth && !name.is_empty() && name != "self" {
                            true => format!("auth::{name}"),
                            false => name,
                        },
                    ));
                }
            } else {
                found.push((*n, name_of(rest)));
            }
        }
    }
    found.retain(|(_, name)| !name.is_empty() && *name != own && name != "self");
    found
}

/// Every import that does not go down the bands of ARCHITECTURE.md's "Bands" (to a lower band,
/// or within its own band to a module listed before it), and every module of src/ the table
/// does not place.
fn layering_offenders(sources: &[Source], bands: &[Band]) -> Vec<String> {
    let band = |module: &str| bands.iter().find(|b| b.module == module);
    let mut found = Vec::new();
    for source in sources.iter().filter(|(name, _)| name != "lib.rs") {
        let module = module_of(&source.0);
        let Some(own) = band(&module) else {
            found.push(format!("src/{}: module {module} is in no band", source.0));
            continue;
        };
        for (n, import) in imports(source) {
            match band(&import) {
                Some(theirs) if (theirs.band, theirs.place) < (own.band, own.place) => {}
                Some(theirs) => found.push(format!(
                    "src/{}:{n}: {module} ({}) imports {import} ({}{})",
                    source.0,
                    own.name,
                    theirs.name,
                    if theirs.band == own.band {
                        ", listed after it"
                    } else {
                        ""
                    }
                )),
                None => found.push(format!("src/{}:{n}: {import} is in no band", source.0)),
            }
        }
    }
    found
}

/// A module's place in the bands: the band's name and order, and its place in the band's list.
#[derive(Debug, Clone)]
struct Band {
    module: String,
    name: String,
    band: usize,
    place: usize,
}

/// The bands ARCHITECTURE.md's "Bands" table gives each module, from the bottom up.
fn bands() -> Vec<Band> {
    architecture_table("Bands")
        .iter()
        .enumerate()
        .flat_map(|(band, row)| {
            let name = row[0].trim_matches('*').to_owned();
            ticked(&row[1])
                .into_iter()
                .enumerate()
                .map(move |(place, module)| Band {
                    module,
                    name: name.clone(),
                    band,
                    place,
                })
        })
        .collect()
}

#[test]
fn each_module_imports_only_down_the_bands() {
    let sources = sources();
    assert_none("the bands", layering_offenders(&sources, &bands()));
    // And the table names no module that is not in src/.
    let modules: Vec<String> = sources.iter().map(|(name, _)| module_of(name)).collect();
    let stale: Vec<String> = bands()
        .into_iter()
        .filter(|b| !modules.contains(&b.module))
        .map(|b| {
            format!(
                "band {} names {}, which src/ does not hold",
                b.name, b.module
            )
        })
        .collect();
    assert_none("the bands table", stale);
}

/// The sibling files of a folder of src/ that a file names (`super::x`, `use super::{x, y}`,
/// `crate::folder::x`): the edges of the folder's own import graph. The folder's root (`mod.rs`,
/// or `folder.rs` beside the folder) declares its files and is not a node: the graph is between
/// the files it declares.
fn sibling_imports(source: &Source, siblings: &[String]) -> Vec<String> {
    let Some((folder, _)) = source.0.rsplit_once('/') else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let lines: Vec<&str> = source.1.iter().map(|(_, l)| l.as_str()).collect();
    let text = lines.join(" ");
    for prefix in ["super::".to_owned(), format!("crate::{folder}::")] {
        let mut rest = text.as_str();
        while let Some(at) = rest.find(&prefix) {
            rest = &rest[at + prefix.len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .collect(),
                None => vec![rest],
            };
            for name in names {
                let name: String = name
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if siblings.contains(&name) && !found.contains(&name) {
                    found.push(name);
                }
            }
        }
    }
    found
}

/// Every import circle between the files of one folder of src/ (`web/html.rs` → `web/records.rs`
/// → `web/html.rs`), each said once as the path around it.
fn folder_circles(sources: &[Source]) -> Vec<String> {
    let stem = |name: &str| -> Option<(String, String)> {
        let (folder, file) = name.rsplit_once('/')?;
        let file = file.strip_suffix(".rs")?;
        (file != "mod").then(|| (folder.to_owned(), file.to_owned()))
    };
    let mut folders: Vec<String> = sources
        .iter()
        .filter_map(|s| stem(&s.0))
        .map(|s| s.0)
        .collect();
    folders.sort();
    folders.dedup();
    let mut circles = Vec::new();
    for folder in folders {
        let files: Vec<String> = sources
            .iter()
            .filter_map(|s| stem(&s.0))
            .filter(|(f, _)| *f == folder)
            .map(|(_, file)| file)
            .collect();
        let edges = |from: &str| -> Vec<String> {
            sources
                .iter()
                .filter(|s| stem(&s.0).is_some_and(|(f, file)| f == folder && file == from))
                .flat_map(|s| sibling_imports(s, &files))
                .filter(|to| to != from)
                .collect()
        };
        // A depth-first walk from each file; a path that comes back to its start is a circle,
        // kept when its start is the smallest name on it, so each circle is said once.
        for start in &files {
            let mut stack = vec![vec![start.clone()]];
            while let Some(path) = stack.pop() {
                for next in edges(path.last().unwrap()) {
                    if next == *start {
                        let mut names = path.clone();
                        names.push(next.clone());
                        if path.iter().all(|n| n >= start) {
                            let shown: Vec<String> =
                                names.iter().map(|n| format!("{folder}/{n}.rs")).collect();
                            circles.push(format!("src/{}", shown.join(" → ")));
                        }
                    } else if !path.contains(&next) {
                        let mut longer = path.clone();
                        longer.push(next);
                        stack.push(longer);
                    }
                }
            }
        }
    }
    circles.sort();
    circles.dedup();
    circles
}

#[test]
fn no_import_circle_inside_a_folder() {
    assert_none(
        "an import circle inside a folder",
        folder_circles(&sources()),
    );
}

/// The files ARCHITECTURE.md's code map names, and the files in src/ (of every kind).
fn code_map_and_files() -> (Vec<String>, Vec<String>) {
    let named: Vec<String> = architecture_table("Code map")
        .iter()
        .flat_map(|row| ticked(&row[0]))
        .collect();
    let files = files_under(Path::new(SRC))
        .iter()
        .map(|path| {
            let name = path.strip_prefix(SRC).unwrap().to_string_lossy();
            name.replace('\\', "/")
        })
        .collect();
    (named, files)
}

/// The files the code map names that do not exist, and those it leaves out.
fn code_map_offenders(named: &[String], files: &[String]) -> Vec<String> {
    let missing = files
        .iter()
        .filter(|f| !named.contains(f))
        .map(|f| format!("src/{f} is not in ARCHITECTURE.md's code map"));
    let stale = named
        .iter()
        .filter(|n| !files.contains(n))
        .map(|n| format!("the code map names {n}, which src/ does not hold"));
    missing.chain(stale).collect()
}

#[test]
fn the_code_map_names_exactly_the_files_in_src() {
    let (named, files) = code_map_and_files();
    assert_none("the code map", code_map_offenders(&named, &files));
}

/// Most code lines (comments and tests aside) a file of src/ may hold: what a reader can hold
/// in mind at once. Issue 50 split the files past it (store, route, render, the OAuth server's
/// token endpoint) along what they hold; the largest left, web/html.rs, was near 500 when this
/// limit was set. A file that outgrows it is split the same way.
const FILE_LINES_MAX: usize = 600;

fn size_offenders(sources: &[Source]) -> Vec<String> {
    sources
        .iter()
        .filter(|(_, lines)| lines.len() > FILE_LINES_MAX)
        .map(|(name, lines)| format!("src/{name}: {} code lines", lines.len()))
        .collect()
}

#[test]
fn files_stay_within_the_size_limit() {
    assert_none("a file past FILE_LINES_MAX", size_offenders(&sources()));
}

/// Every line, tests included, of the .rs files under `dir` (relative to the crate).
fn all_lines(dir: &str) -> Vec<Source> {
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).unwrap();
            let lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.to_owned()));
            (path.to_string_lossy().into_owned(), lines.collect())
        })
        .collect()
}

/// A test that expects a panic passes on any panic, the wrong one included: tests say what
/// they expect as a value.
fn should_panic_offenders(sources: &[Source]) -> Vec<String> {
    let attribute = concat!("#[should", "_panic");
    sources
        .iter()
        .flat_map(|(name, lines)| {
            lines
                .iter()
                .filter(|(_, l)| l.contains(attribute))
                .map(move |(n, _)| format!("{name}:{n}"))
        })
        .collect()
}

#[test]
fn no_test_expects_a_panic() {
    let mut sources = all_lines("src");
    sources.extend(all_lines("tests"));
    assert_none("a should_panic test", should_panic_offenders(&sources));
}

/// Untrusted text is cut short for a sentence in one place, `render::clip` (in `render/inline.rs`) (folded first, then
/// clipped at a character boundary); another cut is another rule for what a person sees.
fn clip_offenders(sources: &[Source]) -> Vec<String> {
    offenders_in(sources, &["render/inline.rs"], |l| {
        l.contains("char_indices().nth(")
            || l.contains(".chars().take(")
            || l.contains("floor_char_boundary")
    })
}

/// JSON text is written where ARCHITECTURE.md's rules say: `json_write`
/// (every value), the envelope's head (`jsonrpc`), tools/call's result and the empty results of
/// the handshake lane (`dispatch`), and the card's constants (`protocol/card.rs`).
const JSON_WRITERS: [&str; 5] = [
    "json_write.rs",
    "jsonrpc.rs",
    "dispatch/methods.rs",
    "dispatch/handshake.rs",
    "protocol/card.rs",
];

fn json_offenders(sources: &[Source]) -> Vec<String> {
    offenders_in(sources, &JSON_WRITERS, |l| {
        l.contains("serde_json::to_")
            || l.contains("\"{\\\"")
            || l.contains("\"{{\\\"")
            || l.contains("push_str(\"{")
            || l.contains("push_str(\"[")
            || l.contains("String::from(\"{")
    })
}

/// `offenders`, over the given sources.
fn offenders_in(sources: &[Source], allowed: &[&str], found: impl Fn(&str) -> bool) -> Vec<String> {
    sources
        .iter()
        .filter(|(name, _)| !allowed.iter().any(|a| name == a || name.starts_with(a)))
        .flat_map(|(name, lines)| {
            lines
                .iter()
                .filter(|(_, line)| found(line))
                .map(move |(n, line)| format!("src/{name}:{n}: {}", line.trim()))
        })
        .collect()
}

/// A LIMIT is a number written into the statement or a cast parameter (`CAST(?n AS INTEGER)`):
/// SQLite reads a plain bound LIMIT while it plans, so each new binding throws the prepared
/// statement away and the next call plans it again (`store::LOAD_STATE` says what that cost).
fn bound_limit_offenders(sources: &[Source]) -> Vec<String> {
    offenders_in(sources, &[], |l| {
        l.contains("LIMIT ?") || l.contains("LIMIT +?")
    })
}

#[test]
fn untrusted_text_is_clipped_by_one_helper_and_json_written_in_its_places() {
    let sources = sources();
    assert_none("a second clip of untrusted text", clip_offenders(&sources));
    assert_none("JSON written outside its places", json_offenders(&sources));
    assert_none(
        "a LIMIT bound as a plain parameter",
        bound_limit_offenders(&sources),
    );
}

/// Each rule above fails on a violation planted in the real tree: a rule that cannot fail
/// guards nothing.
#[test]
fn each_rule_fails_on_an_injected_violation() {
    let plant = |file: &str, line: &str| {
        let mut sources = sources();
        sources.push((file.to_owned(), vec![(1, line.to_owned())]));
        sources
    };
    // An import circle: the band below the transports naming the path table above them.
    let circle = plant("http.rs", "use crate::route::Plan;");
    let found = layering_offenders(&circle, &bands());
    assert_eq!(found, ["src/http.rs:1: http (wire) imports route (route)"]);
    // A transport importing another, sideways, listed after it in its band.
    let sideways = plant("sse.rs", "use crate::{context::Ctx, web::Page};");
    assert_eq!(
        layering_offenders(&sideways, &bands()),
        ["src/sse.rs:1: sse (surfaces) imports web (surfaces, listed after it)"]
    );
    // The home of authentication: its low files may not reach up to its surface.
    let up = plant(
        "auth/scope.rs",
        "use crate::auth::{credentials, oauth::Step};",
    );
    assert_eq!(
        layering_offenders(&up, &bands()),
        [
            "src/auth/scope.rs:1: auth::scope (auth) imports auth::credentials (auth, listed after it)",
            "src/auth/scope.rs:1: auth::scope (auth) imports auth::oauth (surfaces)"
        ]
    );
    // A circle between the files of one folder, two files long and three.
    let mut two = plant("web/html.rs", "use super::records::search_box;");
    two.push((
        "web/records.rs".into(),
        vec![(1, "use super::html::{self, Html};".into())],
    ));
    assert_eq!(
        folder_circles(&two),
        ["src/web/html.rs → web/records.rs → web/html.rs"]
    );
    let mut three = plant("store/a.rs", "use crate::store::b::X;");
    three.push((
        "store/b.rs".into(),
        vec![(1, "use super::{c, rows};".into())],
    ));
    three.push((
        "store/c.rs".into(),
        vec![(1, "let x = super::a::f();".into())],
    ));
    assert_eq!(
        folder_circles(&three),
        ["src/store/a.rs → store/b.rs → store/c.rs → store/a.rs"]
    );
    let unplaced = plant("ledger.rs", "use crate::http;");
    assert_eq!(
        layering_offenders(&unplaced, &bands()),
        ["src/ledger.rs: module ledger is in no band"]
    );
    let (named, mut files) = code_map_and_files();
    files.push("new.rs".into());
    assert_eq!(
        code_map_offenders(&named, &files),
        ["src/new.rs is not in ARCHITECTURE.md's code map"]
    );
    let (mut named, files) = code_map_and_files();
    named.push("gone.rs".into());
    assert_eq!(
        code_map_offenders(&named, &files),
        ["the code map names gone.rs, which src/ does not hold"]
    );
    let mut big = sources();
    big.push(("big.rs".into(), vec![(1, "x".into()); FILE_LINES_MAX + 1]));
    assert_eq!(
        size_offenders(&big),
        [format!("src/big.rs: {} code lines", FILE_LINES_MAX + 1)]
    );
    let attribute = concat!("#[should", "_panic]");
    assert_eq!(
        should_panic_offenders(&[("t.rs".into(), vec![(3, attribute.into())])]),
        ["t.rs:3"]
    );
    assert_eq!(
        clip_offenders(&plant(
            "web/html.rs",
            "let s: String = t.chars().take(80).collect();"
        )),
        ["src/web/html.rs:1: let s: String = t.chars().take(80).collect();"]
    );
    assert_eq!(
        json_offenders(&plant(
            "web/records.rs",
            "let body = serde_json::to_string(&v)?;"
        )),
        ["src/web/records.rs:1: let body = serde_json::to_string(&v)?;"]
    );
    assert_eq!(
        bound_limit_offenders(&plant("store/new.rs", "ORDER BY seq LIMIT ?2\",")),
        ["src/store/new.rs:1: ORDER BY seq LIMIT ?2\","]
    );
}
