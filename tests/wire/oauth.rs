//! OAuth at the wire: discovery, registration (sealed and by metadata document), the consent
//! page's two steps, the token endpoint, access tokens on /mcp, refresh rotation, revocation on
//! the page and by removing the token a grant was made with, and every refusal the RFCs name,
//! each with nothing written. The real clients' runs are scripts/oauth-clients'.

use handoff_mcp::auth::oauth::Fetched;
use handoff_mcp::auth::seal;
use handoff_mcp::base64;
use handoff_mcp::config::{AUTH_TOKEN_VAR, OAUTH_KEY_VAR, PROJECT_TOKENS_VAR, PUBLIC_URL_VAR};
use handoff_mcp::crypto;
use serde_json::{json, Value as Json};

use crate::golden;
use crate::support::{Reply, Server, ORIGIN};

pub(crate) const KEY: &str = "an-oauth-key-of-thirty-two-bytes-or-more";
/// The full-access token of every server here (tests/wire/oauth_clients.rs pastes it too): as
/// long as a public deployment requires (`config::TOKEN_MIN`).
pub(crate) const TOKEN: &str = "a-full-access-token-of-32-characters-at-least";
/// The project token: read and write `alpha` only.
pub(crate) const PROJECT: &str = "a-project-token-of-32-characters-at-least";
/// A read-only project token of `alpha`.
pub(crate) const READER: &str = "a-reader-token-of-32-characters-at-least";
pub(crate) const CALLBACK: &str = "http://127.0.0.1:33418/callback";
pub(crate) const RESOURCE: &str = "https://handoff.example/mcp";
pub(crate) const VERIFIER: &str = "a-pkce-verifier-of-forty-three-characters-at-least";
pub(crate) const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");
pub(crate) const OWN: (&str, &str) = ("Origin", ORIGIN);

pub(crate) fn server() -> Server {
    server_with(&[
        (AUTH_TOKEN_VAR, TOKEN),
        (
            PROJECT_TOKENS_VAR,
            &format!("{PROJECT}=alpha,{READER}=alpha:read"),
        ),
    ])
}

/// An OAuth server (issuer `ORIGIN`) with these credentials.
pub(crate) fn server_with(credentials: &[(&str, &str)]) -> Server {
    let mut vars = vec![(OAUTH_KEY_VAR, KEY), (PUBLIC_URL_VAR, ORIGIN)];
    vars.extend_from_slice(credentials);
    let s = Server::with_vars(&vars);
    s.credential(&format!("/{TOKEN}/mcp"), None);
    s
}

pub(crate) fn challenge(verifier: &str) -> String {
    base64::url_encode(&crypto::sha256(verifier.as_bytes()))
}

fn enc(value: &str) -> String {
    handoff_mcp::form::encode(value)
}

pub(crate) fn form_body(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{k}={}", enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A client's authorization request: its query's fields, which a test may change.
#[derive(Clone)]
pub(crate) struct Request {
    fields: Vec<(&'static str, String)>,
}

impl Request {
    pub(crate) fn new(client_id: &str) -> Request {
        Request {
            fields: vec![
                ("response_type", "code".into()),
                ("client_id", client_id.into()),
                ("redirect_uri", CALLBACK.into()),
                ("code_challenge", challenge(VERIFIER)),
                ("code_challenge_method", "S256".into()),
                ("state", "s t&8".into()),
                ("resource", RESOURCE.into()),
                ("scope", "handoff:read handoff:write".into()),
            ],
        }
    }

    pub(crate) fn with(mut self, name: &'static str, value: Option<&str>) -> Request {
        self.fields.retain(|(k, _)| *k != name);
        if let Some(value) = value {
            self.fields.push((name, value.into()));
        }
        self
    }

    pub(crate) fn target(&self) -> String {
        let query: Vec<String> = self
            .fields
            .iter()
            .map(|(k, v)| format!("{k}={}", enc(v)))
            .collect();
        format!("/authorize?{}", query.join("&"))
    }

    pub(crate) fn field(&self, name: &str) -> &str {
        &self.fields.iter().find(|(k, _)| *k == name).unwrap().1
    }
}

pub(crate) fn register(s: &Server, metadata: Json) -> Reply {
    s.http(
        "POST",
        "/register",
        &[("Content-Type", "application/json")],
        metadata.to_string().as_bytes(),
    )
}

/// A public client registered with the callback, and its id.
pub(crate) fn public_client(s: &Server, name: &str) -> String {
    let reply = register(
        s,
        json!({"client_name": name, "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}),
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.json()["client_id"].as_str().unwrap().to_owned()
}

pub(crate) fn consent_post(
    s: &Server,
    request: &Request,
    fields: &[(&str, &str)],
) -> (Reply, bool) {
    s.http_counted(
        "POST",
        &request.target(),
        &[FORM, OWN],
        form_body(fields).as_bytes(),
    )
}

/// The ticket of a second step's page.
pub(crate) fn ticket_of(page: &Reply) -> String {
    const NEEDLE: &str = "name=ticket value=\"";
    let at = page.body.find(NEEDLE).expect("a ticket") + NEEDLE.len();
    page.body[at..].split('"').next().unwrap().to_owned()
}

/// The query of a redirect's Location, decoded.
pub(crate) fn redirected(reply: &Reply) -> Vec<(String, String)> {
    assert_eq!(reply.status, 303, "{}", reply.body);
    let location = reply.header("location").unwrap();
    let (base, query) = location.split_once('?').unwrap();
    assert_eq!(base, CALLBACK);
    handoff_mcp::form::decode(query.as_bytes()).unwrap()
}

pub(crate) fn value<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The hidden fields of a page's form, as a browser sends them.
pub(crate) fn hidden_fields(page: &Reply) -> Vec<(String, String)> {
    const NEEDLE: &str = "<input type=hidden name=";
    page.body
        .match_indices(NEEDLE)
        .map(|(at, _)| {
            let rest = &page.body[at + NEEDLE.len()..];
            let (name, rest) = rest.split_once(" value=\"").unwrap();
            (name.to_owned(), rest.split('"').next().unwrap().to_owned())
        })
        .collect()
}

/// Both consent steps with `token`, allowing `choice` (reach, project, access) on top of the
/// page's hidden fields: the code.
pub(crate) fn consent(
    s: &Server,
    request: &Request,
    token: &str,
    choice: &[(&str, &str)],
) -> String {
    let (page, counted) = consent_post(s, request, &[("token", token)]);
    assert_eq!((page.status, counted), (200, false), "{}", page.body);
    let hidden = hidden_fields(&page);
    let mut fields: Vec<(&str, &str)> = hidden
        .iter()
        .filter(|(name, _)| !choice.iter().any(|(n, _)| n == name))
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    fields.push(("decision", "allow"));
    fields.extend_from_slice(choice);
    let (reply, _) = consent_post(s, request, &fields);
    let query = redirected(&reply);
    assert_eq!(value(&query, "state"), Some(request.field("state")));
    assert_eq!(value(&query, "iss"), Some(ORIGIN));
    value(&query, "code").unwrap().to_owned()
}

pub(crate) fn token(s: &Server, fields: &[(&str, &str)]) -> Reply {
    s.http("POST", "/token", &[FORM], form_body(fields).as_bytes())
}

pub(crate) fn exchange(s: &Server, client_id: &str, code: &str) -> Reply {
    token(
        s,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("code_verifier", VERIFIER),
            ("client_id", client_id),
            ("redirect_uri", CALLBACK),
            ("resource", RESOURCE),
        ],
    )
}

pub(crate) fn refresh(s: &Server, client_id: &str, refresh_token: &str) -> Reply {
    token(
        s,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client_id),
        ],
    )
}

/// A tools/call over /mcp with this access token.
pub(crate) fn call(s: &Server, access: &str, tool: &str, arguments: Json) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let auth = format!("Bearer {access}");
    s.http(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", "2025-06-18"),
            ("Authorization", &auth),
        ],
        body.to_string().as_bytes(),
    )
}

pub(crate) fn text_of(reply: &Reply) -> String {
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The only grant there is, revoked with its Revoke button on the full token's Connected
/// clients page (303 asserted): what a person does there.
pub(crate) fn revoke_the_grant_on_the_page(s: &Server) {
    let grant = s.db.stored("SELECT id FROM oauth_grant");
    let path = format!("/{TOKEN}/clients/{grant}");
    assert_eq!(s.http("POST", &path, &[FORM, OWN], b"").status, 303);
}

/// The grants table, for "nothing was written".
pub(crate) fn grants(s: &Server) -> String {
    s.db.stored(
        "SELECT coalesce(group_concat(id || '|' || refresh_hash || '|' || \
         coalesce(revoked_at, '-'), ';'), '') FROM (SELECT * FROM oauth_grant ORDER BY id)",
    )
}

/// A grant made all the way through: registration, consent with `token` and `choice`, and the
/// exchange; the client id and the token answer.
pub(crate) fn granted(s: &Server, token: &str, choice: &[(&str, &str)]) -> (String, Json) {
    let client = public_client(s, "Test client");
    let request = Request::new(&client);
    let code = consent(s, &request, token, choice);
    let reply = exchange(s, &client, &code);
    assert_eq!(reply.status, 200, "{}", reply.body);
    (client, reply.json())
}

#[test]
fn discovery_says_where_the_authorization_server_is_only_while_oauth_is_on() {
    let s = server();
    let reply = s.http(
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        b"{}",
    );
    assert_eq!(reply.status, 401);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(
            "Bearer resource_metadata=\"https://handoff.example/.well-known/oauth-protected-resource/mcp\", scope=\"handoff:read handoff:write\""
        )
    );
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let reply = s.http("GET", path, &[], b"");
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
        assert_eq!(
            reply.json(),
            json!({
                "resource": RESOURCE,
                "authorization_servers": [ORIGIN],
                "scopes_supported": ["handoff:read", "handoff:write"],
                "bearer_methods_supported": ["header"],
                "resource_name": "handoff-mcp",
            })
        );
    }
    let metadata = s.http("GET", "/.well-known/oauth-authorization-server", &[], b"");
    assert_eq!(
        metadata.json(),
        json!({
            "issuer": ORIGIN,
            "authorization_endpoint": "https://handoff.example/authorize",
            "token_endpoint": "https://handoff.example/token",
            "registration_endpoint": "https://handoff.example/register",
            "revocation_endpoint": "https://handoff.example/revoke",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "client_id_metadata_document_supported": true,
            "authorization_response_iss_parameter_supported": true,
            "scopes_supported": ["handoff:read", "handoff:write"],
        })
    );
    let preflight = s.http("OPTIONS", "/token", &[], b"");
    assert_eq!(preflight.status, 204);
    assert_eq!(
        preflight.header("access-control-allow-headers"),
        Some("authorization, content-type, mcp-protocol-version")
    );
    let health = s.http("GET", "/healthz", &[], b"");
    assert_eq!(
        health.body,
        format!("ok\nversion: {}\noauth: on\n", env!("CARGO_PKG_VERSION"))
    );
    // Off (no key): the bare scheme, and every OAuth path is the bare 404.
    let off = Server::new();
    let reply = off.http(
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        b"{}",
    );
    assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
    for (method, path) in [
        ("GET", "/.well-known/oauth-protected-resource"),
        ("GET", "/.well-known/oauth-protected-resource/mcp"),
        ("GET", "/.well-known/oauth-authorization-server"),
        ("POST", "/register"),
        ("GET", "/authorize"),
        ("POST", "/token"),
    ] {
        let reply = off.http(method, path, &[], b"");
        assert_eq!(
            (reply.status, reply.body.as_str()),
            (404, "Not Found"),
            "{path}"
        );
    }
    assert_eq!(
        off.http("GET", "/healthz", &[], b"").body,
        format!(
            "ok\nversion: {}\noauth: off (no OAUTH_KEY secret is set)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[test]
fn a_one_project_grant_needs_no_project_id_and_the_history_names_its_client() {
    let s = server();
    let (_, tokens) = granted(&s, PROJECT, &[("access", "write")]);
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 604_800);
    assert_eq!(tokens["scope"], "handoff:read handoff:write");
    let access = tokens["access_token"].as_str().unwrap();
    let created = text_of(&call(
        &s,
        access,
        "set_north_star",
        json!({"text": "Ship OAuth"}),
    ));
    assert!(
        created.starts_with("Created project \"alpha\""),
        "{created}"
    );
    let state = text_of(&call(&s, access, "get_state", json!({})));
    assert!(state.starts_with("🎯 NORTH STAR: Ship OAuth\n"), "{state}");
    // The grant reaches alpha alone, whatever the call names.
    let other = text_of(&call(
        &s,
        access,
        "get_state",
        json!({"project_id": "beta"}),
    ));
    assert_eq!(
        other,
        "This token reaches project \"alpha\" only, not \"beta\". Nothing was read or written."
    );
    // tools/list and the instructions say the id may be left out.
    let auth = format!("Bearer {access}");
    let listed = s.http(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", "2025-06-18"),
            ("Authorization", &auth),
        ],
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    let tools = listed.json()["result"]["tools"].clone();
    assert_eq!(tools[0]["name"], "get_state");
    assert_eq!(tools[0]["inputSchema"]["required"], json!([]));
    assert!(
        tools[0]["inputSchema"]["properties"]["project_id"]["description"]
            .as_str()
            .unwrap()
            .starts_with("The project's id. Optional")
    );
    let history = s.read_as(access, "handoff://history");
    assert!(
        history.contains("north star set: Ship OAuth — by Test client (OAuth)"),
        "{history}"
    );
}

impl Server {
    /// resources/read over /mcp with an access token.
    fn read_as(&self, access: &str, uri: &str) -> String {
        let auth = format!("Bearer {access}");
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
            "params": {"uri": uri}});
        let reply = self.http(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("MCP-Protocol-Version", "2025-06-18"),
                ("Authorization", &auth),
            ],
            body.to_string().as_bytes(),
        );
        reply.json()["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", reply.body))
            .to_owned()
    }
}

#[test]
fn a_grant_is_never_wider_than_the_token_pasted() {
    let s = server();
    s.ok(
        "set_north_star",
        json!({"project_id": "alpha", "text": "a"}),
    );
    s.ok("set_north_star", json!({"project_id": "beta", "text": "b"}));
    // The full token: every project, or one picked from the list, read-write or read-only.
    let client = public_client(&s, "Picker");
    let request = Request::new(&client);
    let (page, _) = consent_post(&s, &request, &[("token", TOKEN)]);
    assert!(
        page.body
            .contains("<option value=\"alpha\">alpha</option><option value=\"beta\">beta</option>"),
        "{}",
        page.body
    );
    let code = consent(
        &s,
        &request,
        TOKEN,
        &[
            ("reach", "project"),
            ("project", "beta"),
            ("access", "read"),
        ],
    );
    let tokens = exchange(&s, &client, &code).json();
    assert_eq!(tokens["scope"], "handoff:read");
    let access = tokens["access_token"].as_str().unwrap();
    assert!(text_of(&call(&s, access, "get_state", json!({}))).starts_with("🎯 NORTH STAR: b\n"));
    let refused = text_of(&call(&s, access, "set_north_star", json!({"text": "x"})));
    assert!(refused.contains("this token is read-only"), "{refused}");
    // Every project, read only.
    let code = consent(&s, &request, TOKEN, &[("reach", "all"), ("access", "read")]);
    let access = exchange(&s, &client, &code).json()["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let named = text_of(&call(&s, &access, "get_state", json!({})));
    assert_eq!(
        named,
        "get_state needs a project_id: this connection reaches several projects, and it reaches \"alpha\", \"beta\". Nothing was read or written."
    );
    assert!(text_of(&call(
        &s,
        &access,
        "get_state",
        json!({"project_id": "alpha"})
    ))
    .starts_with("🎯"));
    // A project token cannot grant another project, nor every one; a reader cannot grant writes.
    let before = grants(&s);
    let (page, _) = consent_post(&s, &request, &[("token", PROJECT)]);
    let ticket = ticket_of(&page);
    for choice in [
        vec![("reach", "all")],
        vec![("reach", "project"), ("project", "beta")],
    ] {
        let mut fields = vec![("ticket", ticket.as_str()), ("decision", "allow")];
        fields.extend(choice);
        let (reply, _) = consent_post(&s, &request, &fields);
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert!(
            reply
                .body
                .contains("That is more than the pasted token reaches"),
            "{}",
            reply.body
        );
    }
    let (page, _) = consent_post(&s, &request, &[("token", READER)]);
    let ticket = ticket_of(&page);
    let forged = [
        ("ticket", ticket.as_str()),
        ("reach", "project"),
        ("project", "alpha"),
        ("decision", "allow"),
        ("access", "write"),
    ];
    let (reply, _) = consent_post(&s, &request, &forged);
    assert!(reply
        .body
        .contains("That is more than the pasted token reaches"));
    let code = consent(&s, &request, READER, &[]);
    assert_eq!(exchange(&s, &client, &code).json()["scope"], "handoff:read");
    // A client that asks for read alone gets read alone.
    let reading = request.clone().with("scope", Some("handoff:read"));
    let code = consent(
        &s,
        &reading,
        TOKEN,
        &[("reach", "all"), ("access", "write")],
    );
    assert_eq!(exchange(&s, &client, &code).json()["scope"], "handoff:read");
    assert_ne!(grants(&s), before);
}

#[test]
fn refresh_tokens_rotate_a_retry_gets_the_same_answer_and_a_replay_revokes_the_grant() {
    let s = server();
    let (client, first) = granted(&s, PROJECT, &[]);
    let r1 = first["refresh_token"].as_str().unwrap();
    let second = refresh(&s, &client, r1);
    assert_eq!(second.status, 200, "{}", second.body);
    let second = second.json();
    let r2 = second["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(r1, r2);
    // The one just replaced, again within the grace (its answer was lost, or two refreshes went
    // out at once): the same next token, so whichever answer the client keeps works.
    s.now.set(s.now.get() + 30_000);
    let retried = refresh(&s, &client, r1);
    assert_eq!(retried.status, 200, "{}", retried.body);
    assert_eq!(retried.json()["refresh_token"], r2.as_str());
    let third = refresh(&s, &client, &r2);
    assert_eq!(third.status, 200, "{}", third.body);
    let third = third.json();
    let r3 = third["refresh_token"].as_str().unwrap();
    // r1 now is two generations old: a replay, and the whole grant ends.
    let replay = refresh(&s, &client, r1);
    assert_eq!(replay.status, 400);
    assert_eq!(replay.json()["error"], "invalid_grant");
    assert_eq!(
        refresh(&s, &client, r3).status,
        400,
        "the replay revoked the family"
    );
    let access = third["access_token"].as_str().unwrap();
    let denied = call(&s, access, "get_state", json!({}));
    assert_eq!(denied.status, 401);
    assert!(denied
        .header("www-authenticate")
        .unwrap()
        .contains("error=\"invalid_token\""));
    assert_eq!(
        s.db.stored("SELECT revoked_why FROM oauth_grant"),
        "refresh token used twice"
    );
}

#[test]
fn the_token_just_replaced_is_a_replay_once_the_grace_is_over() {
    let s = server();
    let (client, first) = granted(&s, PROJECT, &[]);
    let r1 = first["refresh_token"].as_str().unwrap();
    let r2 = refresh(&s, &client, r1).json()["refresh_token"]
        .as_str()
        .unwrap()
        .to_owned();
    s.now.set(s.now.get() + 61_000);
    assert_eq!(refresh(&s, &client, r1).status, 400);
    assert_eq!(refresh(&s, &client, &r2).status, 400, "the grant ended");
    // Another client presenting a grant's token is refused and ends nothing.
    let s = server();
    let (client, first) = granted(&s, PROJECT, &[]);
    let other = public_client(&s, "Other");
    let r1 = first["refresh_token"].as_str().unwrap();
    assert_eq!(refresh(&s, &other, r1).status, 400);
    assert_eq!(refresh(&s, &client, r1).status, 200);
    // Nor the token just replaced, within the grace, from another client.
    assert_eq!(refresh(&s, &other, r1).status, 400);
}

#[test]
fn a_grant_in_use_lives_on_and_an_unused_one_ends() {
    let s = server();
    let (client, tokens) = granted(&s, PROJECT, &[]);
    let mut refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();
    // Refreshed every 60 days for a year: never asked to log in again.
    for _ in 0..6 {
        s.now.set(s.now.get() + 60 * 86_400_000);
        let reply = refresh(&s, &client, &refresh_token);
        assert_eq!(reply.status, 200, "{}", reply.body);
        refresh_token = reply.json()["refresh_token"].as_str().unwrap().to_owned();
    }
    s.now.set(s.now.get() + 91 * 86_400_000);
    assert_eq!(refresh(&s, &client, &refresh_token).status, 400);
}

#[test]
fn revoking_on_the_page_ends_the_grant_at_once() {
    let s = server();
    let (client, tokens) = granted(&s, PROJECT, &[]);
    let access = tokens["access_token"].as_str().unwrap();
    call(&s, access, "set_north_star", json!({"text": "alpha"}));
    let page = s.http("GET", &format!("/{TOKEN}/clients"), &[], b"");
    golden::check("pages/clients.http", &redact(&page));
    // The project's own token sees it too; a read-only one sees it without a button.
    let scoped = s.http("GET", &format!("/{PROJECT}/clients"), &[], b"");
    assert!(scoped.body.contains("Test client"));
    let reader = s.http("GET", &format!("/{READER}/clients"), &[], b"");
    assert!(reader.body.contains("Test client") && !reader.body.contains("Revoke"));
    let grant = s.db.stored("SELECT id FROM oauth_grant");
    let path = format!("/{TOKEN}/clients/{grant}");
    // A post from another origin revokes nothing.
    let foreign = s.http(
        "POST",
        &path,
        &[FORM, ("Origin", "https://evil.example")],
        b"",
    );
    assert_eq!(foreign.status, 403);
    assert_eq!(
        text_of(&call(&s, access, "get_state", json!({})))
            .lines()
            .next(),
        Some("🎯 NORTH STAR: alpha")
    );
    let revoked = s.http("POST", &path, &[FORM, OWN], b"");
    assert_eq!(
        (revoked.status, revoked.header("location")),
        (303, Some("../clients"))
    );
    let denied = call(&s, access, "get_state", json!({}));
    assert_eq!(denied.status, 401);
    assert_eq!(
        denied.json()["error"]["message"],
        "Unauthorized: this grant was revoked; authorize again"
    );
    assert_eq!(
        call(&s, access, "set_north_star", json!({"text": "x"})).status,
        401
    );
    // Refused at once for every method, those that read nothing included: one round trip
    // each (the guard alone), as a live grant's makes too.
    let auth = format!("Bearer {access}");
    for (message, version) in [
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}}),
            "2025-06-18",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            "2025-06-18",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
            "2025-06-18",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            "2025-06-18",
        ),
    ] {
        let before = s.db.batches.get();
        let reply = s.http(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("MCP-Protocol-Version", version),
                ("Authorization", &auth),
            ],
            message.to_string().as_bytes(),
        );
        assert_eq!(reply.status, 401, "{message}: {}", reply.body);
        assert_eq!(
            reply.json()["error"]["message"],
            "Unauthorized: this grant was revoked; authorize again",
            "{message}"
        );
        assert_eq!(s.db.batches.get() - before, 1, "{message}");
    }
    assert_eq!(
        refresh(&s, &client, tokens["refresh_token"].as_str().unwrap()).status,
        400
    );
    assert!(!s
        .http("GET", &format!("/{TOKEN}/clients"), &[], b"")
        .body
        .contains("Test client"));
    assert_eq!(
        s.db.stored("SELECT north_star FROM project"),
        "alpha",
        "nothing written after"
    );
}

/// A page with its run's grant id and times made fixed, for its golden.
fn redact(reply: &Reply) -> Reply {
    let mut body = reply.body.clone();
    if let Some(at) = body.find("clients/") {
        let end = body[at..].find('"').unwrap() + at;
        body.replace_range(at + 8..end, "GRANT");
    }
    Reply {
        status: reply.status,
        headers: reply.headers.clone(),
        body,
    }
}

#[test]
fn removing_the_pasted_token_ends_every_grant_made_with_it() {
    let mut rotated = server();
    let (client, tokens) = granted(&rotated, PROJECT, &[]);
    let access = tokens["access_token"].as_str().unwrap();
    // The same server and database, the token rotated out of PROJECT_TOKENS.
    rotated.config = server_with(&[(AUTH_TOKEN_VAR, TOKEN)]).config;
    let denied = call(&rotated, access, "get_state", json!({}));
    assert_eq!(denied.status, 401);
    assert!(
        denied.body.contains("no longer accepted"),
        "{}",
        denied.body
    );
    assert_eq!(
        refresh(&rotated, &client, tokens["refresh_token"].as_str().unwrap()).status,
        400
    );
    let page = rotated.http("GET", &format!("/{TOKEN}/clients"), &[], b"");
    assert!(page.body.contains("No connected clients."), "{}", page.body);
}

#[test]
fn a_client_id_metadata_document_is_its_registration() {
    let s = server();
    let url = "https://app.example/oauth/client.json";
    let document = json!({"client_id": url, "client_name": "App <script>alert(1)</script>",
        "redirect_uris": [CALLBACK]});
    s.documents.borrow_mut().push((
        url.into(),
        Fetched::Answer {
            status: 200,
            body: document.to_string(),
        },
    ));
    let request = Request::new(url);
    let page = s.http("GET", &request.target(), &[], b"");
    golden::check("pages/consent.http", &page);
    let code = consent(&s, &request, PROJECT, &[]);
    let tokens = exchange(&s, url, &code);
    assert_eq!(tokens.status, 200, "{}", tokens.body);
    let (page, _) = consent_post(&s, &request, &[("token", TOKEN)]);
    golden::check("pages/consent-choice.http", &redact_ticket(&page));
    // Claude's own callbacks are fine redirect URIs.
    for callback in [
        "https://claude.ai/api/mcp/auth_callback",
        "https://claude.com/api/mcp/auth_callback",
    ] {
        let reply = register(
            &s,
            json!({"redirect_uris": [callback], "token_endpoint_auth_method": "none"}),
        );
        assert_eq!(reply.status, 201, "{callback}");
    }
}

/// A second step's page with its ticket made fixed, for its golden.
pub(crate) fn redact_ticket(reply: &Reply) -> Reply {
    let ticket = ticket_of(reply);
    Reply {
        status: reply.status,
        headers: reply.headers.clone(),
        body: reply.body.replace(&ticket, "TICKET"),
    }
}

#[test]
fn a_confidential_client_proves_its_secret_by_either_method() {
    let s = server();
    let reply = register(
        &s,
        json!({"client_name": "Secretive", "redirect_uris": [CALLBACK]}),
    );
    assert_eq!(reply.status, 201);
    let registered = reply.json();
    assert_eq!(
        registered["token_endpoint_auth_method"],
        "client_secret_basic"
    );
    let client = registered["client_id"].as_str().unwrap();
    let secret = registered["client_secret"].as_str().unwrap();
    let request = Request::new(client);
    let code = consent(&s, &request, PROJECT, &[]);
    let basic = format!(
        "Basic {}",
        base64_standard(&format!("{}:{}", enc(client), enc(secret)))
    );
    let fields = form_body(&[
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("code_verifier", VERIFIER),
        ("redirect_uri", CALLBACK),
    ]);
    let wrong = format!(
        "Basic {}",
        base64_standard(&format!("{}:nope", enc(client)))
    );
    let refused = s.http(
        "POST",
        "/token",
        &[FORM, ("Authorization", &wrong)],
        fields.as_bytes(),
    );
    assert_eq!(refused.status, 401);
    assert_eq!(refused.json()["error"], "invalid_client");
    assert_eq!(refused.header("www-authenticate"), Some("Basic"));
    let missing = exchange(&s, client, &code);
    assert_eq!(missing.json()["error"], "invalid_client");
    let ok = s.http(
        "POST",
        "/token",
        &[FORM, ("Authorization", &basic)],
        fields.as_bytes(),
    );
    assert_eq!(ok.status, 200, "{}", ok.body);
    let posted = ok.json();
    let again = token(
        &s,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", posted["refresh_token"].as_str().unwrap()),
            ("client_id", client),
            ("client_secret", secret),
        ],
    );
    assert_eq!(again.status, 200, "{}", again.body);
}

fn base64_standard(text: &str) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(match i <= chunk.len() {
                true => A[(n >> (18 - 6 * i) & 63) as usize] as char,
                false => '=',
            });
        }
    }
    out
}

/// Every authorization request that must not be served: an error page (400), never a redirect,
/// and nothing written.
#[test]
fn a_bad_authorization_request_is_an_error_page_never_a_redirect() {
    let s = server();
    let client = public_client(&s, "Fine");
    let base = Request::new(&client);
    let doc_url = "https://app.example/c.json";
    let mismatched = "https://app.example/other.json";
    let big = "https://app.example/big.json";
    let slow = "https://app.example/slow.json";
    let gone = "https://app.example/gone.json";
    let plain_http = "http://127.0.0.1:9/c.json";
    {
        let mut documents = s.documents.borrow_mut();
        documents.push((
            doc_url.into(),
            Fetched::Answer {
                status: 200,
                body:
                    json!({"client_id": doc_url, "client_name": "Doc", "redirect_uris": [CALLBACK]})
                        .to_string(),
            },
        ));
        documents.push((
            mismatched.into(),
            Fetched::Answer {
                status: 200,
                body: json!({"client_id": doc_url, "redirect_uris": [CALLBACK]}).to_string(),
            },
        ));
        documents.push((big.into(), Fetched::Failed("it is larger than 5 KB")));
        documents.push((
            slow.into(),
            Fetched::Failed("it took longer than 5 seconds"),
        ));
        documents.push((
            gone.into(),
            Fetched::Answer {
                status: 404,
                body: String::new(),
            },
        ));
    }
    let before = grants(&s);
    let cases: Vec<(Request, &str)> = vec![
        (base.clone().with("client_id", None), "client_id is missing"),
        (
            base.clone().with("client_id", Some("someone")),
            "is not known here",
        ),
        (
            base.clone().with("client_id", Some("hmc.forged.mac")),
            "is not known here",
        ),
        (
            base.clone()
                .with("redirect_uri", Some("https://evil.example/cb")),
            "is not one Fine registered",
        ),
        (
            base.clone()
                .with("redirect_uri", Some("http://127.0.0.1:33418/other")),
            "is not one Fine registered",
        ),
        // A browser reads `\` as `/` in an http URL: this goes to evil.example.
        (
            base.clone().with(
                "redirect_uri",
                Some("http://evil.example\\@127.0.0.1:33418/callback"),
            ),
            "is not one Fine registered",
        ),
        (
            base.clone().with("response_type", Some("token")),
            "response_type must be code",
        ),
        (
            base.clone().with("code_challenge", None),
            "requires PKCE with S256",
        ),
        (
            base.clone().with("code_challenge_method", Some("plain")),
            "plain is not accepted",
        ),
        (
            base.clone().with("code_challenge_method", None),
            "must be S256",
        ),
        (
            base.clone().with("code_challenge", Some("short")),
            "is not a PKCE challenge",
        ),
        (
            base.clone()
                .with("resource", Some("https://other.example/mcp")),
            "is not this server's",
        ),
        (
            Request::new(mismatched),
            "names another client_id than its URL",
        ),
        (
            Request::new(big),
            "could not be read: it is larger than 5 KB",
        ),
        (
            Request::new(slow),
            "could not be read: it took longer than 5 seconds",
        ),
        (Request::new(gone), "answered HTTP 404"),
        // An http URL is a metadata document only in development (OAUTH_LOOPBACK_CLIENTS=1).
        (Request::new(plain_http), "is not known here"),
    ];
    for (request, why) in cases {
        let page = s.http("GET", &request.target(), &[], b"");
        assert_eq!(page.status, 400, "{why}: {}", page.body);
        assert_eq!(page.header("location"), None);
        let shown = why.replace('"', "&quot;").replace('\'', "&#39;");
        assert!(page.body.contains(&shown), "{why}: {}", page.body);
        assert!(page.body.contains("Nothing was granted."));
        let (posted, _) = consent_post(&s, &request, &[("token", PROJECT)]);
        assert_eq!(posted.status, 400, "{why}");
    }
    // The document that names itself works (the cases above refused for their own reason).
    assert_eq!(
        s.http("GET", &Request::new(doc_url).target(), &[], b"")
            .status,
        200
    );
    assert_eq!(grants(&s), before);
}

#[test]
fn the_consent_page_counts_a_wrong_token_and_never_shows_one() {
    let s = server();
    let client = public_client(&s, "Counter");
    let request = Request::new(&client);
    let (wrong, counted) = consent_post(
        &s,
        &request,
        &[("token", "not-a-token-but-long-enough-for-one")],
    );
    assert_eq!((wrong.status, counted), (401, true));
    assert!(wrong
        .body
        .contains("That is not a token this server accepts."));
    assert!(!wrong.body.contains("not-a-token"));
    // An empty field is not a guess.
    let (_, counted) = consent_post(&s, &request, &[("token", "")]);
    assert!(!counted);
    let (page, counted) = consent_post(&s, &request, &[("token", PROJECT)]);
    assert_eq!((page.status, counted), (200, false));
    assert!(!page.body.contains(PROJECT), "the token is in the page");
    let (page, _) = consent_post(&s, &request, &[("token", TOKEN)]);
    assert!(!page.body.contains(TOKEN));
    // The page's own origin only, and a form body only.
    let body = form_body(&[("token", PROJECT)]);
    let foreign = s.http(
        "POST",
        &request.target(),
        &[FORM, ("Origin", "https://evil.example")],
        body.as_bytes(),
    );
    assert_eq!(foreign.status, 403);
    let none = s.http("POST", &request.target(), &[FORM], body.as_bytes());
    assert_eq!(none.status, 403);
    let json = s.http(
        "POST",
        &request.target(),
        &[("Content-Type", "application/json"), OWN],
        b"{}",
    );
    assert_eq!(json.status, 415);
    // The page may post to its own origin and to the client's callback origin, nothing else.
    let csp = page.header("content-security-policy").unwrap();
    assert!(
        csp.contains("form-action 'self' http://127.0.0.1:33418;"),
        "{csp}"
    );
    assert!(csp.contains("frame-ancestors 'none'"));
    // A ticket altered, or of another request, or too old, starts over.
    let ticket = ticket_of(&page);
    let other = request
        .clone()
        .with("code_challenge", Some(&challenge(&"z".repeat(50))));
    let mut tampered = ticket.clone();
    tampered.insert(5, 'x');
    for (req, t) in [(&request, tampered.as_str()), (&other, ticket.as_str())] {
        let (reply, _) = consent_post(&s, req, &[("ticket", t), ("decision", "allow")]);
        assert_eq!(reply.status, 400);
        assert!(reply
            .body
            .contains("This page has expired or is not this request&#39;s."));
    }
    s.now.set(s.now.get() + 16 * 60_000);
    let (late, _) = consent_post(&s, &request, &[("ticket", &ticket), ("decision", "allow")]);
    assert_eq!(late.status, 400);
    // Deny: the client is told, with its state.
    s.now.set(s.now.get() - 16 * 60_000);
    let (denied, _) = consent_post(&s, &request, &[("ticket", &ticket), ("decision", "deny")]);
    let query = redirected(&denied);
    assert_eq!(value(&query, "error"), Some("access_denied"));
    assert_eq!(value(&query, "state"), Some("s t&8"));
    assert_eq!(grants(&s), "");
}

/// A token request's fields.
type Fields<'a> = Vec<(&'a str, &'a str)>;

/// Every refusal of the token endpoint: its RFC 6749 error code, a sentence, and nothing written.
#[test]
fn the_token_endpoint_refuses_per_the_rfcs_and_writes_nothing() {
    let s = server();
    let client = public_client(&s, "Exchanger");
    let other = public_client(&s, "Other");
    let request = Request::new(&client);
    let code = consent(&s, &request, PROJECT, &[]);
    let keys = seal::Keys::parse(KEY).unwrap();
    let mut expired = seal::Code::open(&keys, &code).unwrap();
    expired.expires_at = s.now.get() - 1;
    let expired = expired.seal(&keys);
    let mut elsewhere = seal::Code::open(&keys, &code).unwrap();
    elsewhere.resource = "https://other.example/mcp".into();
    let elsewhere = elsewhere.seal(&keys);
    let foreign_key = seal::Keys::parse("another-key-of-thirty-two-bytes-or-more!").unwrap();
    let forged = seal::Code::open(&keys, &code).unwrap().seal(&foreign_key);
    let wrong_verifier = "w".repeat(43);
    let grant = "authorization_code";
    let before = grants(&s);
    let cases: Vec<(Fields, &str, &str)> = vec![
        (
            vec![
                ("grant_type", grant),
                ("code", &code),
                ("client_id", &client),
            ],
            "invalid_request",
            "code_verifier is missing",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code", &code),
                ("code_verifier", &wrong_verifier),
                ("client_id", &client),
            ],
            "invalid_grant",
            "code_verifier does not match",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code", &code),
                ("code_verifier", "short"),
                ("client_id", &client),
            ],
            "invalid_grant",
            "code_verifier does not match",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code", &code),
                ("code_verifier", VERIFIER),
                ("client_id", &other),
            ],
            "invalid_grant",
            "issued to another client",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code", &code),
                ("code_verifier", VERIFIER),
                ("client_id", &client),
                ("redirect_uri", "http://127.0.0.1:1/x"),
            ],
            "invalid_grant",
            "redirect_uri is not the one",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code", &code),
                ("code_verifier", VERIFIER),
                ("client_id", &client),
                ("resource", "https://other.example/mcp"),
            ],
            "invalid_target",
            "one resource is https://handoff.example/mcp",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code", &expired),
                ("code_verifier", VERIFIER),
                ("client_id", &client),
            ],
            "invalid_grant",
            "the code has expired",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code", &elsewhere),
                ("code_verifier", VERIFIER),
                ("client_id", &client),
            ],
            "invalid_grant",
            "for another resource",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code", &forged),
                ("code_verifier", VERIFIER),
                ("client_id", &client),
            ],
            "invalid_grant",
            "not one this server issued",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code_verifier", VERIFIER),
                ("client_id", &client),
            ],
            "invalid_request",
            "code is missing",
        ),
        (
            vec![("grant_type", "password"), ("client_id", &client)],
            "unsupported_grant_type",
            "grant_type must be",
        ),
        (
            vec![("code", &code), ("client_id", &client)],
            "invalid_request",
            "grant_type is missing",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code", &code),
                ("code_verifier", VERIFIER),
            ],
            "invalid_request",
            "client_id is missing",
        ),
        (
            vec![
                ("grant_type", grant),
                ("code", &code),
                ("code_verifier", VERIFIER),
                ("client_id", "nobody"),
            ],
            "invalid_client",
            "not known here",
        ),
        (
            vec![
                ("grant_type", "refresh_token"),
                ("refresh_token", "hmr.x.y"),
                ("client_id", &client),
            ],
            "invalid_grant",
            "not one this server issued",
        ),
    ];
    for (fields, error, why) in cases {
        let reply = token(&s, &fields);
        let body = reply.json();
        assert_eq!(body["error"], error, "{fields:?}: {}", reply.body);
        assert!(
            body["error_description"].as_str().unwrap().contains(why),
            "{fields:?}: {}",
            reply.body
        );
        assert!(matches!(reply.status, 400 | 401), "{fields:?}");
        assert_eq!(reply.header("cache-control"), Some("no-store"));
    }
    assert_eq!(grants(&s), before, "a refused exchange writes nothing");
    let not_form = s.http(
        "POST",
        "/token",
        &[("Content-Type", "application/json")],
        b"{}",
    );
    assert_eq!(
        (not_form.status, not_form.json()["error"].clone()),
        (415, json!("invalid_request"))
    );
    // The code works once; a second use is refused and revokes what the first gave.
    let first = exchange(&s, &client, &code);
    assert_eq!(first.status, 200);
    let access = first.json()["access_token"].as_str().unwrap().to_owned();
    assert_eq!(call(&s, &access, "get_state", json!({})).status, 200);
    let replay = exchange(&s, &client, &code);
    assert_eq!(replay.json()["error"], "invalid_grant");
    assert_eq!(call(&s, &access, "get_state", json!({})).status, 401);
}

#[test]
fn registration_refuses_what_it_cannot_serve() {
    let s = server();
    for (metadata, error, why) in [
        (
            json!({}),
            "invalid_redirect_uri",
            "redirect_uris must be an array",
        ),
        (
            json!({"redirect_uris": []}),
            "invalid_redirect_uri",
            "1 to 10",
        ),
        (
            json!({"redirect_uris": ["http://evil.example/cb"]}),
            "invalid_redirect_uri",
            "other than loopback",
        ),
        (
            json!({"redirect_uris": ["javascript:alert(1)"]}),
            "invalid_redirect_uri",
            "would run",
        ),
        (
            json!({"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "private_key_jwt"}),
            "invalid_client_metadata",
            "token_endpoint_auth_method",
        ),
        (
            json!({"redirect_uris": [CALLBACK], "grant_types": ["implicit"]}),
            "invalid_client_metadata",
            "grant_types must include authorization_code",
        ),
        (
            json!({"redirect_uris": [CALLBACK], "response_types": ["token"]}),
            "invalid_client_metadata",
            "response_types",
        ),
        (json!([1]), "invalid_client_metadata", "not a JSON object"),
    ] {
        let reply = register(&s, metadata.clone());
        assert_eq!(reply.status, 400, "{metadata}");
        assert_eq!(reply.json()["error"], error, "{metadata}: {}", reply.body);
        assert!(reply.body.contains(why), "{metadata}: {}", reply.body);
    }
    let garbage = s.http(
        "POST",
        "/register",
        &[("Content-Type", "application/json")],
        b"{",
    );
    assert_eq!(garbage.json()["error"], "invalid_client_metadata");
    // A long name is cut, control characters dropped; nothing is stored.
    let reply = register(
        &s,
        json!({"client_name": format!("a\u{0}b{}", "x".repeat(200)), "redirect_uris": [CALLBACK]}),
    );
    let name = reply.json()["client_name"].as_str().unwrap().to_owned();
    assert!(
        name.starts_with("abx") && name.chars().count() == 100,
        "{name}"
    );
    assert_eq!(grants(&s), "");
}

#[test]
fn access_tokens_are_checked_without_a_read_and_bound_to_this_resource() {
    let s = server();
    let (_, tokens) = granted(&s, PROJECT, &[]);
    let access = tokens["access_token"].as_str().unwrap();
    let keys = seal::Keys::parse(KEY).unwrap();
    let claims = seal::Access::open(&keys, access).unwrap();
    let mut other_audience = claims.clone();
    other_audience.resource = "https://other.example/mcp".into();
    let mut widened = claims.clone();
    widened.scope = "all".into();
    let widened_forged =
        widened.seal(&seal::Keys::parse("another-key-of-thirty-two-bytes-or-more!").unwrap());
    let mut tampered = access.to_owned();
    tampered.replace_range(10..11, if &access[10..11] == "A" { "B" } else { "A" });
    for (token, counted, why) in [
        (other_audience.seal(&keys), false, "for another resource"),
        (widened_forged, true, "not one this server issued"),
        (tampered, true, "not one this server issued"),
    ] {
        let auth = format!("Bearer {token}");
        let (reply, was_counted) = s.http_counted(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Authorization", &auth),
            ],
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        );
        assert_eq!((reply.status, was_counted), (401, counted), "{why}");
        assert!(reply.body.contains(why), "{}", reply.body);
    }
    // Expired: refused, not counted (a client holding it in good faith refreshes).
    s.now.set(s.now.get() + 7 * 86_400_000);
    let auth = format!("Bearer {access}");
    let (reply, counted) = s.http_counted(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &auth),
        ],
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    assert_eq!((reply.status, counted), (401, false));
    assert_eq!(
        reply.header("www-authenticate"),
        Some("Bearer resource_metadata=\"https://handoff.example/.well-known/oauth-protected-resource/mcp\", scope=\"handoff:read handoff:write\", error=\"invalid_token\", error_description=\"the access token has expired; refresh it\"")
    );
    // A tool call under a grant is still one round trip: the guard rides in its batch.
    s.now.set(s.now.get() - 3_600_000);
    let before = s.db.batches.get();
    assert_eq!(call(&s, access, "get_state", json!({})).status, 200);
    assert_eq!(s.db.batches.get() - before, 1);
}

/// The limits of the consent page's ticket and of a code, at their edges.
#[test]
fn a_ticket_lives_fifteen_minutes_and_a_code_one() {
    let s = server();
    let client = public_client(&s, "Timer");
    let request = Request::new(&client);
    let (page, _) = consent_post(&s, &request, &[("token", PROJECT)]);
    let ticket = ticket_of(&page);
    let allow = |s: &Server| {
        let fields = [
            ("ticket", ticket.as_str()),
            ("reach", "project"),
            ("project", "alpha"),
            ("decision", "allow"),
        ];
        consent_post(s, &request, &fields).0
    };
    let start = s.now.get();
    s.now.set(start + 14 * 60_000);
    let code_query = redirected(&allow(&s));
    let code = value(&code_query, "code").unwrap().to_owned();
    s.now.set(start + 15 * 60_000);
    assert_eq!(allow(&s).status, 400, "a ticket at its end has ended");
    // The code, a minute and a moment later.
    s.now.set(start + 14 * 60_000 + 60_001);
    let late = exchange(&s, &client, &code);
    assert_eq!(
        late.json()["error_description"],
        "the code has expired; authorize again"
    );
    assert_eq!(grants(&s), "");
}

#[test]
fn a_project_must_be_an_id_and_a_lone_redirect_uri_may_be_left_out() {
    let s = server();
    let client = public_client(&s, "Chooser");
    let request = Request::new(&client);
    let (page, _) = consent_post(&s, &request, &[("token", TOKEN)]);
    let ticket = ticket_of(&page);
    let fields = [
        ("ticket", ticket.as_str()),
        ("reach", "project"),
        ("project", "a b"),
        ("decision", "allow"),
    ];
    let (reply, _) = consent_post(&s, &request, &fields);
    assert_eq!(reply.status, 200);
    assert!(reply.body.contains("Choose a project"), "{}", reply.body);
    // One registered redirect URI is the one meant when none is named; of two, one must be.
    let lone = request.clone().with("redirect_uri", None);
    assert_eq!(s.http("GET", &lone.target(), &[], b"").status, 200);
    let code = consent(&s, &lone, PROJECT, &[]);
    assert_eq!(exchange(&s, &client, &code).status, 200);
    let reply = register(
        &s,
        json!({"redirect_uris": [CALLBACK, "https://app.example/cb"], "token_endpoint_auth_method": "none"}),
    );
    let two = reply.json()["client_id"].as_str().unwrap().to_owned();
    let unnamed = Request::new(&two).with("redirect_uri", None);
    let page = s.http("GET", &unnamed.target(), &[], b"");
    assert_eq!(page.status, 400);
    assert!(page.body.contains("redirect_uri is missing"));
}

#[test]
fn registration_takes_every_redirect_uri_within_the_rules_and_no_more() {
    let s = server();
    let uris = |n: usize| {
        (0..n)
            .map(|i| format!("http://127.0.0.1:{}/cb", 1000 + i))
            .collect::<Vec<_>>()
    };
    assert_eq!(register(&s, json!({"redirect_uris": uris(10)})).status, 201);
    let eleven = register(&s, json!({"redirect_uris": uris(11)}));
    assert_eq!(eleven.status, 400);
    assert!(
        eleven.body.contains("1 to 10 URIs, not 11"),
        "{}",
        eleven.body
    );
    let longest = format!("https://a.example/{}", "x".repeat(1000 - 18));
    assert_eq!(longest.len(), 1000);
    assert_eq!(
        register(&s, json!({"redirect_uris": [longest]})).status,
        201
    );
    for bad in ["a_b:/cb", "1app:/cb", "myapp:", "My+App:/cb"] {
        let reply = register(&s, json!({"redirect_uris": [bad]}));
        assert_eq!(reply.status, 400, "{bad}");
    }
    // An app's own scheme that is well formed: tests/wire/oauth_clients.rs (a setting allows it).
    // Grant and response types, when listed, are the ones this server serves.
    let full = json!({"redirect_uris": [CALLBACK], "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"]});
    assert_eq!(register(&s, full).status, 201);
    let mixed =
        json!({"redirect_uris": [CALLBACK], "grant_types": ["authorization_code", "implicit"]});
    assert_eq!(register(&s, mixed).status, 400);
}

#[test]
fn a_clients_secret_is_its_own_and_outlives_a_key_rolled_in_before_it() {
    let s = server();
    let first = register(&s, json!({"client_name": "A", "redirect_uris": [CALLBACK]})).json();
    let second = register(&s, json!({"client_name": "B", "redirect_uris": [CALLBACK]})).json();
    let a = first["client_id"].as_str().unwrap();
    let b = second["client_id"].as_str().unwrap();
    let a_secret = first["client_secret"].as_str().unwrap();
    assert_ne!(a_secret, second["client_secret"].as_str().unwrap());
    // The secret is the client id's MAC under the key that sealed it, and nothing stored.
    let mac = crypto::hmac_sha256(KEY.as_bytes(), &[b"client-secret.", a.as_bytes()]);
    assert_eq!(a_secret, base64::url_encode(&mac));
    let refresh_as = |s: &Server, id: &str, secret: &str| {
        token(
            s,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", "hmr.x.y"),
                ("client_id", id),
                ("client_secret", secret),
            ],
        )
        .json()["error"]
            .clone()
    };
    // A's secret is not B's: the client is refused before its token is looked at.
    assert_eq!(refresh_as(&s, b, a_secret), "invalid_client");
    assert_eq!(refresh_as(&s, a, a_secret), "invalid_grant");
    // A new key rolled in first: what the old one sealed still holds; without it, not.
    let mut rolled = server();
    rolled.config =
        server_with_key(&format!("a-newer-key-of-thirty-two-bytes-or-more,{KEY}")).config;
    assert_eq!(refresh_as(&rolled, a, a_secret), "invalid_grant");
    rolled.config = server_with_key("a-newer-key-of-thirty-two-bytes-or-more").config;
    assert_eq!(refresh_as(&rolled, a, a_secret), "invalid_client");
}

/// A server whose `OAUTH_KEY` is `key`.
pub(crate) fn server_with_key(key: &str) -> Server {
    Server::with_vars(&[
        (AUTH_TOKEN_VAR, TOKEN),
        (PROJECT_TOKENS_VAR, &format!("{PROJECT}=alpha")),
        (OAUTH_KEY_VAR, key),
        (PUBLIC_URL_VAR, ORIGIN),
    ])
}

#[test]
fn a_token_narrowed_narrows_every_grant_made_with_it() {
    let mut s = server();
    let (client, tokens) = granted(&s, TOKEN, &[("reach", "all")]);
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();
    let client2 = public_client(&s, "Later");
    let code = consent(&s, &Request::new(&client2), TOKEN, &[("reach", "all")]);
    // The same token, now a project token of alpha: a grant of every project is wider than it.
    s.config = server_with(&[(PROJECT_TOKENS_VAR, &format!("{TOKEN}=alpha"))]).config;
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(
        call(&s, access, "get_state", json!({"project_id": "alpha"})).status,
        401
    );
    let refused = refresh(&s, &client, &refresh_token);
    assert!(
        refused.body.contains("no longer reaches what it granted"),
        "{}",
        refused.body
    );
    let refused = exchange(&s, &client2, &code);
    assert!(
        refused.body.contains("no longer accepted"),
        "{}",
        refused.body
    );
}

#[test]
fn grants_that_ended_a_month_ago_are_deleted() {
    let s = server();
    let (_, _) = granted(&s, PROJECT, &[]);
    let (_, _) = granted(&s, PROJECT, &[]);
    let ids: Vec<String> =
        s.db.stored("SELECT group_concat(id) FROM oauth_grant")
            .split(',')
            .map(str::to_owned)
            .collect();
    let day = 86_400_000;
    let now = s.now.get();
    s.db.conn
        .execute_batch(&format!(
            "UPDATE oauth_grant SET revoked_at = {} WHERE id = '{}';
             UPDATE oauth_grant SET revoked_at = {} WHERE id = '{}';",
            now - 31 * day,
            ids[0],
            now - 29 * day,
            ids[1]
        ))
        .unwrap();
    granted(&s, PROJECT, &[]);
    let kept = s.db.stored("SELECT group_concat(id) FROM oauth_grant");
    assert!(!kept.contains(&ids[0]) && kept.contains(&ids[1]), "{kept}");
}

/// A grant's request whose storage fails for another reason is told as that failure, never as
/// a revoked grant.
#[test]
fn a_storage_failure_under_a_grant_is_not_a_revocation() {
    let s = server();
    let (_, tokens) = granted(&s, PROJECT, &[]);
    let access = tokens["access_token"].as_str().unwrap();
    s.db.broken.set(true);
    let reply = call(&s, access, "get_state", json!({}));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        text_of(&reply).starts_with("The database could not be read"),
        "{}",
        reply.body
    );
}

/// A pasted token makes at most fifty live grants: the fifty-first exchange is refused with a
/// sentence and writes nothing, another token's grants are apart, and a grant revoked makes
/// room.
#[test]
fn a_token_has_fifty_live_grants_and_no_more() {
    let s = server();
    for _ in 0..50 {
        granted(&s, PROJECT, &[]);
    }
    let one_more = |s: &Server| {
        let client = public_client(s, "One too many");
        let code = consent(s, &Request::new(&client), PROJECT, &[]);
        exchange(s, &client, &code)
    };
    let before = grants(&s);
    let refused = one_more(&s);
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.json(),
        json!({"error": "invalid_grant", "error_description": "the token used on the consent page has 50 connected clients already; revoke some on the projects page"})
    );
    assert_eq!(grants(&s), before, "a refused exchange writes nothing");
    granted(&s, TOKEN, &[("reach", "all")]);
    let grant =
        s.db.stored("SELECT id FROM oauth_grant WHERE scope <> 'all' LIMIT 1");
    let revoked = s.http(
        "POST",
        &format!("/{TOKEN}/clients/{grant}"),
        &[FORM, OWN],
        b"",
    );
    assert_eq!(revoked.status, 303);
    assert_eq!(one_more(&s).status, 200);
    assert_eq!(
        s.db.stored("SELECT CAST(count(*) AS TEXT) FROM oauth_grant WHERE revoked_at IS NULL"),
        "51"
    );
}

/// A client's name is at most 100 characters, and so is a name in the history: the name is cut
/// to leave room for " (OAuth)", so a write through a grant is always marked as one.
#[test]
fn the_longest_client_name_is_still_marked_as_oauth_in_the_history() {
    let s = server();
    let name = "n".repeat(100);
    let client = public_client(&s, &name);
    let code = consent(&s, &Request::new(&client), PROJECT, &[]);
    let reply = exchange(&s, &client, &code);
    let access = reply.json()["access_token"].as_str().unwrap().to_owned();
    call(&s, &access, "set_north_star", json!({"text": "alpha"}));
    assert_eq!(
        s.db.stored("SELECT client FROM event"),
        format!("{} (OAuth)", "n".repeat(92))
    );
}

/// A configured token that starts as an access token does (`hma.`) is still that token with
/// OAuth on: a bearer that no key sealed is looked up among the configured tokens before it is
/// refused as a guess.
#[test]
fn a_configured_token_shaped_as_an_access_token_is_still_that_token() {
    let s = server_with(&[(AUTH_TOKEN_VAR, "hma.a-token-that-looks-sealed-and-is-long")]);
    let reply = call(
        &s,
        "hma.a-token-that-looks-sealed-and-is-long",
        "set_north_star",
        json!({"project_id": "alpha", "text": "alpha"}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let (refused, counted) = s.http_counted(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", "Bearer hma.not-configured"),
        ],
        b"{}",
    );
    assert_eq!((refused.status, counted), (401, true));
    assert!(refused
        .header("www-authenticate")
        .unwrap()
        .contains("error=\"invalid_token\""));
    // A wrong token that is not shaped as an access token is a wrong token, no more.
    let (wrong, counted) = s.http_counted(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", "Bearer a-wrong-token"),
        ],
        b"{}",
    );
    assert_eq!((wrong.status, counted), (401, true));
    assert_eq!(
        wrong.header("www-authenticate"),
        Some("Bearer resource_metadata=\"https://handoff.example/.well-known/oauth-protected-resource/mcp\", scope=\"handoff:read handoff:write\"")
    );
}

/// The plain-text state (`plain`) takes an access token as a bearer header, within its grant,
/// and answers get_state's texts byte for byte; once the grant is revoked, a 401.
#[test]
fn an_access_token_reads_the_plain_text_state_within_its_grant() {
    let s = server();
    let (_, tokens) = granted(&s, READER, &[]);
    let access = tokens["access_token"].as_str().unwrap();
    s.ok(
        "set_north_star",
        json!({"project_id": "alpha", "text": "Read by a hook"}),
    );
    s.ok(
        "set_north_star",
        json!({"project_id": "beta", "text": "Not the grant's"}),
    );
    let auth = format!("Bearer {access}");
    let get = |project: &str| {
        let path = format!("/projects/{project}/state.txt");
        s.http("GET", &path, &[("Authorization", &auth)], b"")
    };
    let texts = crate::support::texts(&call(&s, access, "get_state", json!({})).json()["result"]);
    let reply = get("alpha");
    assert_eq!(
        (reply.status, reply.body.as_str()),
        (200, format!("{}\n{}\n", texts[0], texts[1]).as_str())
    );
    assert!(reply.body.starts_with("🎯 NORTH STAR: Read by a hook\n"));
    let other = get("beta");
    assert_eq!(
        (other.status, other.body.as_str()),
        (
            404,
            "This token reaches project \"alpha\" only, not \"beta\". Nothing was read or written.\n"
        )
    );
    // The grant reaches one project, so the state needs no id.
    let unnamed = s.http("GET", "/state.txt", &[("Authorization", &auth)], b"");
    assert_eq!((unnamed.status, &unnamed.body), (200, &reply.body));
    assert_eq!(unnamed.header("x-handoff-project"), Some("alpha"));
    revoke_the_grant_on_the_page(&s);
    for path in ["/projects/alpha/state.txt", "/state.txt"] {
        let denied = s.http("GET", path, &[("Authorization", &auth)], b"");
        assert_eq!(denied.status, 401, "{}", denied.body);
        assert_eq!(
            (denied.header("content-type"), denied.body.as_str()),
            (
                Some("text/plain; charset=utf-8"),
                "Unauthorized: this grant was revoked; authorize again\n"
            )
        );
    }
}
