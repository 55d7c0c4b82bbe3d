//! Configuration, parsed once from the Worker's environment into a typed struct. Every binding
//! and variable name lives here; the credential table it reads from two of them is
//! `auth::credentials`'. No token is ever printed: `Config`'s Debug hides them, and a
//! misconfiguration names the variable and the entry's position, never its text.

use std::fmt;

use crate::auth::credentials::{self, Credentials, Misconfigured};
use crate::auth::seal::Keys;

/// Secret: one or more full-access tokens, separated by commas (or line breaks). Several are
/// accepted at once so that a new one can be rolled out before the old one is removed.
pub const AUTH_TOKEN_VAR: &str = "AUTH_TOKEN";
/// Secret, optional: project-scoped tokens, `TOKEN=PROJECT_ID` (read and write) or
/// `TOKEN=PROJECT_ID:read` (read only), separated by commas or line breaks.
pub const PROJECT_TOKENS_VAR: &str = "PROJECT_TOKENS";
/// Comma-separated browser origins allowed besides loopback (e.g. "https://example.com").
pub const ALLOWED_ORIGINS_VAR: &str = "ALLOWED_ORIGINS";
/// After how many days get_state's reference block asks to confirm or replace the focus.
pub const FOCUS_STALE_DAYS_VAR: &str = "FOCUS_STALE_DAYS";
/// FOCUS_STALE_DAYS when it is unset or not a whole number of days.
pub const DEFAULT_FOCUS_STALE_DAYS: u32 = 7;
/// Secret, optional: the key (32 bytes or more of visible ASCII) that seals OAuth's tokens and
/// codes; several, comma-separated, while a new one is rolled out (the first seals, all are
/// checked). Without it OAuth is off: `/healthz` says so, and the token URL and the bearer
/// header work as ever.
pub const OAUTH_KEY_VAR: &str = "OAUTH_KEY";
/// The server's public origin (`https://handoff-mcp.you.workers.dev`): the OAuth issuer and,
/// with `/mcp`, the resource every access token is for. Taken from here, never from a request's
/// Host header; without it OAuth is off.
pub const PUBLIC_URL_VAR: &str = "PUBLIC_URL";
/// Optional: how many seconds an OAuth access token lives (1 to `MOST_ACCESS_SECONDS`; a week
/// when unset or out of range). A revoked grant reads and writes nothing from that moment
/// whatever its access tokens' life (`store::guard::Guarded`), so the life bounds only calls that
/// read nothing; a long one keeps a client that does not refresh mid-conversation (claude.ai's
/// proxy) working. The test suites set a few seconds to watch clients refresh.
pub const OAUTH_ACCESS_SECONDS_VAR: &str = "OAUTH_ACCESS_SECONDS";
/// How long an access token lives when `OAUTH_ACCESS_SECONDS` does not say: a week.
pub const DEFAULT_ACCESS_SECONDS: i64 = 7 * 86_400;
/// The longest an access token may live: 90 days, a grant's life unused (`oauth::GRANT_MS`), so
/// no access token outlives the grant it was issued for.
pub const MOST_ACCESS_SECONDS: i64 = 90 * 86_400;
/// Development only, never deployed: `1` lets a client id metadata document be fetched from an
/// `http://` loopback URL (the test suites serve theirs so), which production refuses.
pub const OAUTH_LOOPBACK_CLIENTS_VAR: &str = "OAUTH_LOOPBACK_CLIENTS";
/// Optional, off unless `1`: redirect URIs in an app's own private-use scheme
/// (`com.example.app:/callback`). Off by default because any app may claim any such scheme, and
/// the consent page can name only the scheme, not who answers it; `https` and loopback `http`
/// cover Claude's clients and the SDKs.
pub const OAUTH_APP_REDIRECTS_VAR: &str = "OAUTH_APP_REDIRECTS";
/// Optional: the marketplace a new project token's share block names for the Claude Code plugin
/// (`claude plugin marketplace add <this>`): the repository's git URL or `owner/repo`.
/// scripts/deploy sets it from the checkout's `origin` remote; without it the block names a
/// placeholder.
pub const PLUGIN_MARKETPLACE_VAR: &str = "PLUGIN_MARKETPLACE";
/// Where the troubleshooting guide is, in the repository's tree.
pub const TROUBLESHOOTING_PATH: &str = "docs/troubleshooting.md";
/// What `/help` answers when no repository is known (`PLUGIN_MARKETPLACE` unset).
pub const TROUBLESHOOTING_UNLINKED: &str = "Troubleshooting: docs/troubleshooting.md in \
handoff-mcp's repository (no link: PLUGIN_MARKETPLACE is not set). /healthz says what is wrong.\n";
/// The D1 binding name in wrangler.toml.
pub const D1_BINDING: &str = "DB";
/// The Durable Object namespace binding of the /sse sessions in wrangler.toml.
pub const SSE_BINDING: &str = "SSE";
/// The rate limiting binding in wrangler.toml that counts wrong tokens per client address.
pub const FAILED_CREDENTIALS_BINDING: &str = "FAILED_CREDENTIALS";
/// Wrong tokens an address may send per period before it is answered 429 (wrangler.toml's
/// `simple.limit`, which the binding enforces; a test holds the two equal). Far above what a
/// person mistyping or a client left with an old token sends in a minute, and above every
/// deliberate wrong token the test suites send to one server; far below what guessing needs.
pub const FAILED_CREDENTIALS_LIMIT: u32 = 30;
/// The binding's period in seconds (`simple.period`: Cloudflare allows 10 or 60), and so the
/// `Retry-After` of its 429 (`Error::TooManyFailures`; a test holds the three equal).
pub const FAILED_CREDENTIALS_PERIOD_SECS: u32 = 60;

#[derive(Clone)]
pub struct Config {
    /// The accepted tokens, or the first thing wrong with them. A misconfiguration is kept, not
    /// repaired: the Worker then answers every route but /healthz with 503 (fail closed).
    pub credentials: Result<Credentials, Misconfigured>,
    pub allowed_origins: Vec<String>,
    pub focus_stale_days: u32,
    /// The OAuth authorization server's settings, or why it is off.
    pub oauth: Result<OAuth, OAuthOff>,
    /// `PLUGIN_MARKETPLACE`, when it is one word of visible ASCII.
    pub marketplace: Option<String>,
}

/// No token at all (every MCP path 404), OAuth off and the default settings.
impl Default for Config {
    fn default() -> Self {
        Config {
            credentials: Ok(Credentials::default()),
            allowed_origins: Vec::new(),
            focus_stale_days: DEFAULT_FOCUS_STALE_DAYS,
            oauth: Err(OAuthOff::NoKey),
            marketplace: None,
        }
    }
}

/// The OAuth authorization server's settings, when it is on.
#[derive(Debug, Clone)]
pub struct OAuth {
    /// `PUBLIC_URL`, without a trailing slash: the issuer.
    pub issuer: String,
    /// The issuer's `/mcp`: the one resource (RFC 8707) this server's tokens are for.
    pub resource: String,
    pub keys: Keys,
    /// `OAUTH_LOOPBACK_CLIENTS=1`: development only.
    pub loopback_clients: bool,
    /// `OAUTH_APP_REDIRECTS=1`: private-use scheme redirect URIs allowed.
    pub app_redirects: bool,
    /// How long an access token lives, in ms (`OAUTH_ACCESS_SECONDS`).
    pub access_ms: i64,
}

/// Why OAuth is off; said by `/healthz`. Off by choice is neither `OAUTH_KEY` nor `PUBLIC_URL`
/// set (`NoKey`, token-only use); every other reason is a setting begun and unusable, which
/// `/healthz` answers with 503 (`expected`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OAuthOff {
    NoKey,
    /// `PUBLIC_URL` set without `OAUTH_KEY`.
    NoKeyForUrl,
    BadKey,
    NoPublicUrl,
    BadPublicUrl,
}

impl fmt::Display for OAuthOff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OAuthOff::NoKey => write!(f, "no {OAUTH_KEY_VAR} secret is set"),
            OAuthOff::NoKeyForUrl => write!(
                f,
                "no {OAUTH_KEY_VAR} secret is set, but {PUBLIC_URL_VAR} is (OAuth needs both)"
            ),
            OAuthOff::BadKey => write!(
                f,
                "{OAUTH_KEY_VAR} is malformed (each key 32 or more visible ASCII characters, comma-separated)"
            ),
            OAuthOff::NoPublicUrl => write!(
                f,
                "no {PUBLIC_URL_VAR} is set, but {OAUTH_KEY_VAR} is (OAuth needs both)"
            ),
            OAuthOff::BadPublicUrl => write!(
                f,
                "{PUBLIC_URL_VAR} is not an origin (https://host, or http:// on loopback)"
            ),
        }
    }
}

impl Config {
    /// Builds the config from a variable lookup (the Worker passes its env).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let allowed_origins = lookup(ALLOWED_ORIGINS_VAR)
            .unwrap_or_default()
            .split(',')
            .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
            .filter(|o| !o.is_empty())
            .collect();
        let focus_stale_days = lookup(FOCUS_STALE_DAYS_VAR)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_FOCUS_STALE_DAYS);
        Config {
            credentials: credentials::parse(
                (AUTH_TOKEN_VAR, lookup(AUTH_TOKEN_VAR).as_deref()),
                (PROJECT_TOKENS_VAR, lookup(PROJECT_TOKENS_VAR).as_deref()),
                token_min(lookup(PUBLIC_URL_VAR).as_deref()),
            ),
            allowed_origins,
            focus_stale_days,
            oauth: oauth(
                lookup(OAUTH_KEY_VAR).as_deref(),
                lookup(PUBLIC_URL_VAR).as_deref(),
                lookup(OAUTH_LOOPBACK_CLIENTS_VAR).as_deref(),
                lookup(OAUTH_ACCESS_SECONDS_VAR).as_deref(),
                lookup(OAUTH_APP_REDIRECTS_VAR).as_deref(),
            ),
            marketplace: lookup(PLUGIN_MARKETPLACE_VAR)
                .map(|v| v.trim().to_owned())
                .filter(|v| {
                    (1..=200).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_graphic())
                }),
        }
    }
}

impl Config {
    /// The settings that are set and cannot be used, each a sentence naming the variable (and a
    /// malformed entry's position, `Misconfigured`), never its value: `/healthz` answers 503
    /// with them. No setting at all is a choice (no token: every MCP path 404; no OAuth: the
    /// token URL and the bearer header alone), not a fault.
    pub fn unusable(&self) -> Vec<String> {
        let mut unusable = Vec::new();
        if let Err(wrong) = &self.credentials {
            unusable.push(wrong.to_string());
        }
        match &self.oauth {
            Err(off) if *off != OAuthOff::NoKey => unusable.push(off.to_string()),
            _ => {}
        }
        unusable
    }

    /// The troubleshooting guide's page in the repository `PLUGIN_MARKETPLACE` names (as
    /// scripts/deploy sets it: GitHub's `owner/repo`, or another host's `https://` git URL), as
    /// a forge shows a file; anything else, none.
    pub fn troubleshooting(&self) -> Option<String> {
        let repo = self.marketplace.as_deref()?;
        let repo = repo
            .strip_suffix(".git")
            .unwrap_or(repo)
            .trim_end_matches('/');
        let plain = repo
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:".contains(&b))
            && !repo.contains("..");
        let slashes = repo.bytes().filter(|b| *b == b'/').count();
        let web = match repo.strip_prefix("https://") {
            Some(_) if slashes >= 4 => repo.to_owned(),
            None if slashes == 1 && !repo.contains(':') => {
                format!("https://github.com/{repo}")
            }
            _ => return None,
        };
        plain.then(|| format!("{web}/blob/HEAD/{TROUBLESHOOTING_PATH}"))
    }

    /// The sentences the operator's log gets once per isolate (`wrangler tail`, Workers Logs):
    /// each unusable setting (a token's fault makes every route but /healthz answer 503), or
    /// that no token is set (every MCP path 404).
    pub fn problems(&self) -> Vec<String> {
        let mut problems = self.unusable();
        for problem in &mut problems {
            problem.insert_str(0, "unusable: ");
            problem.push_str(" (/healthz says so until it is fixed)");
        }
        if self.credentials.as_ref().is_ok_and(Credentials::is_empty) {
            problems.push(format!(
                "no token is set ({AUTH_TOKEN_VAR}, {PROJECT_TOKENS_VAR}): every MCP path answers 404"
            ));
        }
        problems
    }
}

/// OAuth's settings: on with a well-formed key and public URL, else off and why.
fn oauth(
    key: Option<&str>,
    public_url: Option<&str>,
    loopback: Option<&str>,
    access_seconds: Option<&str>,
    apps: Option<&str>,
) -> Result<OAuth, OAuthOff> {
    let key = key.map(str::trim).filter(|k| !k.is_empty());
    let url = public_url.map(str::trim).filter(|u| !u.is_empty());
    let no_key = match url {
        Some(_) => OAuthOff::NoKeyForUrl,
        None => OAuthOff::NoKey,
    };
    let keys = Keys::parse(key.ok_or(no_key)?).ok_or(OAuthOff::BadKey)?;
    let issuer = url.ok_or(OAuthOff::NoPublicUrl)?.trim_end_matches('/');
    if !is_origin(issuer) {
        return Err(OAuthOff::BadPublicUrl);
    }
    Ok(OAuth {
        issuer: issuer.to_owned(),
        resource: format!("{issuer}/mcp"),
        keys,
        loopback_clients: loopback.map(str::trim) == Some("1"),
        app_redirects: apps.map(str::trim) == Some("1"),
        access_ms: access_seconds
            .and_then(|s| s.trim().parse::<i64>().ok())
            .filter(|s| (1..=MOST_ACCESS_SECONDS).contains(s))
            .unwrap_or(DEFAULT_ACCESS_SECONDS)
            * 1000,
    })
}

/// The shortest token a public deployment takes: a token of 32 random characters or more
/// cannot be guessed through the consent page or any other door (`scripts/deploy` makes 64 hex
/// digits).
pub const TOKEN_MIN: usize = 32;

/// The shortest token this deployment takes (`PUBLIC_URL`'s value): none for local development
/// (unset, when OAuth is off, or an `http://` origin, which is on loopback (`is_origin`), as
/// scripts/dev and scripts/test set it), else `TOKEN_MIN`.
pub fn token_min(public_url: Option<&str>) -> usize {
    let url = public_url.map_or("", |url| url.trim().trim_end_matches('/'));
    let local = url.is_empty() || (url.starts_with("http:") && is_origin(url));
    match local {
        true => 0,
        false => TOKEN_MIN,
    }
}

/// `https://host[:port]`, or `http://` with a loopback host (local development): an origin
/// with nothing after it.
pub fn is_origin(url: &str) -> bool {
    let (secure, rest) = match url.split_once("://") {
        Some(("https", rest)) => (true, rest),
        Some(("http", rest)) => (false, rest),
        _ => return false,
    };
    let host = match rest.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map_or("", |(host, _)| host),
        None => rest.split(':').next().unwrap_or_default(),
    };
    let plain = rest
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b));
    plain && !host.is_empty() && (secure || is_loopback_host(host))
}

/// Whether a URL's host is this machine: `localhost`, an address of 127/8 (`127.0.0.1`) or
/// `::1`. A name that merely starts with `127.` (`127.0.0.1.evil.example`) is not.
pub fn is_loopback_host(host: &str) -> bool {
    let quad: Vec<&str> = host.split('.').collect();
    let v4 = quad.len() == 4
        && quad[0] == "127"
        && quad.iter().all(|part| {
            !part.is_empty() && part.len() <= 3 && part.bytes().all(|b| b.is_ascii_digit())
        });
    host.eq_ignore_ascii_case("localhost") || host == "::1" || v4
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("credentials", &self.credentials)
            .field("allowed_origins", &self.allowed_origins)
            .field("focus_stale_days", &self.focus_stale_days)
            .field("oauth", &self.oauth)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::credentials::{source_of, tag_of, Problem};
    use crate::auth::scope::Scope;

    fn config(auth: Option<&str>, project: Option<&str>) -> Config {
        Config::from_lookup(|k| match k {
            AUTH_TOKEN_VAR => auth.map(str::to_owned),
            PROJECT_TOKENS_VAR => project.map(str::to_owned),
            _ => None,
        })
    }

    fn scope_of(config: &Config, token: &str) -> Option<Scope> {
        config
            .credentials
            .as_ref()
            .unwrap()
            .scope_of(token)
            .cloned()
    }

    fn project(id: &str, write: bool) -> Option<Scope> {
        Some(Scope::Project {
            id: id.into(),
            write,
        })
    }

    #[test]
    fn blank_variables_hold_no_token_and_debug_hides_them() {
        for blank in [None, Some(""), Some("  "), Some("\n")] {
            let cfg = config(blank, blank);
            assert!(cfg.credentials.unwrap().is_empty(), "{blank:?}");
        }
        let cfg = Config::from_lookup(|k| match k {
            AUTH_TOKEN_VAR => Some("s3cret".into()),
            PROJECT_TOKENS_VAR => Some("sc0ped=p:read".into()),
            PUBLIC_URL_VAR => None,
            _ => Some(" https://A.example/ , ,http://b.example".into()),
        });
        assert_eq!(
            cfg.allowed_origins,
            ["https://a.example", "http://b.example"]
        );
        let debug = format!("{cfg:?}");
        assert!(
            !debug.contains("s3cret") && !debug.contains("sc0ped"),
            "{debug}"
        );
        assert!(debug.contains("All") && debug.contains("\"p\""), "{debug}");
        assert_eq!(cfg.focus_stale_days, DEFAULT_FOCUS_STALE_DAYS);
        let days = |v: &str| {
            Config::from_lookup(|k| (k == FOCUS_STALE_DAYS_VAR).then(|| v.to_owned()))
                .focus_stale_days
        };
        assert_eq!((days(" 14 "), days("-1"), days("x")), (14, 7, 7));
    }

    #[test]
    fn the_troubleshooting_guide_is_linked_in_the_repository_deployed_from() {
        let at = |marketplace: &str| {
            Config::from_lookup(|k| (k == PLUGIN_MARKETPLACE_VAR).then(|| marketplace.into()))
                .troubleshooting()
        };
        let guide = "https://github.com/acme/handoff-mcp/blob/HEAD/docs/troubleshooting.md";
        for repo in [
            "acme/handoff-mcp",
            "https://github.com/acme/handoff-mcp",
            "https://github.com/acme/handoff-mcp.git",
            "https://github.com/acme/handoff-mcp/",
        ] {
            assert_eq!(at(repo).as_deref(), Some(guide), "{repo}");
        }
        assert_eq!(
            at("https://git.example/team/tools/handoff-mcp").as_deref(),
            Some("https://git.example/team/tools/handoff-mcp/blob/HEAD/docs/troubleshooting.md")
        );
        // Nothing that is not plainly a repository on a host: no link (the text says where).
        for odd in [
            "http://github.com/acme/handoff-mcp",
            "file:///srv/handoff-mcp",
            "git@github.com:acme/handoff-mcp.git",
            "/srv/handoff-mcp",
            "handoff-mcp",
            "https://github.com/acme",
            "https://user:pw@github.com/acme/handoff-mcp",
            "https://github.com/acme/handoff-mcp?x=1",
            "https://github.com/acme/../handoff-mcp",
            "javascript:alert(1)//a/b",
            "a/b/c",
        ] {
            assert_eq!(at(odd), None, "{odd}");
        }
        assert_eq!(Config::default().troubleshooting(), None);
    }

    #[test]
    fn the_problems_name_the_variable_and_position_never_the_text() {
        assert!(config(Some("tok-1"), None).problems().is_empty());
        assert!(config(None, Some("t=p")).problems().is_empty());
        let none = config(None, Some(" "));
        assert_eq!(
            none.problems(),
            ["no token is set (AUTH_TOKEN, PROJECT_TOKENS): every MCP path answers 404"]
        );
        assert!(none.unusable().is_empty(), "no token is a choice");
        let cfg = config(Some("s3cret,s3 cret"), None);
        let [wrong] = &cfg.problems()[..] else {
            panic!("{:?}", cfg.problems())
        };
        assert!(
            wrong.starts_with("unusable: AUTH_TOKEN entry 2 "),
            "{wrong}"
        );
        assert!(
            wrong.contains("AUTH_TOKEN") && wrong.contains('2'),
            "{wrong}"
        );
        assert!(!wrong.contains("s3"), "{wrong}");
        assert!(
            wrong.ends_with("(/healthz says so until it is fixed)"),
            "{wrong}"
        );
        assert_eq!(
            cfg.unusable(),
            ["AUTH_TOKEN entry 2 has a token with a character other than visible ASCII (no spaces, no control characters)"]
        );
        // OAuth begun and unusable: said beside the tokens' fault, the key never shown.
        let both = Config::from_lookup(|k| match k {
            AUTH_TOKEN_VAR => Some("s3cret,s3 cret".into()),
            OAUTH_KEY_VAR => Some("k3y-too-short".into()),
            PUBLIC_URL_VAR => Some("https://mcp.example".into()),
            _ => None,
        });
        assert_eq!(both.unusable().len(), 2, "{:?}", both.unusable());
        assert!(both.unusable()[1].starts_with("OAUTH_KEY is malformed"));
        let logged = both.problems().join("\n");
        assert!(
            logged.contains("unusable: OAUTH_KEY is malformed"),
            "{logged}"
        );
        assert!(
            !logged.contains("k3y") && !logged.contains("s3"),
            "{logged}"
        );
    }

    #[test]
    fn several_full_tokens_and_scoped_ones() {
        let cfg = config(
            Some(" old-token , new-token\n"),
            Some("rw-token=alpha\r\nro-token=alpha:read,b64+/tok==beta , other=alpha.v2:read\n"),
        );
        assert_eq!(scope_of(&cfg, "old-token"), Some(Scope::All));
        assert_eq!(scope_of(&cfg, "new-token"), Some(Scope::All));
        assert_eq!(scope_of(&cfg, "rw-token"), project("alpha", true));
        assert_eq!(scope_of(&cfg, "ro-token"), project("alpha", false));
        assert_eq!(scope_of(&cfg, "b64+/tok="), project("beta", true));
        assert_eq!(scope_of(&cfg, "other"), project("alpha.v2", false));
        for wrong in [
            "",
            "old",
            "old-token ",
            "OLD-TOKEN",
            "rw-token=alpha",
            "new-tokenx",
        ] {
            assert_eq!(scope_of(&cfg, wrong), None, "{wrong:?}");
        }
        // Scoped tokens alone are a complete configuration; the same entry twice is harmless.
        let cfg = config(None, Some("t=p,t=p"));
        assert_eq!(scope_of(&cfg, "t"), project("p", true));
        let cfg = config(Some("a,a"), None);
        assert_eq!(scope_of(&cfg, "a"), Some(Scope::All));
    }

    #[test]
    fn every_malformed_entry_is_named_by_position_never_by_text() {
        let cases = [
            (Some("a,,b"), None, AUTH_TOKEN_VAR, 2, Problem::EmptyEntry),
            (Some("a,"), None, AUTH_TOKEN_VAR, 2, Problem::EmptyEntry),
            (Some(",a"), None, AUTH_TOKEN_VAR, 1, Problem::EmptyEntry),
            (
                Some("a b"),
                None,
                AUTH_TOKEN_VAR,
                1,
                Problem::TokenCharacter,
            ),
            (
                Some("ok,tökén"),
                None,
                AUTH_TOKEN_VAR,
                2,
                Problem::TokenCharacter,
            ),
            (
                Some("a"),
                Some("a=p"),
                PROJECT_TOKENS_VAR,
                1,
                Problem::ConflictingScope,
            ),
            (
                None,
                Some("t=p\n\nu=q"),
                PROJECT_TOKENS_VAR,
                2,
                Problem::EmptyEntry,
            ),
            (
                None,
                Some("t=p,secret-no-project"),
                PROJECT_TOKENS_VAR,
                2,
                Problem::NoProject,
            ),
            (None, Some("=p"), PROJECT_TOKENS_VAR, 1, Problem::EmptyToken),
            (
                None,
                Some(" =p"),
                PROJECT_TOKENS_VAR,
                1,
                Problem::EmptyToken,
            ),
            (None, Some("t="), PROJECT_TOKENS_VAR, 1, Problem::ProjectId),
            (
                None,
                Some("t=a b"),
                PROJECT_TOKENS_VAR,
                1,
                Problem::ProjectId,
            ),
            (
                None,
                Some("t=-p"),
                PROJECT_TOKENS_VAR,
                1,
                Problem::ProjectId,
            ),
            (
                None,
                Some("t=p:write"),
                PROJECT_TOKENS_VAR,
                1,
                Problem::Access,
            ),
            (
                None,
                Some("t=p:read:read"),
                PROJECT_TOKENS_VAR,
                1,
                Problem::Access,
            ),
            (None, Some("t=p:"), PROJECT_TOKENS_VAR, 1, Problem::Access),
            (
                None,
                Some("t=:read"),
                PROJECT_TOKENS_VAR,
                1,
                Problem::ProjectId,
            ),
            (
                None,
                Some("x y=p"),
                PROJECT_TOKENS_VAR,
                1,
                Problem::TokenCharacter,
            ),
            (
                None,
                Some("t=p,u=q,t=p:read"),
                PROJECT_TOKENS_VAR,
                3,
                Problem::ConflictingScope,
            ),
            (
                None,
                Some("t=p,t=q"),
                PROJECT_TOKENS_VAR,
                2,
                Problem::ConflictingScope,
            ),
        ];
        for (auth, scoped, var, position, problem) in cases {
            let wrong = config(auth, scoped).credentials.unwrap_err();
            let case = format!("{auth:?} {scoped:?}");
            assert_eq!(
                wrong,
                Misconfigured {
                    var,
                    position,
                    problem
                },
                "{case}"
            );
            let line = wrong.to_string();
            assert!(
                line.starts_with(&format!("{var} entry {position} ")),
                "{line}"
            );
            for text in ["secret-no-project", "tökén", "x y", "a b"] {
                assert!(!line.contains(text), "{line}");
            }
        }
    }

    #[test]
    fn oauth_is_on_with_a_key_and_a_public_origin_and_says_why_not() {
        let key = "k".repeat(32);
        let with = |key: Option<&str>, url: Option<&str>| {
            Config::from_lookup(|k| match k {
                OAUTH_KEY_VAR => key.map(str::to_owned),
                PUBLIC_URL_VAR => url.map(str::to_owned),
                _ => None,
            })
            .oauth
        };
        let on = with(Some(&key), Some("https://mcp.example/")).unwrap();
        assert_eq!(on.issuer, "https://mcp.example");
        assert_eq!(on.resource, "https://mcp.example/mcp");
        assert!(!on.loopback_clients && !on.app_redirects);
        assert_eq!(on.access_ms, 7 * 86_400_000);
        let short = Config::from_lookup(|k| match k {
            OAUTH_KEY_VAR => Some(key.clone()),
            PUBLIC_URL_VAR => Some("http://127.0.0.1:8787".into()),
            OAUTH_ACCESS_SECONDS_VAR => Some(" 5 ".into()),
            OAUTH_LOOPBACK_CLIENTS_VAR => Some("1".into()),
            OAUTH_APP_REDIRECTS_VAR => Some("1".into()),
            _ => None,
        })
        .oauth
        .unwrap();
        assert_eq!(
            (short.access_ms, short.loopback_clients, short.app_redirects),
            (5_000, true, true)
        );
        let life = |seconds: &str| {
            Config::from_lookup(|k| match k {
                OAUTH_KEY_VAR => Some(key.clone()),
                PUBLIC_URL_VAR => Some("https://mcp.example".into()),
                OAUTH_ACCESS_SECONDS_VAR => Some(seconds.into()),
                _ => None,
            })
            .oauth
            .unwrap()
            .access_ms
        };
        assert_eq!(life("7776000"), 7_776_000_000, "90 days, the most");
        assert_eq!(life("1"), 1_000);
        for out in ["7776001", "0", "-5", "a week"] {
            assert_eq!(life(out), 604_800_000, "{out}: a week");
        }
        for (k, url, off) in [
            (None, None, OAuthOff::NoKey),
            (Some(" "), Some(" "), OAuthOff::NoKey),
            (None, Some("https://mcp.example"), OAuthOff::NoKeyForUrl),
            (
                Some(" "),
                Some("https://mcp.example"),
                OAuthOff::NoKeyForUrl,
            ),
            (Some("short"), Some("https://mcp.example"), OAuthOff::BadKey),
            (Some(&key[..]), None, OAuthOff::NoPublicUrl),
            (Some(&key[..]), Some("mcp.example"), OAuthOff::BadPublicUrl),
            (
                Some(&key[..]),
                Some("http://mcp.example"),
                OAuthOff::BadPublicUrl,
            ),
            (
                Some(&key[..]),
                Some("https://mcp.example/x"),
                OAuthOff::BadPublicUrl,
            ),
            (Some(&key[..]), Some("https://"), OAuthOff::BadPublicUrl),
        ] {
            assert_eq!(with(k, url).unwrap_err(), off, "{k:?} {url:?}");
        }
        for local in [
            "http://127.0.0.1:8787",
            "http://localhost:1",
            "http://[::1]:9",
        ] {
            assert!(with(Some(&key), Some(local)).is_ok(), "{local}");
        }
        for host in ["127.0.0.1", "127.1.2.3", "LOCALHOST", "::1"] {
            assert!(is_loopback_host(host), "{host}");
        }
        for (url, min) in [
            (None, 0),
            (Some(" "), 0),
            (Some("http://127.0.0.1:8787"), 0),
            (Some("http://localhost:1/"), 0),
            (Some("http://[::1]:9"), 0),
            (Some("https://localhost:8787"), 32),
            (Some("http://mcp.example"), 32),
            (Some("https://mcp.example"), 32),
            (Some("https://127.0.0.1.evil.example"), 32),
            (Some("https://[2001:db8::1]"), 32),
            (Some("mcp.example"), 32),
        ] {
            assert_eq!(token_min(url), min, "{url:?}");
        }
        for host in [
            "127.0.0.1.evil.example",
            "127.0.0",
            "127.0.0.x",
            "128.0.0.1",
            "::2",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
        let debug = format!("{:?}", with(Some(&key), Some("https://mcp.example")));
        assert!(!debug.contains(&key), "{debug}");
    }

    #[test]
    fn a_grant_finds_the_scope_of_the_token_it_was_made_with_by_its_source_or_tag() {
        let cfg = config(Some("full"), Some("scoped=p:read"));
        let credentials = cfg.credentials.unwrap();
        let keys = [b"k".repeat(32), b"j".repeat(32)];
        let scope = |name: &str| credentials.tagged(name, &keys).map(|t| t.scope.clone());
        assert_eq!(scope(&source_of("full")), Some(Scope::All));
        assert_eq!(scope(&source_of("scoped")), project("p", false));
        assert_eq!(scope(&tag_of("scoped", &keys[1])), project("p", false));
        let found = credentials
            .tagged(&tag_of("full", &keys[1]), &keys)
            .unwrap();
        assert_eq!(
            (found.tag, found.source),
            (&tag_of("full", &keys[0])[..], &source_of("full")[..])
        );
        let found = credentials.tagged(&source_of("scoped"), &keys).unwrap();
        assert_eq!(
            (found.tag, found.source),
            (&tag_of("scoped", &keys[0])[..], &source_of("scoped")[..])
        );
        assert_eq!(scope(&source_of("gone")), None);
        assert_eq!(scope(&tag_of("full", b"another key")), None);
        assert_eq!(scope("full"), None);
        assert_eq!(
            (source_of("abc").len(), tag_of("abc", &keys[0]).len()),
            (64, 32)
        );
        // OAuth off: no keys, and a grant's row is still found by its source.
        let off = config(Some("full"), None).credentials.unwrap();
        assert_eq!(
            off.tagged(&source_of("full"), &[]).map(|t| t.scope),
            Some(&Scope::All)
        );
    }
}
