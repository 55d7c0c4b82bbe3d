//! What the OAuth server hands out and reads back without storing it: access tokens,
//! authorization codes, the client ids of dynamic registration, the consent page's ticket and
//! the envelope of refresh tokens, each sealed with HMAC-SHA256 under the `OAUTH_KEY` secret
//! (`Keys`). A sealed value is `<kind>.<payload>.<mac>`: the kind names what it is (so one kind
//! is never read as another), the payload its fields joined by line breaks in URL-safe base64,
//! the MAC covers both. Sealed is not secret: anyone holding one can read its fields, so none
//! holds a token, only hashes and ids. The kinds' fields are typed here (`Access`, `Code`,
//! `Client`, `Ticket`, `Refresh`); what they mean to the OAuth flow is `oauth`'s.
//!
//! No I/O, no clock and no randomness: the time and the fresh values are handed in.

use std::fmt;

use crate::base64;
use crate::crypto::{hmac_sha256, same};

/// The keys a sealed value is checked against, the first of which seals: several are accepted
/// at once so that a new key can be rolled out while what the old one sealed is still in use.
#[derive(Clone, Default)]
pub struct Keys(Vec<Vec<u8>>);

/// The shortest key accepted, in bytes: HMAC-SHA256's own output length.
pub const KEY_MIN: usize = 32;

impl Keys {
    /// The keys of the `OAUTH_KEY` secret (comma-separated); `None` when one is shorter than
    /// `KEY_MIN` bytes or holds a space or a control character.
    pub fn parse(value: &str) -> Option<Keys> {
        let keys: Vec<Vec<u8>> = value
            .split(',')
            .map(str::trim)
            .map(|key| key.as_bytes().to_vec())
            .collect();
        let fine = keys
            .iter()
            .all(|k| k.len() >= KEY_MIN && k.iter().all(u8::is_ascii_graphic));
        fine.then_some(Keys(keys))
    }

    /// Every key, the sealing one first.
    pub fn all(&self) -> &[Vec<u8>] {
        &self.0
    }

    /// `kind.payload.mac` of these fields, sealed with the first key. A field must not hold a
    /// line break (they separate the fields); the callers seal only values they checked.
    pub fn seal(&self, kind: Kind, fields: &[&str]) -> String {
        debug_assert!(fields.iter().all(|f| !f.contains('\n')));
        let payload = base64::url_encode(fields.join("\n").as_bytes());
        let mac = self.mac(&self.0[0], kind, &payload);
        format!("{}.{payload}.{}", kind.prefix(), base64::url_encode(&mac))
    }

    /// The fields of a value sealed as `kind` under any of the keys, exactly `count` of them;
    /// `None` for anything else (another kind, a MAC that no key made, a changed payload).
    pub fn open(&self, kind: Kind, sealed: &str, count: usize) -> Option<Vec<String>> {
        self.open_keyed(kind, sealed, count)
            .map(|(fields, _)| fields)
    }

    /// `open`, and the key that sealed the value (a project token's row keeps a hash keyed
    /// with it).
    pub fn open_keyed(
        &self,
        kind: Kind,
        sealed: &str,
        count: usize,
    ) -> Option<(Vec<String>, &[u8])> {
        let rest = sealed.strip_prefix(kind.prefix())?.strip_prefix('.')?;
        let (payload, mac) = rest.split_once('.')?;
        let mac = base64::url_decode(mac)?;
        // Every key is tried, whichever matched: the time taken says nothing of which.
        let mut matched = None;
        for key in &self.0 {
            if same(&self.mac(key, kind, payload), &mac) {
                matched = Some(key.as_slice());
            }
        }
        let key = matched?;
        let text = String::from_utf8(base64::url_decode(payload)?).ok()?;
        let fields: Vec<String> = text.split('\n').map(str::to_owned).collect();
        (fields.len() == count).then_some((fields, key))
    }

    fn mac(&self, key: &[u8], kind: Kind, payload: &str) -> [u8; 32] {
        hmac_sha256(key, &[kind.prefix().as_bytes(), b".", payload.as_bytes()])
    }
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Keys({} hidden)", self.0.len())
    }
}

/// What a sealed value is. Its prefix starts the value, so a client's logs tell them apart too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Access,
    Refresh,
    Code,
    Client,
    Ticket,
    /// A token of one project, made on its page (`ProjectToken`).
    ProjectToken,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::Access => "hma",
            Kind::Refresh => "hmr",
            Kind::Code => "hmk",
            Kind::Client => "hmc",
            Kind::Ticket => "hmt",
            Kind::ProjectToken => "hpt",
        }
    }
}

/// A token of one project that the owner made on its page: its row's id, what it reaches
/// (`Scope`'s wire form, `rw:<project>` or `ro:<project>`) and its label, which the history
/// names for every write made with it. Sealed, so a request knows all three with no read; its
/// row (`store::tokens`) says whether it is still live, and keeps only `hash`: an HMAC of the
/// whole token under the key that sealed it, so the token itself is stored nowhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectToken {
    pub id: String,
    pub scope: String,
    pub label: String,
}

impl ProjectToken {
    /// The token, and the hash its row keeps.
    pub fn seal(&self, keys: &Keys) -> (String, String) {
        let token = keys.seal(Kind::ProjectToken, &[&self.id, &self.scope, &self.label]);
        let hash = token_hash(&token, &keys.0[0]);
        (token, hash)
    }

    /// Whether `token` is shaped as a project token, sealed by anyone.
    pub fn looks_like(token: &str) -> bool {
        token
            .strip_prefix(Kind::ProjectToken.prefix())
            .is_some_and(|rest| rest.starts_with('.'))
    }

    /// The fields of a project token these keys sealed, and the hash its row must hold.
    pub fn open(keys: &Keys, token: &str) -> Option<(ProjectToken, String)> {
        let (fields, key) = keys.open_keyed(Kind::ProjectToken, token, 3)?;
        let [id, scope, label] = <[String; 3]>::try_from(fields).ok()?;
        Some((ProjectToken { id, scope, label }, token_hash(token, key)))
    }
}

/// The hash a project token's row keeps: 32 hex digits of an HMAC of the token under `key`.
fn token_hash(token: &str, key: &[u8]) -> String {
    crate::crypto::hex(&hmac_sha256(key, &[b"handoff-mcp project token\n", token.as_bytes()])[..16])
}

/// An instant as a sealed field: milliseconds since the epoch, in decimal.
fn instant(field: &str) -> Option<i64> {
    field.parse().ok()
}

/// An access token's claims: the grant it was issued under, what it reaches (`Scope`'s wire
/// form), the tag of the token the person pasted on the consent page (`crate::auth::credentials::tag_of`; that
/// token must still be configured), the client's name for attribution, the resource it is for (RFC 8707's
/// audience) and when it expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub grant: String,
    pub scope: String,
    pub tag: String,
    pub client: String,
    pub resource: String,
    pub expires_at: i64,
}

impl Access {
    pub fn seal(&self, keys: &Keys) -> String {
        let expires = self.expires_at.to_string();
        keys.seal(
            Kind::Access,
            &[
                &self.grant,
                &self.scope,
                &self.tag,
                &self.client,
                &self.resource,
                &expires,
            ],
        )
    }

    /// Whether `token` is shaped as an access token (its kind's prefix), sealed by anyone.
    pub fn looks_like(token: &str) -> bool {
        token
            .strip_prefix(Kind::Access.prefix())
            .is_some_and(|rest| rest.starts_with('.'))
    }

    /// The claims of an access token these keys sealed, expired or not (the caller decides).
    pub fn open(keys: &Keys, token: &str) -> Option<Access> {
        let [grant, scope, tag, client, resource, expires] =
            <[String; 6]>::try_from(keys.open(Kind::Access, token, 6)?).ok()?;
        Some(Access {
            grant,
            scope,
            tag,
            client,
            resource,
            expires_at: instant(&expires)?,
        })
    }
}

/// An authorization code's claims: bound to the client, its redirect URI, the PKCE challenge and
/// the resource, carrying the grant the person chose (scope, and the pasted token's tag) and the
/// client's name; `redirect_sent` says whether the authorization request named the redirect URI
/// (then the token request must too: RFC 6749 §4.1.3); `nonce` makes each code unique (its hash
/// burns it), `expires_at` keeps it short-lived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    pub client_id: String,
    pub redirect_uri: String,
    pub redirect_sent: bool,
    pub challenge: String,
    pub resource: String,
    pub scope: String,
    pub tag: String,
    pub client: String,
    pub nonce: String,
    pub expires_at: i64,
}

impl Code {
    pub fn seal(&self, keys: &Keys) -> String {
        let expires = self.expires_at.to_string();
        let sent = if self.redirect_sent { "1" } else { "" };
        keys.seal(
            Kind::Code,
            &[
                &self.client_id,
                &self.redirect_uri,
                sent,
                &self.challenge,
                &self.resource,
                &self.scope,
                &self.tag,
                &self.client,
                &self.nonce,
                &expires,
            ],
        )
    }

    pub fn open(keys: &Keys, code: &str) -> Option<Code> {
        let [client_id, redirect_uri, sent, challenge, resource, scope, tag, client, nonce, expires] =
            <[String; 10]>::try_from(keys.open(Kind::Code, code, 10)?).ok()?;
        Some(Code {
            client_id,
            redirect_uri,
            redirect_sent: sent == "1",
            challenge,
            resource,
            scope,
            tag,
            client,
            nonce,
            expires_at: instant(&expires)?,
        })
    }
}

/// A dynamically registered client (RFC 7591): the client id *is* its registration, sealed, so
/// `/register` writes nothing and a registration lives as long as the key that sealed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    pub name: String,
    /// Each a URI with no space in it (checked at registration).
    pub redirect_uris: Vec<String>,
    /// `none`, `client_secret_post` or `client_secret_basic`.
    pub auth_method: String,
    pub issued_at: i64,
}

impl Client {
    pub fn seal(&self, keys: &Keys) -> String {
        let uris = self.redirect_uris.join(" ");
        let issued = self.issued_at.to_string();
        keys.seal(
            Kind::Client,
            &[&self.name, &uris, &self.auth_method, &issued],
        )
    }

    pub fn open(keys: &Keys, client_id: &str) -> Option<Client> {
        let [name, uris, auth_method, issued] =
            <[String; 4]>::try_from(keys.open(Kind::Client, client_id, 4)?).ok()?;
        Some(Client {
            name,
            redirect_uris: uris.split(' ').map(str::to_owned).collect(),
            auth_method,
            issued_at: instant(&issued)?,
        })
    }
}

/// The consent page's ticket: that the person pasted a token with this tag into
/// the page of this authorization request (client, redirect URI, challenge), so the second step
/// needs neither the token again nor a page that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub client_id: String,
    pub redirect_uri: String,
    pub challenge: String,
    pub tag: String,
    pub expires_at: i64,
}

impl Ticket {
    pub fn seal(&self, keys: &Keys) -> String {
        let expires = self.expires_at.to_string();
        keys.seal(
            Kind::Ticket,
            &[
                &self.client_id,
                &self.redirect_uri,
                &self.challenge,
                &self.tag,
                &expires,
            ],
        )
    }

    pub fn open(keys: &Keys, ticket: &str) -> Option<Ticket> {
        let [client_id, redirect_uri, challenge, tag, expires] =
            <[String; 5]>::try_from(keys.open(Kind::Ticket, ticket, 5)?).ok()?;
        Some(Ticket {
            client_id,
            redirect_uri,
            challenge,
            tag,
            expires_at: instant(&expires)?,
        })
    }
}

/// A refresh token: its grant, the tag of the token the grant was made with (so a grant whose
/// token is gone is refused before storage) and its generation (0 for the first, one more at each
/// refresh). Sealed, so only a value this server issued can touch a grant (a forged one is
/// refused before storage, so no one can revoke a grant by guessing its id); stored only as its
/// hash. A generation's token is always the same text (the seal is a MAC of these fields), so a
/// refresh answered twice, a retry or two at once, hands out the same next token, and no answer
/// leaves its client holding a token the other made dead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refresh {
    pub grant: String,
    pub tag: String,
    pub generation: i64,
}

impl Refresh {
    pub fn seal(&self, keys: &Keys) -> String {
        let generation = self.generation.to_string();
        keys.seal(Kind::Refresh, &[&self.grant, &self.tag, &generation])
    }

    pub fn open(keys: &Keys, token: &str) -> Option<Refresh> {
        let [grant, tag, generation] =
            <[String; 3]>::try_from(keys.open(Kind::Refresh, token, 3)?).ok()?;
        Some(Refresh {
            grant,
            tag,
            generation: instant(&generation)?,
        })
    }
}

/// The grant a refresh or an access token these keys sealed was issued under, expired or not:
/// what a client revokes (RFC 7009). Both kinds carry it first.
pub fn grant_of(keys: &Keys, token: &str) -> Option<String> {
    let fields = keys.open(Kind::Refresh, token, 3);
    let mut fields = fields.or_else(|| keys.open(Kind::Access, token, 6))?;
    Some(fields.swap_remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(value: &str) -> Keys {
        Keys::parse(value).unwrap()
    }

    const A: &str = "a-key-of-at-least-thirty-two-bytes-0001";
    const B: &str = "b-key-of-at-least-thirty-two-bytes-0002";

    fn access() -> Access {
        Access {
            grant: "g1".into(),
            scope: "rw:handoff".into(),
            tag: "ab".repeat(16),
            client: "Claude".into(),
            resource: "https://mcp.example/mcp".into(),
            expires_at: 1_800_000_000_000,
        }
    }

    #[test]
    fn every_kind_round_trips() {
        let k = keys(A);
        let a = access();
        assert_eq!(Access::open(&k, &a.seal(&k)), Some(a));
        let code = Code {
            client_id: "https://claude.ai/oauth/mcp-oauth-client-metadata".into(),
            redirect_uri: "https://claude.ai/api/mcp/auth_callback".into(),
            redirect_sent: true,
            challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
            resource: "https://mcp.example/mcp".into(),
            scope: "all".into(),
            tag: "cd".repeat(16),
            client: "Claude 日本".into(),
            nonce: "n".into(),
            expires_at: 5,
        };
        assert_eq!(Code::open(&k, &code.seal(&k)), Some(code));
        let client = Client {
            name: "mcp-remote".into(),
            redirect_uris: vec![
                "http://127.0.0.1:3334/cb".into(),
                "https://x.example/".into(),
            ],
            auth_method: "none".into(),
            issued_at: 7,
        };
        assert_eq!(Client::open(&k, &client.seal(&k)), Some(client));
        let ticket = Ticket {
            client_id: "c".into(),
            redirect_uri: "r".into(),
            challenge: "x".into(),
            tag: "s".into(),
            expires_at: 9,
        };
        assert_eq!(Ticket::open(&k, &ticket.seal(&k)), Some(ticket));
        let refresh = Refresh {
            grant: "g".into(),
            tag: "s".into(),
            generation: 3,
        };
        assert_eq!(Refresh::open(&k, &refresh.seal(&k)), Some(refresh));
    }

    #[test]
    fn a_value_opens_as_its_own_kind_under_its_keys_only() {
        let k = keys(A);
        let sealed = access().seal(&k);
        assert!(sealed.starts_with("hma."));
        // Another key, a key list that has it second (rotation), a tampered payload or MAC.
        assert_eq!(Access::open(&keys(B), &sealed), None);
        assert_eq!(
            Access::open(&keys(&format!("{B},{A}")), &sealed),
            Some(access())
        );
        let (head, mac) = sealed.rsplit_once('.').unwrap();
        let mut forged = access();
        forged.scope = "all".into();
        let forged_payload = forged.seal(&keys(B));
        let forged_payload = forged_payload.split('.').nth(1).unwrap();
        assert_eq!(
            Access::open(&k, &format!("hma.{forged_payload}.{mac}")),
            None
        );
        let flipped = if mac.starts_with('A') { "B" } else { "A" };
        assert_eq!(
            Access::open(&k, &format!("{head}.{flipped}{}", &mac[1..])),
            None
        );
        // The same payload and MAC under another kind's prefix is not that kind.
        let as_code = sealed.replacen("hma.", "hmk.", 1);
        assert_eq!(Code::open(&k, &as_code), None);
        for garbage in [
            "",
            "hma",
            "hma.",
            "hma..",
            "hma.x.y",
            "Bearer x",
            &sealed[1..],
        ] {
            assert_eq!(Access::open(&k, garbage), None, "{garbage:?}");
        }
    }

    #[test]
    fn keys_are_long_visible_ascii_and_debug_hides_them() {
        assert!(Keys::parse("short").is_none());
        assert!(Keys::parse(&format!("{A}, short")).is_none());
        assert!(Keys::parse(&format!("{A} x")).is_none());
        assert!(Keys::parse(&format!("{A},{B}")).is_some());
        assert_eq!(format!("{:?}", keys(A)), "Keys(1 hidden)");
    }
}
