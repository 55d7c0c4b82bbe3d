//! Configuration, parsed once from the Worker's environment into a typed struct. Every binding
//! and variable name lives here. The token is never printed (Config's Debug hides it).

use std::fmt;

/// Secret: the first path segment every MCP URL must start with.
pub const AUTH_TOKEN_VAR: &str = "AUTH_TOKEN";
/// Comma-separated browser origins allowed besides loopback (e.g. "https://example.com").
pub const ALLOWED_ORIGINS_VAR: &str = "ALLOWED_ORIGINS";
/// The D1 binding name in wrangler.toml.
pub const D1_BINDING: &str = "DB";
/// The Durable Object namespace binding of the /sse sessions in wrangler.toml.
pub const SSE_BINDING: &str = "SSE";

#[derive(Clone, Default)]
pub struct Config {
    /// `None` when AUTH_TOKEN is unset or blank: then every MCP path is 404.
    pub token: Option<String>,
    pub allowed_origins: Vec<String>,
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
        Config {
            token,
            allowed_origins,
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allowed_origins", &self.allowed_origins)
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
    }
}
