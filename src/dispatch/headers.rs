//! The MCP routing headers dispatch reads, and the 2026-07-28 rule that each must match the
//! body: case-sensitive values, trimmed of spaces and tabs, possibly sent as `=?base64?…?=`.

use crate::base64;
use crate::error::Error;

/// The request headers dispatch needs, already looked up (names are case-insensitive on the wire).
#[derive(Debug, Default, Clone)]
pub struct McpHeaders {
    pub protocol_version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
}

/// The header names `McpHeaders` is read from: every header that can change a reply. The /sse
/// message path forwards exactly these to its Durable Object.
pub const NAMES: [&str; 3] = ["mcp-protocol-version", "mcp-method", "mcp-name"];

impl McpHeaders {
    /// Reads the headers through a case-insensitive lookup.
    pub fn read<'a>(get: impl Fn(&str) -> Option<&'a str>) -> McpHeaders {
        let [version, method, name] = NAMES.map(|n| get(n).map(str::to_owned));
        McpHeaders {
            protocol_version: version,
            method,
            name,
        }
    }

    /// The MCP-Protocol-Version header, trimmed.
    pub fn version(&self) -> Option<&str> {
        self.protocol_version.as_deref().map(trim)
    }
}

/// Compares a required routing header with the body value.
pub fn check(header: &str, value: Option<&str>, body: Option<&str>) -> Result<(), Error> {
    let Some(raw) = value else {
        return Err(Error::HeaderMismatch(format!(
            "the {header} header is required"
        )));
    };
    let decoded = decode_value(trim(raw)).ok_or_else(|| {
        Error::HeaderMismatch(format!(
            "the {header} header has a malformed =?base64?…?= value"
        ))
    })?;
    if Some(decoded.as_str()) != body {
        return Err(Error::HeaderMismatch(format!(
            "the {header} header does not match the request body"
        )));
    }
    Ok(())
}

fn trim(s: &str) -> &str {
    s.trim_matches([' ', '\t'])
}

/// Decodes the `=?base64?…?=` form of a header value; other values pass through.
fn decode_value(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(b64) => String::from_utf8(base64::decode(b64)?).ok(),
        None => Some(value.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_header_values() {
        assert_eq!(
            decode_value("=?base64?dG9vbHMvY2FsbA==?=").as_deref(),
            Some("tools/call")
        );
        assert_eq!(decode_value("=?base64?5pel5pys?=").as_deref(), Some("日本"));
        assert_eq!(decode_value("plain").as_deref(), Some("plain"));
        assert_eq!(decode_value("=?base64?not*base64?="), None);
        assert_eq!(decode_value("=?base64?QQ=A?="), None);
    }

    #[test]
    fn matching() {
        assert!(check("Mcp-Method", Some(" \ttools/list "), Some("tools/list")).is_ok());
        assert!(check("Mcp-Method", Some("TOOLS/LIST"), Some("tools/list")).is_err());
        assert!(check("Mcp-Method", None, Some("tools/list")).is_err());
    }
}
