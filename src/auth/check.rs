//! The check of a request's credential: the path token, else `Authorization: Bearer` (a
//! configured token, a project token made on a page, or an OAuth access token), into a
//! `Credential`, or the `Denial` saying why not and whether it counts against the client's
//! address (`authenticate`); the key a failure is counted under (`failure_key`) and the answer
//! past the limit (`too_many_failures`); the client id and secret of `Authorization: Basic`,
//! for OAuth's token endpoint. It reads nothing from storage: what can be taken back while in
//! use (a grant, a project token) is asked by the request's first batch (`store::guard`).

use super::credentials::Credentials;
use super::scope::{Credential, Grant, Minted, Scope};
use super::seal;
use crate::base64;
use crate::config::OAuth;
use crate::context;
use crate::error::Error;
use crate::form;
use crate::http::{Headers, Response};

/// Why a request's credential was not accepted: a refusal answered as it is, or a token that
/// was presented and matches none (`Guess`), which is counted against the client's address
/// before its refusal is answered. Each holds the error, which the route answers as its surface
/// does (JSON-RPC, or text for state.txt), or `None` for the bare 404 of a path that is not ours.
#[derive(Debug, Clone, PartialEq)]
pub enum Denial {
    Refused(Option<Error>),
    Guess(Option<Error>),
}

/// The request's credential, or why it has none.
/// On a token path the path token alone decides (an `Authorization` header there is ignored,
/// whatever it holds), and a wrong one is the bare 404 of any unknown path; elsewhere the
/// bearer token decides, and a missing or wrong one is 401. A bearer token is a configured token
/// or, with OAuth on, an access token (`access`). With no token configured at all nothing is
/// ours: 404 either way.
///
/// A token that was presented and matches none is `Denial::Guess`, counted against the
/// client's address: that is what guessing looks like. No header, another scheme or two
/// credentials at once could never have matched, so they are refused without counting; nor is
/// an access token this server sealed that has expired or lost its grant's source, which a
/// client holds in good faith.
pub fn authenticate(
    path_token: Option<&str>,
    headers: &Headers,
    credentials: &Credentials,
    oauth: Option<&OAuth>,
    now_ms: i64,
) -> Result<Credential, Denial> {
    if credentials.is_empty() {
        return Err(Denial::Refused(None));
    }
    let configured = |token: &str| {
        let minted = oauth.filter(|_| seal::ProjectToken::looks_like(token));
        minted
            .and_then(|oauth| project_token(token, oauth))
            .or_else(|| {
                // A configured token that happens to start as a project token is still that
                // token.
                credentials
                    .scope_of(token)
                    .map(|scope| Credential::token(scope.clone()))
            })
    };
    if let Some(token) = path_token {
        return configured(token).ok_or(Denial::Guess(None));
    }
    let token = bearer(headers.get("authorization")).map_err(|e| Denial::Refused(Some(e)))?;
    let configured = || configured(token);
    if let Some(oauth) = oauth.filter(|_| seal::Access::looks_like(token)) {
        return match access(token, credentials, oauth, now_ms) {
            // A configured token that happens to start as an access token is still that token.
            Err(Denial::Guess(refused)) => configured().ok_or(Denial::Guess(refused)),
            other => other,
        };
    }
    configured().ok_or(Denial::Guess(Some(Error::Unauthorized)))
}

/// The credential of a project token made on the page: sealed by this server for one project.
/// Whether it is still live (not revoked, its project not deleted) is asked by the first storage
/// batch (`store::guard::Guarded`), which costs no round trip of its own.
fn project_token(token: &str, oauth: &OAuth) -> Option<Credential> {
    let (fields, hash) = seal::ProjectToken::open(&oauth.keys, token)?;
    let scope = Scope::from_wire(&fields.scope).filter(|scope| scope.project().is_some())?;
    Some(Credential {
        minted: Some(Box::new(Minted {
            id: fields.id,
            hash,
            label: fields.label,
        })),
        ..Credential::token(scope)
    })
}

/// The credential of an OAuth access token: sealed by this server (else a guess), for this
/// server's resource, unexpired, and made with a token that is still configured and still
/// reaches at least what the grant does. A grant revoked on the page is refused later, by the
/// first storage batch (`store::Guarded`), which costs no round trip of its own.
fn access(
    token: &str,
    credentials: &Credentials,
    oauth: &OAuth,
    now_ms: i64,
) -> Result<Credential, Denial> {
    let refuse = |why| Denial::Refused(Some(Error::InvalidToken(why)));
    let Some(claims) = seal::Access::open(&oauth.keys, token) else {
        return Err(Denial::Guess(Some(Error::InvalidToken(
            "the access token is not one this server issued",
        ))));
    };
    if claims.resource != oauth.resource {
        return Err(refuse("the access token is for another resource"));
    }
    if now_ms >= claims.expires_at {
        return Err(refuse("the access token has expired; refresh it"));
    }
    let scope =
        Scope::from_wire(&claims.scope).ok_or_else(|| refuse("the access token is malformed"))?;
    let pasted = credentials.tagged(&claims.tag, oauth.keys.all());
    if !pasted.is_some_and(|pasted| pasted.scope.covers(&scope)) {
        return Err(refuse(
            "the token this access was granted with is no longer accepted; authorize again",
        ));
    }
    // The name is cut first, so the suffix that says a grant made the change always fits.
    const SUFFIX: &str = " (OAuth)";
    let name: String = (claims.client.chars())
        .take(context::CLIENT_MAX - SUFFIX.len())
        .collect();
    let client =
        context::client_name(&format!("{name}{SUFFIX}")).unwrap_or_else(|| "OAuth client".into());
    Ok(Credential {
        grant: Some(Grant {
            id: claims.grant,
            client,
        }),
        ..Credential::token(scope)
    })
}

/// What a denied credential (`Denial::Guess`) is answered past the limit of failures from its
/// address, in place of its own refusal: the 429, the same for every token and every route,
/// which says when to try again.
pub fn too_many_failures() -> Response {
    Response::refusal(&Error::TooManyFailures)
}

/// The key a failed credential is counted under: the client's address (`CLIENT_ADDRESS_HEADER`)
/// as Cloudflare writes it, an IPv6 address (RFC 5952's canonical text) by its first four groups,
/// its /64 (one subscriber's prefix: counting the whole address would give each client 2^64 fresh
/// counters); without an address, one key for all. The text is taken as it is, not parsed:
/// std's address parsers cost 2.4 KB of the gzipped Worker (measured), for text that
/// Cloudflare writes and no client can.
pub fn failure_key(address: Option<&str>) -> String {
    let address = address.map(str::trim).unwrap_or_default();
    if address.is_empty() {
        return "unknown".into();
    }
    let (head, tail) = match address.split_once("::") {
        Some(halves) => halves,
        None if address.contains(':') => (address, ""),
        None => return address.to_owned(),
    };
    // The zero groups `::` stands for, between the groups before it and those after it.
    let groups = |part: &str| match part {
        "" => 0,
        part => part.bytes().filter(|&b| b == b':').count() + 1,
    };
    let mut full = head.to_owned();
    for _ in groups(head) + groups(tail)..8 {
        if !full.is_empty() {
            full.push(':');
        }
        full.push('0');
    }
    if !tail.is_empty() {
        full.push(':');
        full.push_str(tail);
    }
    let mut colons = 0;
    let fourth = full.bytes().position(|b| {
        colons += usize::from(b == b':');
        colons == 4
    });
    full.truncate(fourth.unwrap_or(full.len()));
    full + "::/64"
}

/// The client id and secret of an `Authorization: Basic` header (the OAuth token endpoint's
/// client authentication, RFC 6749 §2.3.1: each form-encoded, then joined by `:` and
/// base64-encoded); `None` without one, or when it does not decode.
pub fn basic_credentials(headers: &Headers) -> Option<(String, String)> {
    let value = headers.get("authorization")?.trim();
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let pair = String::from_utf8(base64::decode(encoded.trim())?).ok()?;
    let (id, secret) = pair.split_once(':')?;
    Some((form::percent_decoded(id), form::percent_decoded(secret)))
}

/// The token of an `Authorization: Bearer <token>` header: the scheme in any case, then one or
/// more spaces (RFC 9110 §11.4), then the token.
fn bearer(value: Option<&str>) -> Result<&str, Error> {
    let value = value.unwrap_or_default().trim();
    // Fetch joins a repeated header's values with ", " (and so does `Headers::new`), and no
    // accepted token holds a comma (auth/credentials.rs splits its variables on commas), so a
    // comma here means two Authorization headers, or one listing two credentials: refuse rather
    // than guess.
    if value.contains(',') {
        return Err(Error::AmbiguousAuthorization);
    }
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    let token = token.trim_start_matches(' ');
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(Error::Unauthorized);
    }
    Ok(token)
}
