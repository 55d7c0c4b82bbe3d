//! Configuration, parsed once from the Worker's environment into a typed struct. Every binding
//! and variable name lives here. The token is never printed (Config's Debug hides it).

use std::fmt;

/// Secret: the first path segment every MCP URL must start with.
pub const AUTH_TOKEN_VAR: &str = "AUTH_TOKEN";
/// Comma-separated browser origins allowed besides loopback (e.g. "https://example.com").
pub const ALLOWED_ORIGINS_VAR: &str = "ALLOWED_ORIGINS";
/// After how many days get_state's reference block asks to confirm or replace the focus.
pub const FOCUS_STALE_DAYS_VAR: &str = "FOCUS_STALE_DAYS";
/// FOCUS_STALE_DAYS when it is unset or not a whole number of days.
pub const DEFAULT_FOCUS_STALE_DAYS: u32 = 7;
/// The D1 binding name in wrangler.toml.
pub const D1_BINDING: &str = "DB";
/// The Durable Object namespace binding of the /sse sessions in wrangler.toml.
pub const SSE_BINDING: &str = "SSE";

#[derive(Clone)]
pub struct Config {
    /// `None` when AUTH_TOKEN is unset or blank: then every MCP path is 404.
    pub token: Option<String>,
    pub allowed_origins: Vec<String>,
    pub focus_stale_days: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            token: None,
            allowed_origins: Vec::new(),
            focus_stale_days: DEFAULT_FOCUS_STALE_DAYS,
        }
    }
}

impl Config {
    /// Builds the config from a variable lookup (the Worker passes its env).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let token = lookup(AUTH_TOKEN_VAR)
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty());
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
            token,
            allowed_origins,
            focus_stale_days,
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allowed_origins", &self.allowed_origins)
            .field("focus_stale_days", &self.focus_stale_days)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_token_is_no_token_and_debug_hides_it() {
        let cfg = Config::from_lookup(|k| (k == AUTH_TOKEN_VAR).then(|| "  ".to_owned()));
        assert_eq!(cfg.token, None);
        let cfg = Config::from_lookup(|k| match k {
            AUTH_TOKEN_VAR => Some("s3cret".into()),
            _ => Some(" https://A.example/ , ,http://b.example".into()),
        });
        assert_eq!(
            cfg.allowed_origins,
            ["https://a.example", "http://b.example"]
        );
        assert!(!format!("{cfg:?}").contains("s3cret"));
        assert_eq!(cfg.focus_stale_days, DEFAULT_FOCUS_STALE_DAYS);
        let days = |v: &str| {
            Config::from_lookup(|k| (k == FOCUS_STALE_DAYS_VAR).then(|| v.to_owned()))
                .focus_stale_days
        };
        assert_eq!((days(" 14 "), days("-1"), days("x")), (14, 7, 7));
    }
}
