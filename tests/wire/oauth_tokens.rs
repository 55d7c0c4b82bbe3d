//! OAuth's tokens and grants at the wire, as Claude's clients use them: access tokens that
//! outlive a conversation without a refresh yet end at once when their grant does, a refresh
//! token whatever the scope asked. The rest of OAuth's rules are in `oauth`.

use serde_json::json;

use crate::oauth::{
    call, consent, exchange, granted, public_client, refresh, server, text_of, Request, OWN,
    PROJECT,
};
use crate::support::TOKEN;

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
    let grant = s.db.stored("SELECT id FROM oauth_grant");
    let revoked = s.http(
        "POST",
        &format!("/{TOKEN}/clients/{grant}"),
        &[crate::oauth::FORM, OWN],
        b"",
    );
    assert_eq!(revoked.status, 303);
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
