//! The credential table: every configured token with what it reaches (`Credentials`), parsed
//! from `AUTH_TOKEN` and `PROJECT_TOKENS` (`parse`; `config` reads the variables) or refused,
//! naming the variable and the entry's position and never its text (`Misconfigured`); the token
//! compared in constant time against every one (`scope_of`), and the names OAuth gives a
//! configured token: its source, the hash a grant's row keeps (`source_of`), and its tag, the
//! keyed HMAC what OAuth hands out carries (`tag_of`, `tagged`). No token is ever printed.

use std::fmt;
use std::sync::OnceLock;

use subtle::{Choice, ConstantTimeEq};

use super::scope::Scope;
use crate::crypto;
use crate::model;

/// The suffix of a read-only `PROJECT_TOKENS` entry.
const READ_ONLY_SUFFIX: &str = ":read";

/// Every accepted token with its scope. Empty when no token is configured at all; then every
/// MCP path is 404, as if the server were not there.
#[derive(Clone, Default)]
pub struct Credentials {
    entries: Vec<(String, Scope)>,
    /// Each entry's tag (`tag_of`) under each OAuth key, key by key, then each entry's source
    /// (`source_of`): what OAuth names a token by, made on first use (only OAuth needs them,
    /// and a request that carries a configured token never does). Always asked with the same
    /// keys, a `Config`'s own (none while OAuth is off).
    tags: OnceLock<Vec<String>>,
}

/// A configured token as an OAuth value names it (`Credentials::tagged`): what it reaches, its
/// tag under the key that seals now (for what is handed out next) and its source (what a grant
/// row keeps).
#[derive(Debug, Clone, Copy)]
pub struct Tagged<'a> {
    pub scope: &'a Scope,
    pub tag: &'a str,
    pub source: &'a str,
}

impl Credentials {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The scope of a presented token, or `None` if no configured token is it. The token is
    /// compared in constant time with every configured token, and the loop never stops early,
    /// so the time taken says neither whether one matched nor which.
    pub fn scope_of(&self, presented: &str) -> Option<&Scope> {
        self.select(presented, constant_time_eq)
    }

    /// The configured token a tag handed out in an OAuth value names (`tag_of` under any of
    /// `keys`), or a grant's row by its source (`source_of`), if one still is: what keeps a
    /// grant, and every token issued under it, alive. A source is taken from a handed-out value
    /// too: those from before tags (their next refresh moves them onto a tag). Every name is
    /// compared, whichever matched.
    pub fn tagged(&self, tag: &str, keys: &[Vec<u8>]) -> Option<Tagged<'_>> {
        let n = self.entries.len();
        let tokens = || self.entries.iter().map(|(token, _)| token);
        let names = self.tags.get_or_init(|| {
            let mut names = Vec::new();
            for key in keys.iter().map(Some).chain([None]) {
                for token in tokens() {
                    names.push(key.map_or_else(|| source_of(token), |key| tag_of(token, key)));
                }
            }
            names
        });
        let mut found = usize::MAX;
        for (i, name) in names.iter().enumerate() {
            if crypto::same(name.as_bytes(), tag.as_bytes()) {
                found = i % n;
            }
        }
        let (_, scope) = self.entries.get(found)?;
        Some(Tagged {
            scope,
            tag: &names[found],
            source: &names[names.len() - n + found],
        })
    }

    /// `scope_of` with the comparison handed in, so a test can count the comparisons.
    fn select(&self, presented: &str, mut eq: impl FnMut(&[u8], &[u8]) -> bool) -> Option<&Scope> {
        let mut found = usize::MAX;
        for (i, (token, _)) in self.entries.iter().enumerate() {
            let hit = usize::from(eq(presented.as_bytes(), token.as_bytes()));
            // All ones on a hit, zero otherwise: selects `i` without a data-dependent branch.
            let mask = hit.wrapping_neg();
            found = (i & mask) | (found & !mask);
        }
        self.entries.get(found).map(|(_, scope)| scope)
    }
}

/// What an OAuth grant's row keeps of the token it was made with: the hex SHA-256 of the token.
/// It stays in D1, never handed out (what is handed out carries `tag_of`); it is not keyed with
/// `OAUTH_KEY`, so rolling that key over leaves every grant in place.
pub fn source_of(token: &str) -> String {
    crypto::sha256_hex(token.as_bytes())
}

/// What a code, an access or refresh token and a ticket carry of the token pasted for them: a
/// tag keyed with the `OAUTH_KEY` key that seals them (32 hex digits of an HMAC-SHA256), never
/// the token's plain hash, so a client cannot try guesses of the token against what it holds
/// (review finding 2). A refresh re-tags under the key that seals now, so a key rolled in
/// reaches every grant as its refresh tokens move on.
pub fn tag_of(token: &str, key: &[u8]) -> String {
    let mac = crypto::hmac_sha256(key, &[b"handoff-mcp source\n", token.as_bytes()]);
    crypto::hex(&mac[..16])
}

/// Compares in time that depends only on the secret's length, not on where a guess goes wrong.
///
/// The comparisons are the crate `subtle`'s, whose `Choice` keeps the compiler from turning the
/// loop into one that stops at the first difference; it cost nothing measurable (the Worker's
/// wasm 169,822 → 169,812 bytes gzip, +38 raw, 2026-12-05), under the 512 bytes a crate may cost
/// here. Its slice compare is not used as it stands: it returns at once when the lengths differ,
/// which would tell a prober the secret's length, so each of the secret's bytes is compared
/// here, with the guess's byte at that place, or counted unequal where the guess has none (the
/// slice compare alone cost +50 bytes gzip). Natively it costs about 140 instructions more
/// per request than the loop of `^` and `|` it replaced (`scripts/instructions --gate`), 0.1 %
/// of the cheapest request.
pub fn constant_time_eq(given: &[u8], secret: &[u8]) -> bool {
    let same_len = given.len().ct_eq(&secret.len());
    let eq = secret.iter().enumerate().fold(same_len, |eq, (i, s)| {
        eq & given.get(i).map_or(Choice::from(0), |g| s.ct_eq(g))
    });
    eq.into()
}

/// What is wrong with the credential variables: the variable, the entry's 1-based position in
/// it, and the rule it breaks. Its Display is the operator's log line; it never holds the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Misconfigured {
    pub var: &'static str,
    pub position: usize,
    pub problem: Problem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// Nothing between two separators.
    EmptyEntry,
    /// `=PROJECT_ID`: the token before `=` is empty.
    EmptyToken,
    /// A token with a space, a control character or a character beyond ASCII, which neither a
    /// URL path nor an Authorization header carries as is.
    TokenCharacter,
    /// A `PROJECT_TOKENS` entry without `=`.
    NoProject,
    /// A project id that breaks the project-id rule.
    ProjectId,
    /// Something after the project id other than `:read`.
    Access,
    /// A token given earlier with a different scope.
    ConflictingScope,
    /// A token shorter than `TOKEN_MIN` on a public deployment (`token_min`).
    Short,
}

impl fmt::Display for Misconfigured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule = match self.problem {
            Problem::EmptyEntry => "is empty (two separators in a row, or one at an end)",
            Problem::EmptyToken => "has an empty token before '='",
            Problem::TokenCharacter => {
                "has a token with a character other than visible ASCII (no spaces, no control characters)"
            }
            Problem::NoProject => "is not TOKEN=PROJECT_ID or TOKEN=PROJECT_ID:read",
            Problem::ProjectId => {
                "names a project id that is not 1-64 ASCII letters, digits, '-', '_' or '.', starting with a letter or digit"
            }
            Problem::Access => "ends in something other than the project id or ':read'",
            Problem::ConflictingScope => "repeats a token given earlier with a different scope",
            Problem::Short => {
                "has a token shorter than 32 characters (the least unless PUBLIC_URL is http:// loopback)"
            }
        };
        write!(f, "{} entry {} {rule}", self.var, self.position)
    }
}

/// A credential variable: its name (for `Misconfigured`) and its value, if set.
pub type Var<'a> = (&'static str, Option<&'a str>);

/// Parses both credential variables (`config` names them): the full-access tokens reach
/// everything (`AUTH_TOKEN`), the project tokens' entries one project each (`PROJECT_TOKENS`),
/// each token `shortest` characters or more. An unset or blank variable holds no token.
pub fn parse(
    full: Var<'_>,
    projects: Var<'_>,
    shortest: usize,
) -> Result<Credentials, Misconfigured> {
    let mut credentials = Credentials::default();
    for (position, entry) in entries(full.1) {
        let fail = |problem| Misconfigured {
            var: full.0,
            position,
            problem,
        };
        let token = token(entry, shortest).map_err(fail)?;
        credentials.add(token, Scope::All).map_err(fail)?;
    }
    for (position, entry) in entries(projects.1) {
        let fail = |problem| Misconfigured {
            var: projects.0,
            position,
            problem,
        };
        let (token, scope) = project_entry(entry, shortest).map_err(fail)?;
        credentials.add(token, scope).map_err(fail)?;
    }
    Ok(credentials)
}

/// The entries of a variable with their 1-based positions: split on commas and line breaks,
/// each trimmed (so `\r\n` and spaces around a comma do not matter). The whole value is trimmed
/// first, so the line break a secret file ends with is not an empty last entry.
fn entries(value: Option<&str>) -> impl Iterator<Item = (usize, &str)> {
    let value = value.unwrap_or_default().trim();
    value
        .split([',', '\n'])
        .map(str::trim)
        .enumerate()
        .filter(move |_| !value.is_empty())
        .map(|(i, entry)| (i + 1, entry))
}

/// A token, `shortest` characters or more.
fn token(entry: &str, shortest: usize) -> Result<&str, Problem> {
    if entry.is_empty() {
        return Err(Problem::EmptyEntry);
    }
    if !entry.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Problem::TokenCharacter);
    }
    if entry.len() < shortest {
        return Err(Problem::Short);
    }
    Ok(entry)
}

/// `TOKEN=PROJECT_ID` or `TOKEN=PROJECT_ID:read`. A project id holds no `=`, so the entry is
/// split at its last `=`: a token may end in base64's `=` padding.
fn project_entry(entry: &str, shortest: usize) -> Result<(&str, Scope), Problem> {
    if entry.is_empty() {
        return Err(Problem::EmptyEntry);
    }
    let (token_part, project) = entry.rsplit_once('=').ok_or(Problem::NoProject)?;
    if token_part.trim().is_empty() {
        return Err(Problem::EmptyToken);
    }
    let token = token(token_part, shortest)?;
    let (id, write) = match project.split_once(':') {
        None => (project, true),
        Some(_) => match project.strip_suffix(READ_ONLY_SUFFIX) {
            Some(id) if !id.contains(':') => (id, false),
            _ => return Err(Problem::Access),
        },
    };
    if !model::is_project_id(id) {
        return Err(Problem::ProjectId);
    }
    let scope = Scope::Project {
        id: id.to_owned(),
        write,
    };
    Ok((token, scope))
}

impl Credentials {
    /// Adds a token; the same token twice with the same scope is harmless (and kept once), with
    /// two scopes it is ambiguous, so refused.
    fn add(&mut self, token: &str, scope: Scope) -> Result<(), Problem> {
        match self.entries.iter().find(|(t, _)| t == token) {
            Some((_, earlier)) if *earlier == scope => Ok(()),
            Some(_) => Err(Problem::ConflictingScope),
            None => {
                self.entries.push((token.to_owned(), scope));
                self.tags = OnceLock::new();
                Ok(())
            }
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scopes: Vec<&Scope> = self.entries.iter().map(|(_, scope)| scope).collect();
        f.debug_struct("Credentials")
            .field("scopes", &scopes)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(id: &str, write: bool) -> Option<Scope> {
        Some(Scope::Project {
            id: id.into(),
            write,
        })
    }

    #[test]
    fn constant_time_compare() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"ab", b"abc"));
        assert!(!constant_time_eq(b"abcd", b"abc"));
        assert!(!constant_time_eq(b"", b"abc"));
        assert!(!constant_time_eq(b"abd", b"abc"));
    }

    #[test]
    fn every_configured_token_is_compared_whatever_matches() {
        let credentials =
            parse(("A", Some("first,second")), ("P", Some("third=p:read")), 0).unwrap();
        for (presented, expected) in [
            ("first", Some(Scope::All)),
            ("third", project("p", false)),
            ("fourth", None),
            ("", None),
        ] {
            let mut compared = Vec::new();
            let found = credentials.select(presented, |given, secret| {
                compared.push(String::from_utf8_lossy(secret).into_owned());
                constant_time_eq(given, secret)
            });
            assert_eq!(found.cloned(), expected, "{presented:?}");
            assert_eq!(compared, ["first", "second", "third"], "{presented:?}");
        }
        assert_eq!(Credentials::default().scope_of(""), None);
    }
}
