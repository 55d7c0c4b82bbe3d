//! The fuzz target: bytes in, through `route::plan`, `route::serve` and the dispatcher, into SQLite seeded
//! with one project and two tasks. The first byte picks the method, headers and protocol lane;
//! the rest is the body. It asserts what must hold for any input; no expected answers live here.

#![no_main]

use std::cell::Cell;

use handoff_mcp::auth::scope::{Credential, Scope};
use handoff_mcp::config::{Config, ALLOWED_ORIGINS_VAR, AUTH_TOKEN_VAR};
use handoff_mcp::context::{Caller, Ctx};
use handoff_mcp::http::Headers;
use handoff_mcp::sqlite::Sqlite;
use libfuzzer_sys::fuzz_target;
use serde_json::Value as Json;

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// Project p with a North Star, a focus, an open cleanup task and a done record task, so every
/// tool can reach its success path and every refusal has something it must not touch.
const SEED: &str = "
    INSERT INTO project (id, name, north_star) VALUES ('p', 'p', 'Ship v1');
    INSERT INTO focus (project_id, statement, why) VALUES ('p', 'Write the store', 'w');
    INSERT INTO task (id, project_id, body, kind, demoted, status)
        VALUES ('task-1', 'p', 'b', 'cleanup', 1, 'open'), ('task-2', 'p', 'r', 'record', 1, 'done');
";

fuzz_target!(|data: &[u8]| check(data));

fn check(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let db = seeded();
    let changes_before = db.conn.total_changes();
    let (method, headers) = request_shape(selector, body);
    let headers = Headers::new(headers);
    let config = Config::from_lookup(|name| match name {
        AUTH_TOKEN_VAR => Some("fuzz-token".into()),
        ALLOWED_ORIGINS_VAR => Some("https://app.example".into()),
        _ => None,
    });
    let next = Cell::new(0u32);
    let new_id = || {
        next.set(next.get() + 1);
        format!("new-{}", next.get())
    };
    let now = || 1_796_112_000_000_i64;
    let ctx = Ctx {
        db: &db,
        ids: &new_id,
        clock: &now,
        caller: Caller::new(headers.get("user-agent"), Credential::token(Scope::All)),
        focus_stale_days: 7,
    };
    let response =
        handoff_mcp::sqlite::serve_mcp(&config, method, "/fuzz-token/mcp", &headers, body, &ctx);

    assert!(
        matches!(
            response.status,
            200 | 202 | 400 | 403 | 404 | 405 | 413 | 415
        ),
        "unexpected status {}",
        response.status
    );
    if response.status == 202 {
        assert!(response.body.is_empty(), "202 with a body");
        assert_eq!(db.conn.total_changes(), changes_before, "a 202 wrote");
        return;
    }
    let reply: Json = serde_json::from_str(&response.body)
        .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", response.body));
    let messages = match &reply {
        Json::Array(items) => items.iter().collect(),
        single => vec![single],
    };
    assert!(!messages.is_empty(), "an empty batch reply");
    for message in &messages {
        assert_eq!(message["jsonrpc"], "2.0", "{reply}");
        // A healthy database never fails, so an internal error means input reached SQL badly.
        assert_ne!(message["error"]["code"], -32603, "{reply}");
        assert!(
            message.get("error").is_some() != message.get("result").is_some(),
            "not exactly one of result and error: {reply}"
        );
    }
    let refused = |m: &&Json| m.get("error").is_some() || m["result"]["isError"] == true;
    if response.status >= 400 || messages.iter().all(refused) {
        assert_eq!(
            db.conn.total_changes(),
            changes_before,
            "a refusal wrote: {reply}"
        );
    }
}

/// The HTTP method and headers for this input, from its first byte.
fn request_shape(selector: u8, body: &[u8]) -> (&'static str, Vec<(&'static str, String)>) {
    if selector == 0xff {
        return ("GET", Vec::new());
    }
    let content_type = match selector >> 5 & 3 {
        0 | 1 => "application/json",
        2 => "application/json; charset=utf-8",
        _ => "text/plain",
    };
    let mut headers = vec![("content-type", content_type.to_owned())];
    if selector & 0x10 != 0 {
        let origin = if selector & 0x80 != 0 {
            "https://evil.example"
        } else {
            "http://localhost:8787"
        };
        headers.push(("origin", origin.to_owned()));
    }
    let derived = derive(body);
    let version = |v: &str| ("mcp-protocol-version", v.to_owned());
    match selector & 0x0f {
        0..=3 => {}
        4 => headers.push(version("2025-11-25")),
        5 => headers.push(version("2025-06-18")),
        6 => headers.push(version("2025-03-26")),
        7 => headers.push(version("1999-01-01")),
        8 => headers.push(version("2026-07-28")),
        lane => {
            // The stateless lane with headers agreeing with the body, as a real client sends them;
            // 10 and 11 spell the values in the =?base64?…?= form, 12 and 13 drop the name.
            let (claim, method, name) = derived;
            let encode = lane == 10 || lane == 11;
            let spell = |v: String| {
                if encode {
                    format!("=?base64?{}?=", base64(v.as_bytes()))
                } else {
                    v
                }
            };
            headers.push(version(&claim.unwrap_or_else(|| "2026-07-28".into())));
            if let Some(method) = method {
                headers.push(("mcp-method", spell(method)));
            }
            if let (Some(name), false) = (name, lane == 12 || lane == 13) {
                headers.push(("mcp-name", spell(name)));
            }
        }
    }
    ("POST", headers)
}

/// The `_meta` version claim, method and params.name of the body (or of a batch's first item).
fn derive(body: &[u8]) -> (Option<String>, Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_slice::<Json>(body) else {
        return (None, None, None);
    };
    let message = match &value {
        Json::Array(items) => items.first().cloned().unwrap_or_default(),
        other => other.clone(),
    };
    let text = |v: &Json| v.as_str().map(str::to_owned);
    let params = &message["params"];
    (
        text(&params["_meta"][META_VERSION]),
        text(&message["method"]),
        text(&params["name"]).or_else(|| text(&params["uri"])),
    )
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The shared SQLite adapter, seeded.
fn seeded() -> Sqlite {
    let db = Sqlite::migrated();
    db.conn.execute_batch(SEED).expect("seed rows");
    db
}
