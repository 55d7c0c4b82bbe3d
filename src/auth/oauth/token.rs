//! The token endpoint (RFC 6749 §3.2, with PKCE and RFC 8707's resource): a code exchanged for
//! the grant's first pair of tokens, a refresh token rotated (one retry within a grace, a replay
//! revoking the grant), and RFC 7009's revocation of a client's own token. The client is
//! authenticated first, as it registered; what is stored is `store::oauth`'s.

use serde_json::json;

use super::{client, consent, document_url, is_our_resource, oauth_error, public_json, Services};
use super::{Step, GRANT_MS, READ_SCOPE, WRITE_SCOPE};
use crate::auth::check;
use crate::auth::scope::Scope;
use crate::auth::seal;
use crate::base64;
use crate::config::OAuth;
use crate::crypto;
use crate::form;
use crate::http::{Request, Response};
use crate::store::oauth::{self as grants, Made, NewGrant};

/// The client a token request authenticates as: its id from `Authorization: Basic` or the
/// body, and its secret checked when it has one. An error answer otherwise.
fn token_client(
    req: &Request<'_>,
    fields: &[(String, String)],
    oauth: &OAuth,
) -> Result<String, Response> {
    let field = |name| form::field(fields, name);
    let basic = check::basic_credentials(req.headers);
    let (id, secret) = match &basic {
        Some((id, secret)) => (id.clone(), Some(secret.clone())),
        None => (
            field("client_id").unwrap_or_default().to_owned(),
            field("client_secret").map(str::to_owned),
        ),
    };
    let unknown = || {
        let mut refusal = oauth_error(401, "invalid_client", "the client is not known here");
        if basic.is_some() {
            refusal.headers.push(("www-authenticate", "Basic".into()));
        }
        refusal
    };
    if id.is_empty() {
        return Err(oauth_error(
            400,
            "invalid_request",
            "client_id is missing (in the body, or in Authorization: Basic)",
        ));
    }
    if document_url(&id, oauth).is_some() || client::known(&id).is_some() {
        return Ok(id);
    }
    let client = client::registered(&id, oauth).ok_or_else(unknown)?;
    if client.confidential() {
        let given = secret.unwrap_or_default();
        if !client::secret_matches(&id, &given, oauth) {
            return Err(unknown());
        }
    }
    Ok(id)
}

/// `POST /token`: an authorization code for the grant's first tokens, or a refresh token for
/// the next ones (each refresh token is used once; the grant lives on). `POST /revoke` shares
/// its client authentication.
pub(super) async fn serve(
    step: Step,
    req: &Request<'_>,
    body: &[u8],
    oauth: &OAuth,
    services: &Services<'_>,
) -> Response {
    let fields = match form::decode(body) {
        Ok(fields) => fields,
        Err(why) => return oauth_error(400, "invalid_request", &format!("the body {why}")),
    };
    let field = |name| form::field(&fields, name);
    let client_id = match token_client(req, &fields, oauth) {
        Ok(id) => id,
        Err(refusal) => return refusal,
    };
    if step == Step::Revocation {
        return revoke(&fields, &client_id, oauth, services, req.now_ms).await;
    }
    if let Some(resource) = field("resource") {
        if !is_our_resource(resource, oauth) {
            return oauth_error(
                400,
                "invalid_target",
                &format!("this server's one resource is {}", oauth.resource),
            );
        }
    }
    match field("grant_type") {
        Some("authorization_code") => exchange(req, &fields, &client_id, oauth, services).await,
        Some("refresh_token") => refresh(req, &fields, &client_id, oauth, services).await,
        Some(_) => oauth_error(
            400,
            "unsupported_grant_type",
            "grant_type must be authorization_code or refresh_token",
        ),
        None => oauth_error(400, "invalid_request", "grant_type is missing"),
    }
}

/// RFC 7009: a client revokes its own refresh or access token, authenticated as at `/token`.
/// Either ends the whole grant at once (its access tokens reach storage only while it is live,
/// `store::guard::Guarded`). A token that is not this server's, or is another client's, or whose
/// grant has ended, is answered 200 too and ends nothing (§2.2: the client can do nothing with
/// such an error). The hint (`token_type_hint`) is not needed: each kind says what it is.
async fn revoke(
    fields: &[(String, String)],
    client_id: &str,
    oauth: &OAuth,
    services: &Services<'_>,
    now: i64,
) -> Response {
    let Some(token) = form::field(fields, "token") else {
        return oauth_error(400, "invalid_request", "token is missing");
    };
    if let Some(grant) = seal::grant_of(&oauth.keys, token) {
        let revoked = grants::revoke_by_client(services.db, &grant, client_id, now).await;
        if let Err(error) = revoked {
            return storage_failure(&error);
        }
    }
    public_json(200, &json!({}))
}

/// A code's exchange: everything the code is bound to is checked, then one batch makes the grant
/// and burns the code.
async fn exchange(
    req: &Request<'_>,
    fields: &[(String, String)],
    client_id: &str,
    oauth: &OAuth,
    services: &Services<'_>,
) -> Response {
    let invalid = |why: &str| oauth_error(400, "invalid_grant", why);
    let now = req.now_ms;
    let Some(presented) = form::field(fields, "code") else {
        return oauth_error(400, "invalid_request", "code is missing");
    };
    let Some(code) = seal::Code::open(&oauth.keys, presented) else {
        return invalid("the code is not one this server issued");
    };
    if now >= code.expires_at {
        return invalid("the code has expired; authorize again");
    }
    if code.client_id != client_id {
        return invalid("the code was issued to another client");
    }
    let redirect_uri = form::field(fields, "redirect_uri");
    if redirect_uri.is_some_and(|uri| uri != code.redirect_uri) {
        return invalid("redirect_uri is not the one the code was issued for");
    }
    if code.resource != oauth.resource {
        return invalid("the code is for another resource");
    }
    let Some(verifier) = form::field(fields, "code_verifier") else {
        return oauth_error(400, "invalid_request", "code_verifier is missing (PKCE)");
    };
    let challenge = base64::url_encode(&crypto::sha256(verifier.as_bytes()));
    if !consent::is_pkce_value(verifier)
        || !crypto::same(challenge.as_bytes(), code.challenge.as_bytes())
    {
        return invalid("code_verifier does not match the code's challenge");
    }
    if redirect_uri.is_none() && code.redirect_sent {
        return oauth_error(
            400,
            "invalid_request",
            "redirect_uri is missing (the authorization request named one)",
        );
    }
    let Some(scope) = Scope::from_wire(&code.scope) else {
        return invalid("the code is malformed");
    };
    let pasted = services.credentials.tagged(&code.tag, oauth.keys.all());
    let Some(pasted) = pasted.filter(|pasted| pasted.scope.covers(&scope)) else {
        return invalid("the token this code was granted with is no longer accepted");
    };
    let grant = services.ids.new_id();
    let refresh = refresh_token(&grant, pasted.tag, 0, oauth);
    let new = NewGrant {
        id: &grant,
        code_hash: &hash(presented),
        client_id,
        client_name: &code.client,
        scope: &code.scope,
        source: pasted.source,
        refresh_hash: &hash(&refresh),
        now_ms: now,
        expires_at: now + GRANT_MS,
    };
    match grants::make_grant(services.db, &new).await {
        Ok(Made::Made) => tokens(&grant, &scope, pasted.tag, &code.client, refresh, now, oauth),
        Ok(Made::Replayed) => invalid(
            "the code was used already; the access it gave is revoked, authorize again",
        ),
        Ok(Made::TooMany) => invalid(&format!(
            "the token used on the consent page has {} connected clients already; revoke some on the projects page",
            grants::GRANTS_PER_TOKEN
        )),
        Err(error) => storage_failure(&error),
    }
}

/// A refresh: the presented token is this grant's current one (or the one before it, just
/// replaced), so the grant moves on to a new one; any older one revokes the grant.
async fn refresh(
    req: &Request<'_>,
    fields: &[(String, String)],
    client_id: &str,
    oauth: &OAuth,
    services: &Services<'_>,
) -> Response {
    let invalid = |why: &str| oauth_error(400, "invalid_grant", why);
    let now = req.now_ms;
    let Some(presented) = form::field(fields, "refresh_token") else {
        return oauth_error(400, "invalid_request", "refresh_token is missing");
    };
    let Some(sealed) = seal::Refresh::open(&oauth.keys, presented) else {
        return invalid("the refresh token is not one this server issued");
    };
    let Some(pasted) = services.credentials.tagged(&sealed.tag, oauth.keys.all()) else {
        return invalid(
            "the token this access was granted with is no longer accepted; authorize again",
        );
    };
    let next = refresh_token(&sealed.grant, pasted.tag, sealed.generation + 1, oauth);
    let presented = grants::Presented {
        grant: &sealed.grant,
        client_id,
        generation: sealed.generation,
        hash: &hash(presented),
        next_hash: &hash(&next),
    };
    let renewed = grants::refresh_grant(services.db, &presented, now, now + GRANT_MS).await;
    let renewed = match renewed {
        Ok(Some(renewed)) => renewed,
        Ok(None) => {
            return invalid(
                "the refresh token is not this grant's current one (a token used twice revokes its grant), or the grant was revoked or has expired; authorize again",
            )
        }
        Err(error) => return storage_failure(&error),
    };
    let Some(scope) = Scope::from_wire(&renewed.scope) else {
        return invalid("the grant is malformed");
    };
    if !pasted.scope.covers(&scope) {
        return invalid("the token this access was granted with no longer reaches what it granted; authorize again");
    }
    tokens(
        &sealed.grant,
        &scope,
        pasted.tag,
        &renewed.client_name,
        next,
        now,
        oauth,
    )
}

/// A grant's refresh token of one generation: always the same text (`seal::Refresh`).
fn refresh_token(grant: &str, tag: &str, generation: i64, oauth: &OAuth) -> String {
    seal::Refresh {
        grant: grant.to_owned(),
        tag: tag.to_owned(),
        generation,
    }
    .seal(&oauth.keys)
}

/// How a code or refresh token is stored: its hex SHA-256.
fn hash(token: &str) -> String {
    crypto::sha256_hex(token.as_bytes())
}

/// The token answer: a new access token and the grant's new refresh token.
fn tokens(
    grant: &str,
    scope: &Scope,
    tag: &str,
    client: &str,
    refresh: String,
    now: i64,
    oauth: &OAuth,
) -> Response {
    let access = seal::Access {
        grant: grant.to_owned(),
        scope: scope.to_wire(),
        tag: tag.to_owned(),
        client: client.to_owned(),
        resource: oauth.resource.clone(),
        // Each is checked without a read (`auth::check::authenticate`); a revoked grant is refused by
        // the first storage batch, so its life bounds only calls that read nothing.
        expires_at: now + oauth.access_ms,
    }
    .seal(&oauth.keys);
    let scopes = match scope.read_only() {
        true => READ_SCOPE.to_owned(),
        false => format!("{READ_SCOPE} {WRITE_SCOPE}"),
    };
    let mut response = public_json(
        200,
        &json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": oauth.access_ms / 1000,
            "refresh_token": refresh,
            "scope": scopes,
        }),
    );
    response.headers.push(("pragma", "no-cache".into()));
    response
}

/// A storage failure at the token endpoint: a server error the client may retry (every batch
/// here is safe to repeat); the detail goes to the log.
fn storage_failure(error: &crate::store::StoreError) -> Response {
    let mut response = oauth_error(
        503,
        "temporarily_unavailable",
        "the database did not answer; try again",
    );
    response.diagnostic = Some(format!("token endpoint: {error}"));
    response
}
