//! The one value through which the outside world reaches the core for a request: storage, the
//! id source, the clock and who is calling, including what their credential may reach (`Scope`).
//! The shell builds it (D1, random UUIDs, the Workers clock, the scope `route::plan` found);
//! tests build it with SQLite, a counter and a pinned time. Adding a capability is a field here,
//! not a new parameter on every signature. No I/O and no token here: a scope never holds one.

use crate::auth::scope::{Credential, Grant, Minted, Scope};
use crate::render;
use crate::store::guard::{Check, Guarded};
use crate::store::{Change, Sql, StoreError};

/// Hands out fresh task ids. The Worker passes random UUIDs; tests pass a counter.
pub trait NewId {
    fn new_id(&self) -> String;
}

impl<F: Fn() -> String> NewId for F {
    fn new_id(&self) -> String {
        self()
    }
}

/// The server's clock: milliseconds since the Unix epoch, UTC. `SystemTime::now` panics on
/// wasm32-unknown-unknown, so the shell hands in the Workers clock.
pub trait Clock {
    fn now_ms(&self) -> i64;
}

impl<F: Fn() -> i64> Clock for F {
    fn now_ms(&self) -> i64 {
        self()
    }
}

/// Who is calling: what their credential may reach, and who they say they are. The last two
/// are untrusted data: stored and shown folded, never used to decide anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// What the request's credential may reach; with `grant`, the only fields that decide
    /// anything.
    pub scope: Scope,
    /// The credential's name as the history records it (`Credential::name`), kept as the
    /// credential said when a surface narrows `scope` (a page's form, to the page's project).
    pub credential: String,
    /// The OAuth grant the credential came through, if it is an access token: every storage
    /// batch of the request checks it is live (`route::serve` wraps the store), and the history
    /// names its client.
    pub grant: Option<Grant>,
    /// The project token made on the page, if the credential is one: every storage batch of the
    /// request checks it is live too.
    pub minted: Option<Box<Minted>>,
    /// The product token of the `User-Agent` header (`claude-code/2.1.332`), if any.
    pub user_agent: Option<String>,
    /// `name/version` from the 2026-07-28 `_meta` client info of the message, if it has one.
    pub client_info: Option<String>,
}

impl Caller {
    /// The caller of a request: its credential and its `User-Agent`.
    pub fn new(user_agent: Option<&str>, credential: Credential) -> Caller {
        Caller {
            credential: credential.name().to_owned(),
            scope: credential.scope,
            grant: credential.grant,
            minted: credential.minted,
            user_agent: user_agent.and_then(product_token),
            client_info: None,
        }
    }

    /// Who made a change, as the history records it: the credential (`credential`), then in
    /// parentheses the client it said it was (the `_meta` client info, else the User-Agent's
    /// product token), cut so the whole stays within `CLIENT_MAX`: `owner (claude-code/2.1.332)`.
    /// An OAuth grant is its client's name alone, which the person allowed by that name.
    pub fn attribution(&self) -> String {
        let credential = self.credential.as_str();
        let client = self.client_info.as_deref().or(self.user_agent.as_deref());
        match (&self.grant, client) {
            (None, Some(client)) => {
                let room = CLIENT_MAX.saturating_sub(credential.chars().count() + 4);
                format!("{credential} ({})", render::clip(client, room))
            }
            _ => credential.to_owned(),
        }
    }
}

/// Longest client name kept.
pub const CLIENT_MAX: usize = 100;

/// A client's name as it is kept with every change: its control characters dropped, at most
/// `CLIENT_MAX` characters; `None` when nothing is left. Both sources of the name (the
/// `User-Agent` and the 2026-07-28 `_meta` client info) go through it, so every name in a
/// history meets the rule an import holds it to (`export::parse`), and an export imports again.
pub fn client_name(raw: &str) -> Option<String> {
    let name: String = raw
        .chars()
        .filter(|c| !c.is_control())
        .take(CLIENT_MAX)
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The first product token of a `User-Agent` (RFC 9110 §10.1.5): `claude-code/2.1.332` from
/// `claude-code/2.1.332 (external, cli)`. Control characters end it.
fn product_token(user_agent: &str) -> Option<String> {
    let token = user_agent
        .trim()
        .split(|c: char| c.is_whitespace() || c.is_control())
        .next()?;
    client_name(token)
}

/// Everything a request may use from outside the core.
pub struct Ctx<'a> {
    pub db: &'a dyn Sql,
    pub ids: &'a dyn NewId,
    pub clock: &'a dyn Clock,
    pub caller: Caller,
    /// After how many days get_state asks to confirm or replace the focus (FOCUS_STALE_DAYS).
    pub focus_stale_days: u32,
}

impl Ctx<'_> {
    /// The moment and author of a write made now by this caller.
    pub fn change(&self) -> Change {
        Change {
            at_ms: self.clock.now_ms(),
            by: self.caller.attribution(),
        }
    }

    /// Runs `run` with this context, its storage seen through `Guarded` when the caller holds
    /// an OAuth grant, so a revoked grant reads and writes nothing from then on; a request that
    /// ran no batch of its own (initialize, tools/list, a notification) then asks the guard
    /// alone, so a revoked grant is refused at once for every method, at one round trip where
    /// there were none. Without a grant, with this very context, so no request pays for a copy
    /// of its caller. The one way /mcp, the pages and state.txt (`route::serve`) and a legacy SSE
    /// session's messages (`sse::respond`) reach storage.
    pub async fn guarded<T>(&self, run: impl AsyncFnOnce(&Ctx<'_>) -> T) -> Result<T, StoreError> {
        let check = match (&self.caller.grant, &self.caller.minted) {
            (Some(grant), _) => Check::Grant(&grant.id),
            (None, Some(minted)) => Check::Token {
                id: &minted.id,
                hash: &minted.hash,
                now_ms: self.clock.now_ms(),
            },
            (None, None) => return Ok(run(self).await),
        };
        let guarded = Guarded::new(self.db, check);
        let ctx = Ctx {
            db: &guarded,
            caller: self.caller.clone(),
            ..*self
        };
        let out = run(&ctx).await;
        if !guarded.asked() {
            guarded.batch(Vec::new()).await?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_tokens() {
        let ua = |s: &str| Caller::new(Some(s), Credential::token(Scope::All)).user_agent;
        assert_eq!(
            ua("claude-code/2.1.332 (external, cli)").as_deref(),
            Some("claude-code/2.1.332")
        );
        assert_eq!(ua("  node  ").as_deref(), Some("node"));
        assert_eq!(ua("").as_deref(), None);
        assert_eq!(ua("a\u{1b}[31mb").as_deref(), Some("a"));
        assert_eq!(ua(&"x".repeat(500)).map(|s| s.len()), Some(CLIENT_MAX));
        assert_eq!(
            Caller::new(None, Credential::token(Scope::All)).user_agent,
            None
        );
        let granted = Credential {
            grant: Some(Grant {
                id: "g".into(),
                client: "Claude (OAuth)".into(),
            }),
            ..Credential::token(Scope::All)
        };
        let mut caller = Caller::new(Some("claude-code/1"), granted);
        caller.client_info = Some("claude-ai/0.1".into());
        assert_eq!(caller.attribution(), "Claude (OAuth)");
    }

    /// A change names the credential, then the client it said it was, within `CLIENT_MAX`.
    #[test]
    fn attribution_names_the_credential_then_the_client() {
        let of = |scope, ua: Option<&str>, info: Option<&str>| {
            let mut caller = Caller::new(ua, Credential::token(scope));
            caller.client_info = info.map(Into::into);
            caller.attribution()
        };
        assert_eq!(
            of(Scope::All, Some("claude-code/2.1.332"), None),
            "owner (claude-code/2.1.332)"
        );
        assert_eq!(of(Scope::All, Some("node"), Some("web")), "owner (web)");
        assert_eq!(of(Scope::All, None, None), "owner");
        let project = Scope::Project {
            id: "p".into(),
            write: true,
        };
        assert_eq!(of(project, None, Some("x")), "project token (x)");
        assert_eq!(of(Scope::AllReadOnly, None, None), "read-only token");
        let long = of(Scope::All, Some(&"y".repeat(100)), None);
        assert_eq!(long.chars().count(), CLIENT_MAX);
        assert!(long.starts_with("owner (yyy") && long.ends_with("y…)"));
    }
}
