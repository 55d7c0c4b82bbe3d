//! OAuth discovery and the fetch of client ID metadata documents, from outside: with OAuth off
//! (`/healthz` says so) no metadata is served and a 401 points nowhere; with it on, the metadata
//! documents as a client reads them, the 401 that names them, and the Worker's fetch of a client's
//! metadata document held to its limits (no redirect, 5 KB, 5 seconds, the document naming its
//! own URL, kept as its cache headers say) against documents this client serves on loopback.
//! The full flows are scripts/oauth-clients'; the rules, tests/wire/oauth.rs'.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use crate::checks::{ensure, Checks};
use crate::http::{self, Reply, Target};

const METADATA: [&str; 3] = [
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
];

/// Runs the OAuth checks once per smoke run (not again in bearer mode: nothing here differs).
pub fn run(checks: &mut Checks, target: &Target) {
    let agent = http::agent();
    let get = |path: &str| {
        http::send(
            &agent,
            "GET",
            &format!("{}{path}", target.origin()),
            &[],
            None,
        )
    };
    let on = match get("/healthz") {
        Ok(reply) => reply.body.lines().any(|line| line == "oauth: on"),
        Err(e) => {
            checks.record("oauth: /healthz answers", Err(e));
            return;
        }
    };
    let unauthorized = http::send(
        &agent,
        "POST",
        &format!("{}/mcp", target.origin()),
        &[("Content-Type", "application/json")],
        Some(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
    );
    if !on {
        for path in METADATA {
            let outcome = get(path).and_then(|reply| status(&reply, 404));
            checks.record(&format!("oauth off: GET {path} is 404"), outcome);
        }
        let outcome = unauthorized.and_then(|reply| {
            ensure(reply.header("WWW-Authenticate") == Some("Bearer"), || {
                format!("WWW-Authenticate is {:?}", reply.header("WWW-Authenticate"))
            })
        });
        checks.record("oauth off: a 401 names no OAuth metadata", outcome);
        return;
    }
    let origin = target.origin();
    let resource = format!("{origin}/mcp");
    let protected = json!({
        "resource": resource,
        "authorization_servers": [origin],
        "scopes_supported": ["handoff:read", "handoff:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "handoff-mcp",
    });
    for path in &METADATA[..2] {
        let outcome = get(path).and_then(|reply| json_is(&reply, &protected));
        checks.record(&format!("oauth: GET {path} describes {resource}"), outcome);
    }
    let outcome = get(METADATA[2]).and_then(|reply| {
        let doc = parse(&reply)?;
        let methods = doc["token_endpoint_auth_methods_supported"]
            .as_array()
            .cloned();
        ensure(
            doc["issuer"] == origin
                && doc["client_id_metadata_document_supported"] == true
                && methods.is_some_and(|m| m.contains(&json!("none")))
                && doc["code_challenge_methods_supported"] == json!(["S256"])
                && doc["authorization_endpoint"] == format!("{origin}/authorize"),
            || format!("authorization-server metadata: {}", reply.describe()),
        )
    });
    checks.record(
        "oauth: the authorization-server metadata has the issuer, S256, none and client ID metadata documents",
        outcome,
    );
    let named = format!(
        "Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\", scope=\"handoff:read handoff:write\""
    );
    let outcome = unauthorized.and_then(|reply| {
        status(&reply, 401)?;
        ensure(
            reply.header("WWW-Authenticate") == Some(named.as_str()),
            || format!("WWW-Authenticate is {:?}", reply.header("WWW-Authenticate")),
        )
    });
    checks.record(
        "oauth: POST /mcp without a credential is 401 naming the metadata",
        outcome,
    );
    documents(checks, target);
}

/// What the loopback document server answers for a path: status, extra headers, body, and how
/// long it waits first.
fn document(path: &str, base: &str) -> (u16, Vec<String>, String, u64) {
    let named = |url: &str| {
        json!({"client_id": url, "client_name": "Smoke <client>", "redirect_uris": ["http://127.0.0.1:9/cb"]})
            .to_string()
    };
    match path {
        "/cached.json" => (
            200,
            vec!["Cache-Control: max-age=300".into()],
            named(&format!("{base}/cached.json")),
            0,
        ),
        "/other.json" => (200, vec![], named(&format!("{base}/cached.json")), 0),
        "/big.json" => (
            200,
            vec![],
            format!("{{\"pad\":\"{}\"}}", "x".repeat(6000)),
            0,
        ),
        "/slow.json" => (200, vec![], named(&format!("{base}/slow.json")), 7),
        "/moved.json" => (
            302,
            vec![format!("Location: {base}/cached.json")],
            String::new(),
            0,
        ),
        _ => (404, vec![], String::new(), 0),
    }
}

/// Serves `document` on a loopback port until the process ends; counts requests per path.
fn serve_documents() -> Result<(String, Arc<AtomicUsize>), String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let base = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().map_err(|e| e.to_string())?.port()
    );
    let cached_hits = Arc::new(AtomicUsize::new(0));
    let (hits, root) = (cached_hits.clone(), base.clone());
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (hits, root) = (hits.clone(), root.clone());
            thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let path = line.split(' ').nth(1).unwrap_or("/").to_owned();
                // The rest of the head, up to its blank line.
                let mut header = String::new();
                while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                    header.clear();
                }
                if path == "/cached.json" {
                    hits.fetch_add(1, Ordering::SeqCst);
                }
                let (code, headers, body, wait) = document(&path, &root);
                thread::sleep(Duration::from_secs(wait));
                let mut head = format!(
                    "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                    body.len()
                );
                for h in headers {
                    head.push_str(&h);
                    head.push_str("\r\n");
                }
                let _ = (&stream).write_all(format!("{head}\r\n{body}").as_bytes());
            });
        }
    });
    Ok((base, cached_hits))
}

/// The Worker's fetch of client metadata documents, held to its limits.
fn documents(checks: &mut Checks, target: &Target) {
    let Some((base, hits)) = checks.keep(
        "oauth: a loopback document server starts",
        serve_documents(),
    ) else {
        return;
    };
    let agent = http::agent();
    let authorize = |client_id: &str| {
        let query = format!(
            "response_type=code&client_id={}&redirect_uri={}&code_challenge={}&code_challenge_method=S256&state=s",
            encode(client_id),
            encode("http://127.0.0.1:9/cb"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        http::send(
            &agent,
            "GET",
            &format!("{}/authorize?{query}", target.origin()),
            &[],
            None,
        )
    };
    let cached = format!("{base}/cached.json");
    let outcome = authorize(&cached).and_then(|reply| {
        status(&reply, 200)?;
        ensure(
            reply
                .body
                .contains("Connect Smoke &lt;client&gt; to handoff-mcp")
                && reply.body.contains("name=token type=password"),
            || format!("not the consent page: {}", reply.describe()),
        )
    });
    checks.record("oauth: a client named by its metadata document URL gets the consent page, its name escaped", outcome);
    let outcome = authorize(&cached)
        .and_then(|reply| status(&reply, 200))
        .and_then(|()| {
            let n = hits.load(Ordering::SeqCst);
            ensure(n == 1, || format!("the document was fetched {n} times"))
        });
    checks.record(
        "oauth: a document with max-age is fetched once and kept",
        outcome,
    );
    for (path, what, why) in [
        (
            "/other.json",
            "that names another URL",
            "names another client_id than its URL",
        ),
        ("/big.json", "of 6 KB", "larger than 5 KB"),
        ("/slow.json", "that takes 7 s", "longer than 5 seconds"),
        (
            "/moved.json",
            "that redirects",
            "a redirect, which is not followed",
        ),
        ("/missing.json", "that is not there", "answered HTTP 404"),
    ] {
        let outcome = authorize(&format!("{base}{path}")).and_then(|reply| {
            status(&reply, 400)?;
            ensure(
                reply.header("Location").is_none() && reply.body.contains(why),
                || {
                    format!(
                        "expected an error page saying {why:?}: {}",
                        reply.describe()
                    )
                },
            )
        });
        checks.record(
            &format!("oauth: a metadata document {what} is an error page saying so, no redirect"),
            outcome,
        );
    }
}

fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn status(reply: &Reply, expected: u16) -> Result<(), String> {
    ensure(reply.status == expected, || {
        format!("expected HTTP {expected}, got {}", reply.describe())
    })
}

fn parse(reply: &Reply) -> Result<Value, String> {
    status(reply, 200)?;
    serde_json::from_str(&reply.body).map_err(|e| format!("not JSON ({e}): {}", reply.describe()))
}

fn json_is(reply: &Reply, expected: &Value) -> Result<(), String> {
    let doc = parse(reply)?;
    ensure(&doc == expected, || {
        format!("expected {expected}, got {doc}")
    })
}
