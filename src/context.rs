//! The one value through which the outside world reaches the core for a request: storage, the
//! id source, the clock and who is calling. The shell builds it (D1, random UUIDs, the Workers
//! clock); tests build it with SQLite, a counter and a pinned time. Adding a capability is a
//! field here, not a new parameter on every signature. No I/O happens here.

use crate::store::{Change, Sql};

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

/// Who is calling, as far as the request says. Untrusted data: stored and shown folded, never
/// used to decide anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller {
    /// The product token of the `User-Agent` header (`claude-code/2.1.332`), if any.
    pub user_agent: Option<String>,
    /// `name/version` from the 2026-07-28 `_meta` client info of the message, if it has one.
    pub client_info: Option<String>,
}

impl Caller {
    /// Reads the caller from the request's `User-Agent`.
    pub fn from_user_agent(user_agent: Option<&str>) -> Caller {
        Caller {
            user_agent: user_agent.and_then(product_token),
            client_info: None,
        }
    }

    /// The client's name as it sent it: the `_meta` client info, else the User-Agent's product
    /// token, else `unknown`.
    pub fn client(&self) -> &str {
        self.client_info
            .as_deref()
            .or(self.user_agent.as_deref())
            .unwrap_or("unknown")
    }
}

/// Longest client name kept.
pub const CLIENT_MAX: usize = 100;

/// The first product token of a `User-Agent` (RFC 9110 §10.1.5): `claude-code/2.1.332` from
/// `claude-code/2.1.332 (external, cli)`. Control characters end it.
fn product_token(user_agent: &str) -> Option<String> {
    let token: String = user_agent
        .trim()
        .chars()
        .take_while(|c| !c.is_whitespace() && !c.is_control())
        .take(CLIENT_MAX)
        .collect();
    (!token.is_empty()).then_some(token)
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
    pub fn change(&self) -> Change<'_> {
        Change {
            at_ms: self.clock.now_ms(),
            by: self.caller.client(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_tokens() {
        let ua = |s: &str| Caller::from_user_agent(Some(s)).user_agent;
        assert_eq!(
            ua("claude-code/2.1.332 (external, cli)").as_deref(),
            Some("claude-code/2.1.332")
        );
        assert_eq!(ua("  node  ").as_deref(), Some("node"));
        assert_eq!(ua("").as_deref(), None);
        assert_eq!(ua("a\u{1b}[31mb").as_deref(), Some("a"));
        assert_eq!(ua(&"x".repeat(500)).map(|s| s.len()), Some(CLIENT_MAX));
        assert_eq!(Caller::from_user_agent(None).user_agent, None);
    }
}
