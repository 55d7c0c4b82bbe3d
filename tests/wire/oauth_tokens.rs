//! OAuth's tokens and grants at the wire, as Claude's clients use them: access tokens that
//! outlive a conversation without a refresh yet end at once when their grant does, a refresh
//! token whatever the scope asked. The rest of OAuth's rules are in `oauth`.

use handoff_mcp::auth::seal;
use handoff_mcp::base64;
use handoff_mcp::config::{AUTH_TOKEN_VAR, PROJECT_TOKENS_VAR, PUBLIC_URL_VAR};
use handoff_mcp::crypto;
use serde_json::json;

use crate::oauth::{
    call, consent, consent_post, exchange, form_body, granted, public_client, refresh, register,
    server, server_with_key, text_of, ticket_of, Request, CALLBACK, FORM, KEY, PROJECT,
};
use crate::support::Server;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

#[test]
fn an_access_token_lives_a_week_and_ends_at_once_with_its_grant() {
    let s = server();
    let (_, tokens) = granted(&s, PROJECT, &[]);
    assert_eq!(tokens["expires_in"], 604_800);
    let access = tokens["access_token"].as_str().unwrap();
    call(&s, access, "set_north_star", json!({"text": "alpha"}));
    // Hours of no refresh (claude.ai's proxy has been seen not to refresh mid-conversation).
    s.now.set(s.now.get() + 3 * DAY_MS);
    assert!(text_of(&call(&s, access, "get_state", json!({}))).starts_with("🎯 NORTH STAR: alpha"));
    // Revoked on the page: no read and no write from that moment, a week's life or not.
    crate::oauth::revoke_the_grant_on_the_page(&s);
    for (tool, arguments) in [
        ("get_state", json!({})),
        ("set_north_star", json!({"text": "after"})),
    ] {
        let denied = call(&s, access, tool, arguments);
        assert_eq!(denied.status, 401, "{tool}");
        assert_eq!(
            denied.json()["error"]["message"],
            "Unauthorized: this grant was revoked; authorize again"
        );
    }
    assert_eq!(s.db.stored("SELECT north_star FROM project"), "alpha");
    // And a live grant's token ends after its week.
    let s = server();
    let (_, tokens) = granted(&s, PROJECT, &[]);
    let access = tokens["access_token"].as_str().unwrap();
    s.now.set(s.now.get() + 7 * DAY_MS - 1);
    assert_eq!(call(&s, access, "get_state", json!({})).status, 200);
    s.now.set(s.now.get() + 1);
    assert_eq!(call(&s, access, "get_state", json!({})).status, 401);
}

#[test]
fn a_refresh_token_comes_whatever_the_scope_and_offline_access_is_accepted() {
    let s = server();
    for (scope, granted_scope) in [
        (None, "handoff:read handoff:write"),
        (Some("offline_access"), "handoff:read handoff:write"),
        (
            Some("handoff:read handoff:write"),
            "handoff:read handoff:write",
        ),
        (Some("offline_access handoff:read"), "handoff:read"),
    ] {
        let client = public_client(&s, "Test client");
        let request = Request::new(&client).with("scope", scope);
        let code = consent(&s, &request, PROJECT, &[]);
        let reply = exchange(&s, &client, &code);
        assert_eq!(reply.status, 200, "{scope:?}: {}", reply.body);
        let tokens = reply.json();
        assert_eq!(tokens["scope"], granted_scope, "{scope:?}");
        let next = refresh(&s, &client, tokens["refresh_token"].as_str().unwrap());
        assert_eq!(next.status, 200, "{scope:?}: {}", next.body);
    }
}

/// Review finding 7: the token just replaced was answered with the same next pair as often as it
/// came within the grace, so a second holder could follow the client's chain unseen.
#[test]
fn the_token_just_replaced_gets_the_same_answer_twice_at_most() {
    let s = server();
    let (client, first) = granted(&s, PROJECT, &[]);
    let r1 = first["refresh_token"].as_str().unwrap();
    // Two refreshes of one token at once (claude.ai's two egress addresses): the same answer.
    let once = refresh(&s, &client, r1);
    s.now.set(s.now.get() + 1_000);
    let twice = refresh(&s, &client, r1);
    assert_eq!((once.status, twice.status), (200, 200), "{}", twice.body);
    let r2 = once.json()["refresh_token"].as_str().unwrap().to_owned();
    assert_eq!(twice.json()["refresh_token"], r2.as_str());
    let access = twice.json()["access_token"].as_str().unwrap().to_owned();
    assert_eq!(call(&s, &access, "get_state", json!({})).status, 200);
    // A third presentation within the grace: someone else holds it, and the grant ends.
    s.now.set(s.now.get() + 1_000);
    let third = refresh(&s, &client, r1);
    assert_eq!(third.status, 400);
    assert_eq!(third.json()["error"], "invalid_grant");
    assert_eq!(refresh(&s, &client, &r2).status, 400, "the grant ended");
    assert_eq!(call(&s, &access, "get_state", json!({})).status, 401);
    assert_eq!(
        s.db.stored("SELECT revoked_why FROM oauth_grant"),
        "refresh token used twice"
    );
    // Each generation has its own two answers: the next token may be presented twice again.
    let s = server();
    let (client, first) = granted(&s, PROJECT, &[]);
    let r1 = first["refresh_token"].as_str().unwrap();
    let r2 = refresh(&s, &client, r1).json()["refresh_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(refresh(&s, &client, r1).status, 200);
    let r3 = refresh(&s, &client, &r2).json()["refresh_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        refresh(&s, &client, &r2).json()["refresh_token"],
        r3.as_str()
    );
    assert_eq!(refresh(&s, &client, &r3).status, 200);
}

/// What anyone holding a sealed value reads in it: its fields, one a line.
fn fields_of(sealed: &str) -> String {
    let payload = sealed.split('.').nth(1).expect("a sealed value");
    String::from_utf8(base64::url_decode(payload).unwrap()).unwrap()
}

/// Review finding 2: the ticket, the code, the access and refresh tokens carried the plain
/// SHA-256 of the token pasted for them, which a dictionary turns back into a short token.
#[test]
fn nothing_handed_out_carries_the_pasted_tokens_hash() {
    let plain = crypto::sha256_hex(PROJECT.as_bytes());
    let tag_under = |key: &str| {
        let s = server_with_key(key);
        let client = public_client(&s, "Test client");
        let request = Request::new(&client);
        let (page, _) = consent_post(&s, &request, &[("token", PROJECT)]);
        let ticket = ticket_of(&page);
        let code = consent(&s, &request, PROJECT, &[]);
        let tokens = exchange(&s, &client, &code).json();
        let first = tokens["refresh_token"].as_str().unwrap();
        let next = refresh(&s, &client, first).json();
        let handed_out = [
            client.as_str(),
            &ticket,
            &code,
            tokens["access_token"].as_str().unwrap(),
            first,
            next["access_token"].as_str().unwrap(),
            next["refresh_token"].as_str().unwrap(),
        ];
        for value in handed_out {
            let fields = fields_of(value);
            assert!(!fields.contains(&plain), "{fields}");
            assert!(!fields.contains(PROJECT), "{fields}");
        }
        // The access token's third field is the tag: the same in every value, 32 hex digits.
        let tag = fields_of(next["access_token"].as_str().unwrap())
            .lines()
            .nth(2)
            .unwrap()
            .to_owned();
        assert_eq!(tag.len(), 32);
        assert!(fields_of(&code).contains(&tag) && fields_of(&ticket).contains(&tag));
        tag
    };
    // Keyed: another OAUTH_KEY, another tag for the same token.
    assert_ne!(
        tag_under(KEY),
        tag_under("another-oauth-key-of-thirty-two-bytes-or-more")
    );
}

/// A refresh token handed out before tags (it carries the token's plain hash) still renews its
/// grant, once, onto a tag: nobody connected is asked to log in again.
#[test]
fn a_refresh_token_from_before_tags_moves_its_grant_onto_a_tag() {
    let s = server();
    let (client, _) = granted(&s, PROJECT, &[]);
    let grant = s.db.stored("SELECT id FROM oauth_grant");
    let old = seal::Refresh {
        grant,
        tag: crypto::sha256_hex(PROJECT.as_bytes()),
        generation: 0,
    }
    .seal(&seal::Keys::parse(KEY).unwrap());
    // The grant as the Worker before left it: that token's hash is the current one.
    s.db.conn
        .execute(
            "UPDATE oauth_grant SET refresh_hash = ?1",
            [crypto::sha256_hex(old.as_bytes())],
        )
        .unwrap();
    let renewed = refresh(&s, &client, &old);
    assert_eq!(renewed.status, 200, "{}", renewed.body);
    let renewed = renewed.json();
    for value in ["access_token", "refresh_token"] {
        let fields = fields_of(renewed[value].as_str().unwrap());
        assert!(
            !fields.contains(&crypto::sha256_hex(PROJECT.as_bytes())),
            "{fields}"
        );
    }
    let access = renewed["access_token"].as_str().unwrap();
    assert_eq!(call(&s, access, "get_state", json!({})).status, 200);
    let next = renewed["refresh_token"].as_str().unwrap();
    assert_eq!(refresh(&s, &client, next).status, 200);
}

/// Rolling `OAUTH_KEY` over as docs/oauth.md says: the new key added first, what the old one
/// sealed holds and its grant moves on to the new key (and its tag) at the next refresh; the
/// old key removed then, what the new key sealed lives on.
#[test]
fn a_key_rolled_over_keeps_every_grant_that_refreshed_meanwhile() {
    const NEW: &str = "a-newer-key-of-thirty-two-bytes-or-more";
    let mut s = server_with_key(KEY);
    let (client, tokens) = granted(&s, PROJECT, &[]);
    let access = tokens["access_token"].as_str().unwrap();
    s.config = server_with_key(&format!("{NEW},{KEY}")).config;
    assert_eq!(call(&s, access, "get_state", json!({})).status, 200);
    let moved = refresh(&s, &client, tokens["refresh_token"].as_str().unwrap());
    assert_eq!(moved.status, 200, "{}", moved.body);
    let moved = moved.json();
    s.config = server_with_key(NEW).config;
    assert_eq!(call(&s, access, "get_state", json!({})).status, 401);
    let access = moved["access_token"].as_str().unwrap();
    assert_eq!(call(&s, access, "get_state", json!({})).status, 200);
    // The registration itself was sealed by the old key, and ends with it, as documented; a
    // metadata-document client's id is its URL and lives on.
    let next = refresh(&s, &client, moved["refresh_token"].as_str().unwrap());
    assert_eq!(next.json()["error"], "invalid_client");
}

/// Review finding 3: a short token on a public deployment is guessed (through the consent
/// page, a few thousand tries a second): the Worker refuses to run with one, as it does with a
/// malformed token setting, and says which and why; local development keeps its short token.
#[test]
fn a_public_deployment_refuses_a_short_token_and_local_development_keeps_one() {
    let short = "a-token-of-31-characters-at-mos"; // 31
    let just = "a-token-of-32-characters-at-most"; // 32
    assert_eq!((short.len(), just.len()), (31, 32));
    let both = format!("{just},{short}");
    let public = |vars: &[(&str, &str)]| {
        let mut all = vec![(PUBLIC_URL_VAR, "https://handoff.example")];
        all.extend_from_slice(vars);
        Server::with_vars(&all)
    };
    let cases = [
        (
            vec![(AUTH_TOKEN_VAR, just), (PROJECT_TOKENS_VAR, "short=alpha")],
            "PROJECT_TOKENS entry 1",
        ),
        (vec![(AUTH_TOKEN_VAR, &both)], "AUTH_TOKEN entry 2"),
    ];
    for (vars, which) in cases {
        let s = public(&vars);
        assert_eq!(
            s.config.credentials.as_ref().unwrap_err().to_string(),
            format!("{which} has a token shorter than 32 characters (the least unless PUBLIC_URL is http:// loopback)")
        );
        for path in [
            format!("/{just}/mcp"),
            format!("/{just}/"),
            "/authorize".into(),
        ] {
            let reply = s.http("GET", &path, &[], b"");
            assert_eq!(reply.status, 503, "{path}");
            assert!(reply.body.contains("misconfigured"), "{}", reply.body);
        }
        let health = s.http("GET", "/healthz", &[], b"");
        assert_eq!(health.status, 503);
        assert!(
            health
                .body
                .starts_with(&format!("unusable: {which} has a token shorter")),
            "{}",
            health.body
        );
        assert!(!health.body.contains(just), "{}", health.body);
    }
    // 32 characters is enough; on loopback (scripts/dev, scripts/test) or without PUBLIC_URL a
    // short token works.
    let s = public(&[(AUTH_TOKEN_VAR, just)]);
    s.credential(&format!("/{just}/mcp"), None);
    s.ok(
        "set_north_star",
        json!({"project_id": "alpha", "text": "a"}),
    );
    for url in [
        "http://127.0.0.1:8787",
        "http://localhost:8787",
        "http://[::1]:8787",
        "",
    ] {
        let s = Server::with_vars(&[(PUBLIC_URL_VAR, url), (AUTH_TOKEN_VAR, "local-dev-token")]);
        s.credential("/local-dev-token/mcp", None);
        s.ok(
            "set_north_star",
            json!({"project_id": "alpha", "text": "a"}),
        );
    }
}

/// The token pasted on a public deployment's consent page is held to the same rule, and told so.
#[test]
fn the_consent_page_says_a_token_here_is_32_characters_or_more() {
    let s = server();
    let client = public_client(&s, "Test client");
    let request = Request::new(&client);
    let (page, counted) = consent_post(&s, &request, &[("token", "test-token")]);
    assert_eq!((page.status, counted), (401, true));
    assert!(
        page.body
            .contains("A token of this server is 32 characters or more."),
        "{}",
        page.body
    );
    assert!(!page.body.contains("test-token"));
    // 32 characters is long enough to be looked up (and this one is not a token here).
    let (page, counted) = consent_post(
        &s,
        &request,
        &[("token", "a-token-of-32-characters-at-most")],
    );
    assert_eq!((page.status, counted), (401, true));
    assert!(page
        .body
        .contains("That is not a token this server accepts."));
}

fn revoke(s: &Server, fields: &[(&str, &str)]) -> crate::support::Reply {
    s.http("POST", "/revoke", &[FORM], form_body(fields).as_bytes())
}

/// Review finding 6: a client's "disconnect" could not end its grant. RFC 7009 at `/revoke`,
/// advertised: a refresh or an access token, its own, ends the whole grant at once.
#[test]
fn a_client_revokes_its_own_grant_with_either_token() {
    let s = server();
    let metadata = s.http("GET", "/.well-known/oauth-authorization-server", &[], b"");
    assert_eq!(
        metadata.json()["revocation_endpoint"],
        "https://handoff.example/revoke"
    );
    for kind in ["refresh_token", "access_token"] {
        let s = server();
        let (client, tokens) = granted(&s, PROJECT, &[]);
        let access = tokens["access_token"].as_str().unwrap();
        let presented = tokens[kind].as_str().unwrap();
        call(&s, access, "set_north_star", json!({"text": "alpha"}));
        // Another client's revocation of it ends nothing, and is answered as any other.
        let other = public_client(&s, "Other");
        let foreign = revoke(&s, &[("token", presented), ("client_id", &other)]);
        assert_eq!((foreign.status, foreign.body.as_str()), (200, "{}"));
        assert_eq!(
            call(&s, access, "get_state", json!({})).status,
            200,
            "{kind}"
        );
        let revoked = revoke(
            &s,
            &[
                ("token", presented),
                ("token_type_hint", kind),
                ("client_id", &client),
            ],
        );
        assert_eq!(
            (revoked.status, revoked.body.as_str()),
            (200, "{}"),
            "{kind}"
        );
        assert_eq!(revoked.header("access-control-allow-origin"), Some("*"));
        for (tool, arguments) in [
            ("get_state", json!({})),
            ("set_north_star", json!({"text": "after"})),
        ] {
            assert_eq!(
                call(&s, access, tool, arguments).status,
                401,
                "{kind} {tool}"
            );
        }
        let refresh_token = tokens["refresh_token"].as_str().unwrap();
        assert_eq!(refresh(&s, &client, refresh_token).status, 400, "{kind}");
        assert_eq!(s.db.stored("SELECT north_star FROM project"), "alpha");
        assert_eq!(
            s.db.stored("SELECT revoked_why FROM oauth_grant"),
            "revoked by its client"
        );
        // Again, or a token that is not this server's: 200, nothing to end.
        assert_eq!(
            revoke(&s, &[("token", presented), ("client_id", &client)]).status,
            200
        );
        assert_eq!(
            revoke(&s, &[("token", "hmr.forged.x"), ("client_id", &client)]).status,
            200
        );
    }
}

/// The revocation endpoint authenticates its client as `/token` does, and asks for a token.
#[test]
fn revocation_authenticates_the_client_and_needs_a_token() {
    let s = server();
    let reply = register(
        &s,
        json!({"client_name": "Secretive", "redirect_uris": [CALLBACK]}),
    );
    let registered = reply.json();
    let client = registered["client_id"].as_str().unwrap();
    let secret = registered["client_secret"].as_str().unwrap();
    let request = Request::new(client);
    let code = consent(&s, &request, PROJECT, &[]);
    let tokens = s
        .http(
            "POST",
            "/token",
            &[FORM],
            form_body(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("code_verifier", crate::oauth::VERIFIER),
                ("redirect_uri", CALLBACK),
                ("client_id", client),
                ("client_secret", secret),
            ])
            .as_bytes(),
        )
        .json();
    let presented = tokens["refresh_token"].as_str().unwrap();
    let wrong = revoke(
        &s,
        &[
            ("token", presented),
            ("client_id", client),
            ("client_secret", "nope"),
        ],
    );
    assert_eq!(wrong.status, 401);
    assert_eq!(wrong.json()["error"], "invalid_client");
    let nobody = revoke(&s, &[("token", presented)]);
    assert_eq!(nobody.json()["error"], "invalid_request");
    let no_token = revoke(&s, &[("client_id", client), ("client_secret", secret)]);
    assert_eq!(
        no_token.json(),
        json!({"error": "invalid_request", "error_description": "token is missing"})
    );
    assert_eq!(
        s.db.stored("SELECT coalesce(revoked_why, '-') FROM oauth_grant"),
        "-"
    );
    let done = revoke(
        &s,
        &[
            ("token", presented),
            ("client_id", client),
            ("client_secret", secret),
        ],
    );
    assert_eq!(done.status, 200);
    assert_eq!(
        s.db.stored("SELECT revoked_why FROM oauth_grant"),
        "revoked by its client"
    );
    // Form-encoded only, POST only, and a preflight for browser clients.
    let json_body = s.http(
        "POST",
        "/revoke",
        &[("Content-Type", "application/json")],
        b"{}",
    );
    assert_eq!(json_body.status, 415);
    assert_eq!(s.http("GET", "/revoke", &[], b"").status, 405);
    assert_eq!(s.http("OPTIONS", "/revoke", &[], b"").status, 204);
    // With OAuth off it is not there, as every OAuth path.
    let off = Server::new().http("POST", "/revoke", &[FORM], b"token=x");
    assert_eq!((off.status, off.body.as_str()), (404, "Not Found"));
}

/// The review's cheap items: `resource` is this server's however its scheme and host are
/// spelled; a code whose request named `redirect_uri` needs it
/// at `/token` too (RFC 6749 §4.1.3).
#[test]
fn resource_by_case_and_redirect_uri_when_it_was_sent() {
    // The 401's scope: `oauth::discovery_says_where_the_authorization_server_is_…` holds the
    // whole header.
    let s = server();
    let client = public_client(&s, "Test client");
    let shouting = "HTTPS://Handoff.EXAMPLE/mcp";
    let request = Request::new(&client).with("resource", Some(shouting));
    assert_eq!(s.http("GET", &request.target(), &[], b"").status, 200);
    for other in [
        "https://handoff.example/MCP",
        "https://handoff.example:444/mcp",
        "handoff.example/mcp",
    ] {
        let refused = Request::new(&client).with("resource", Some(other));
        assert_eq!(
            s.http("GET", &refused.target(), &[], b"").status,
            400,
            "{other}"
        );
    }
    let code = consent(&s, &request, PROJECT, &[]);
    let exchange_with = |code: &str, redirect_uri: Option<&str>| {
        let mut fields = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("code_verifier", crate::oauth::VERIFIER),
            ("client_id", client.as_str()),
            ("resource", shouting),
        ];
        fields.extend(redirect_uri.map(|uri| ("redirect_uri", uri)));
        s.http("POST", "/token", &[FORM], form_body(&fields).as_bytes())
    };
    let missing = exchange_with(&code, None);
    assert_eq!(missing.status, 400);
    assert_eq!(
        missing.json(),
        json!({"error": "invalid_request", "error_description": "redirect_uri is missing (the authorization request named one)"})
    );
    let made = exchange_with(&code, Some(CALLBACK));
    assert_eq!(made.status, 200, "{}", made.body);
    // A request that named none (a client with one redirect URI) needs none at /token.
    let lone = Request::new(&client).with("redirect_uri", None);
    let code = consent(&s, &lone, PROJECT, &[]);
    assert_eq!(exchange_with(&code, None).status, 200);
}
