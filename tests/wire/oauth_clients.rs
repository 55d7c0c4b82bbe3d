//! OAuth's clients at the wire, as they come in the field: Claude's connector and Claude Code by
//! their published client ids with no fetch at all, a client id that would make the Worker
//! connect to a private or local host refused before any fetch is planned, a metadata document
//! that must name itself, and a consent page that shows what the browser will do (ASCII hosts,
//! the whole URI of an app's scheme, only behind `OAUTH_APP_REDIRECTS`, a sentence for a
//! loopback-only client, names without bidi or zero-width characters). No test here connects
//! anywhere: a fetch is only ever planned (`oauth::fetch_for`), and the harness answers it from
//! `Server::documents`. The live run of the same clients is scripts/claude-oauth's.

use handoff_mcp::auth::oauth::{self, Fetched, Step};
use handoff_mcp::config::{AUTH_TOKEN_VAR, OAUTH_APP_REDIRECTS_VAR};
use serde_json::json;

use crate::golden;
use crate::oauth::{
    call, consent_post, hidden_fields, redact_ticket, register, server, server_with, text_of,
    token, value, Request, RESOURCE, TOKEN, VERIFIER,
};
use crate::support::{Reply, Server, ORIGIN};

const CONNECTOR: &str = "https://claude.ai/oauth/mcp-oauth-client-metadata";
const CONNECTOR_CALLBACK: &str = "https://claude.ai/api/mcp/auth_callback";
const CLAUDE_CODE: &str = "https://claude.ai/oauth/claude-code-client-metadata";

/// Claude's connector's authorization request as it sends it: its client id and callback, the
/// resource, no `scope`.
fn connector_request() -> Request {
    Request::new(CONNECTOR)
        .with("redirect_uri", Some(CONNECTOR_CALLBACK))
        .with("scope", None)
}

/// The other callback Claude's connector uses (claude.com); each is matched exactly.
const CONNECTOR_CALLBACK_COM: &str = "https://claude.com/api/mcp/auth_callback";

/// The metadata document URL the plan would have the shell fetch for this request, if any.
fn planned_fetch(s: &Server, request: &Request) -> Option<String> {
    let target = request.target();
    let query = target.split_once('?').map(|(_, q)| q);
    oauth::fetch_for(Step::Authorize, query, &s.config)
}

/// Both consent steps with the full token, every project, read and write: where the browser
/// is sent, as the Location header says.
fn allowed(s: &Server, request: &Request) -> String {
    let (page, _) = consent_post(s, request, &[("token", TOKEN)]);
    assert_eq!(page.status, 200, "{}", page.body);
    let hidden = hidden_fields(&page);
    let mut fields: Vec<(&str, &str)> = hidden
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    fields.extend([("decision", "allow"), ("reach", "all"), ("access", "write")]);
    let (reply, _) = consent_post(s, request, &fields);
    assert_eq!(reply.status, 303, "{}", reply.body);
    reply.header("location").unwrap().to_owned()
}

/// The code of a redirect to `callback`, checked to go there with `state` and `iss`.
fn code_at(location: &str, callback: &str, request: &Request) -> String {
    let (base, query) = location.split_once('?').unwrap();
    assert_eq!(base, callback);
    let query = handoff_mcp::form::decode(query.as_bytes()).unwrap();
    assert_eq!(value(&query, "state"), Some(request.field("state")));
    assert_eq!(value(&query, "iss"), Some(ORIGIN));
    value(&query, "code").unwrap().to_owned()
}

fn exchange_at(s: &Server, client_id: &str, code: &str, callback: &str) -> Reply {
    token(
        s,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("code_verifier", VERIFIER),
            ("client_id", client_id),
            ("redirect_uri", callback),
            ("resource", RESOURCE),
        ],
    )
}

#[test]
fn claudes_connector_connects_through_either_callback_and_a_code_keeps_to_its_own() {
    let s = server();
    let request = connector_request().with("redirect_uri", Some(CONNECTOR_CALLBACK_COM));
    assert_eq!(planned_fetch(&s, &request), None);
    let page = s.http("GET", &request.target(), &[], b"");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains("goes back to <b>claude.com</b>"),
        "{}",
        page.body
    );
    let location = allowed(&s, &request);
    let code = code_at(&location, CONNECTOR_CALLBACK_COM, &request);
    // The code was given for claude.com's callback: claude.ai's is refused for it (RFC 6749
    // §4.1.3), and a new code is asked for.
    let crossed = exchange_at(&s, CONNECTOR, &code, CONNECTOR_CALLBACK);
    assert_eq!(crossed.status, 400, "{}", crossed.body);
    assert_eq!(crossed.json()["error"], "invalid_grant", "{}", crossed.body);
    let code = code_at(&allowed(&s, &request), CONNECTOR_CALLBACK_COM, &request);
    let tokens = exchange_at(&s, CONNECTOR, &code, CONNECTOR_CALLBACK_COM);
    assert_eq!(tokens.status, 200, "{}", tokens.body);
    let access = tokens.json()["access_token"].as_str().unwrap().to_owned();
    let args = json!({"project_id": "alpha", "text": "from claude.com"});
    text_of(&call(&s, &access, "set_north_star", args));
    // A near miss of either callback is no callback of Claude's.
    for near in [
        "https://claude.com/api/mcp/auth_callback/",
        "https://claude.com/api/mcp/auth_callback?next=1",
        "https://www.claude.com/api/mcp/auth_callback",
        "https://claude.ai.evil.example/api/mcp/auth_callback",
    ] {
        let page = s.http(
            "GET",
            &connector_request()
                .with("redirect_uri", Some(near))
                .target(),
            &[],
            b"",
        );
        assert_eq!(page.status, 400, "{near}: {}", page.body);
    }
}

#[test]
fn claudes_connector_connects_with_no_fetch_and_its_tokens_outlive_an_hour() {
    let s = server();
    let request = connector_request();
    // No document is there to be found (the harness's fetch fails), and none is asked for.
    assert_eq!(planned_fetch(&s, &request), None);
    let page = s.http("GET", &request.target(), &[], b"");
    golden::check("pages/consent-claude.http", &page);
    assert!(page.body.contains("<h1>Connect Claude to handoff-mcp</h1>"));
    assert!(page.body.contains(
        "This is <b>Claude&#39;s connector (claude.ai, Claude Desktop and the Claude mobile apps)</b>"
    ));
    assert!(page.body.contains("goes back to <b>claude.ai</b>"));
    assert!(!page.body.contains("Check first"), "an https callback");
    let location = allowed(&s, &request);
    let code = code_at(&location, CONNECTOR_CALLBACK, &request);
    let tokens = exchange_at(&s, CONNECTOR, &code, CONNECTOR_CALLBACK);
    assert_eq!(tokens.status, 200, "{}", tokens.body);
    let tokens = tokens.json();
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    let args = json!({"project_id": "alpha", "text": "from claude.ai"});
    text_of(&call(&s, access, "set_north_star", args));
    // More than an hour with no refresh: the connector keeps its tools.
    s.now.set(s.now.get() + 61 * 60_000);
    let state = call(&s, access, "get_state", json!({"project_id": "alpha"}));
    assert!(text_of(&state).starts_with("🎯 NORTH STAR: from claude.ai"));
    let page = s.http("GET", &format!("/{TOKEN}/projects/alpha"), &[], b"");
    assert!(page.body.contains("by Claude (OAuth)"), "{}", page.body);
}

#[test]
fn claude_code_connects_on_an_ephemeral_port_on_either_loopback_name() {
    let s = server();
    for callback in [
        "http://localhost:49152/callback",
        "http://127.0.0.1:61234/callback",
    ] {
        let request = Request::new(CLAUDE_CODE).with("redirect_uri", Some(callback));
        assert_eq!(planned_fetch(&s, &request), None);
        let page = s.http("GET", &request.target(), &[], b"");
        assert_eq!(page.status, 200, "{}", page.body);
        if callback.contains("localhost") {
            golden::check("pages/consent-claude-code.http", &page);
        }
        assert!(page
            .body
            .contains("This is <b>Claude Code, the command-line tool</b>"));
        // Any program on the computer can say it is Claude Code: the page says so.
        assert!(page
            .body
            .contains("<p><b>Check first:</b> Claude Code returns to a program on this computer"));
        let location = allowed(&s, &request);
        let code = code_at(&location, callback, &request);
        let tokens = exchange_at(&s, CLAUDE_CODE, &code, callback);
        assert_eq!(tokens.status, 200, "{callback}: {}", tokens.body);
    }
    // Only the published path, and http only on loopback.
    for wrong in [
        "http://127.0.0.1:61234/other",
        "http://evil.example:61234/callback",
        "https://localhost:61234/callback",
    ] {
        let request = Request::new(CLAUDE_CODE).with("redirect_uri", Some(wrong));
        let page = s.http("GET", &request.target(), &[], b"");
        assert_eq!(page.status, 400, "{wrong}");
        assert!(page.body.contains("is not one Claude Code registered"));
    }
}

/// Finding 1 (SSRF): a client id on an address or a local name is refused from its spelling,
/// before any fetch is planned; the sentence says why. Each spelling is only ever text here.
#[test]
fn a_client_id_on_a_private_or_local_host_is_refused_before_any_fetch() {
    let s = server();
    for (client_id, why) in [
        ("https://127.0.0.1:8443/x", "an IP address"),
        ("https://localhost:8443/x", "a local host name"),
        ("https://[::1]:8443/x", "an IP address"),
        ("https://[fd00::1]/x", "an IP address"),
        ("https://[::ffff:127.0.0.1]/x", "an IP address"),
        ("https://2130706433/x", "an IP address"),
        ("https://0x7f.1/x", "an IP address"),
        ("https://127.1/x", "an IP address"),
        ("https://10.0.0.8/x", "an IP address"),
        ("https://169.254.169.254/x", "an IP address"),
        ("https://100.64.1.1/x", "an IP address"),
        ("https://intranet/x", "a local host name"),
        ("https://printer.local/x", "a local host name"),
        ("https://db.internal/x", "a local host name"),
        ("https://a.localhost/x", "a local host name"),
        (
            "https://%6c%6fcalhost/x",
            "a host name that is not plain lower-case ASCII",
        ),
    ] {
        let request = Request::new(client_id);
        assert_eq!(planned_fetch(&s, &request), None, "{client_id}");
        let page = s.http("GET", &request.target(), &[], b"");
        assert_eq!(page.status, 400, "{client_id}");
        let sentence = format!(
            "client_id &quot;{client_id}&quot; names a metadata document on {why}; this server fetches them from public https hosts only"
        );
        assert!(page.body.contains(&sentence), "{client_id}: {}", page.body);
    }
    // A public host is fetched as before.
    let public = Request::new("https://app.example/c.json");
    assert_eq!(
        planned_fetch(&s, &public).as_deref(),
        Some("https://app.example/c.json")
    );
}

/// Finding 5: a metadata document must name itself; one that fails a check is not kept.
#[test]
fn a_metadata_document_must_carry_client_name_and_only_a_valid_one_is_kept() {
    let s = server();
    let url = "https://app.example/c.json";
    let unnamed = json!({"client_id": url, "redirect_uris": ["https://app.example/cb"]});
    s.documents.borrow_mut().push((
        url.into(),
        Fetched::Answer {
            status: 200,
            body: unnamed.to_string(),
        },
    ));
    let request = Request::new(url).with("redirect_uri", Some("https://app.example/cb"));
    let page = s.http("GET", &request.target(), &[], b"");
    assert_eq!(page.status, 400);
    assert!(page.body.contains("has no client_name"), "{}", page.body);
    let oauth = s.config.oauth.as_ref().unwrap();
    let answer = format!("200\nmax-age=86400\n{unnamed}");
    assert_eq!(oauth::fetched(url, &answer, oauth).1, 0, "not kept");
    let named = json!({"client_id": url, "client_name": "App",
        "redirect_uris": ["https://app.example/cb"]});
    let answer = format!("200\nmax-age=86400\n{named}");
    assert_eq!(
        oauth::fetched(url, &answer, oauth).1,
        86_400_000,
        "kept a day"
    );
}

/// Finding 4: the consent page shows what the browser will do.
#[test]
fn the_consent_page_shows_what_the_browser_will_do() {
    let s = server();
    // A Cyrillic "с" in "сlaude.ai": refused, so never shown as claude.ai.
    let lookalike = "https://\u{441}laude.ai/api/mcp/auth_callback";
    let refused = register(&s, json!({"redirect_uris": [lookalike]}));
    assert_eq!(refused.status, 400);
    assert!(refused.body.contains("outside ASCII"), "{}", refused.body);
    let url = "https://app.example/c.json";
    s.documents.borrow_mut().push((
        url.into(),
        Fetched::Answer {
            status: 200,
            body: json!({"client_id": url, "client_name": "Claude", "redirect_uris": [lookalike]})
                .to_string(),
        },
    ));
    let page = s.http(
        "GET",
        &Request::new(url)
            .with("redirect_uri", Some(lookalike))
            .target(),
        &[],
        b"",
    );
    assert_eq!(page.status, 400);
    assert!(page.body.contains("outside ASCII"), "{}", page.body);
    // A private-use scheme: refused unless OAUTH_APP_REDIRECTS=1, then shown whole.
    let app = "googlechromes://evil.example/cb";
    let apps = server_with(&[(AUTH_TOKEN_VAR, TOKEN), (OAUTH_APP_REDIRECTS_VAR, "1")]);
    for scheme in [app, "my.app+x-1:/cb"] {
        let refused = register(&s, json!({"redirect_uris": [scheme]}));
        assert_eq!(refused.status, 400);
        assert!(
            refused.body.contains("OAUTH_APP_REDIRECTS=1"),
            "{}",
            refused.body
        );
        assert_eq!(
            register(&apps, json!({"redirect_uris": [scheme]})).status,
            201
        );
    }
    let registered = register(
        &apps,
        json!({"client_name": "Chrome", "redirect_uris": [app], "token_endpoint_auth_method": "none"}),
    );
    assert_eq!(registered.status, 201, "{}", registered.body);
    let client_id = registered.json()["client_id"].as_str().unwrap().to_owned();
    let request = Request::new(&client_id).with("redirect_uri", Some(app));
    let page = apps.http("GET", &request.target(), &[], b"");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body
            .contains("goes back to <b>googlechromes://evil.example/cb</b>"),
        "{}",
        page.body
    );
    // The same registration, once the operator turns the setting off, is refused.
    let off = server();
    let page = off.http("GET", &request.target(), &[], b"");
    assert_eq!(page.status, 400);
    // A name with bidi and zero-width characters is shown and recorded without them.
    let forged = "Cl\u{200B}aude \u{202E}edoC\u{202C}\u{2066}x\u{2069}\u{FEFF}";
    let registered = register(
        &s,
        json!({"client_name": forged, "redirect_uris": ["https://app.example/cb"],
            "token_endpoint_auth_method": "none"}),
    );
    assert_eq!(registered.json()["client_name"], "Claude edoCx");
}

/// The second step for Claude's connector: no scope asked, so read and write are offered; nothing
/// is written before Allow.
#[test]
fn the_second_step_for_claudes_connector_writes_nothing_before_allow() {
    let s = server();
    let (page, _) = consent_post(&s, &connector_request(), &[("token", TOKEN)]);
    let page = redact_ticket(&page);
    golden::check("pages/consent-claude-choice.http", &page);
    assert!(page.body.contains("value=write checked> Read and write"));
    assert_eq!(
        s.db.stored("SELECT cast(count(*) AS TEXT) FROM oauth_grant"),
        "0"
    );
}
