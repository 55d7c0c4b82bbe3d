//! Protocol versions: the eras, negotiation, and every comparison of version strings.
//! Nothing outside this file compares a version string.

/// The stateless revision: per-request `_meta`, no initialize, no sessions.
pub const STATELESS: &str = "2026-07-28";
/// Stateless versions this server serves (what `server/discover` lists).
pub const SUPPORTED_STATELESS: &[&str] = &[STATELESS];
/// 2024/2025-era versions served over the same endpoint through `initialize`, newest first.
pub const SUPPORTED_HANDSHAKE: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The MCP Apps extension's revision (SEP-1865, stable), which the card's `ui/initialize` names.
pub const MCP_APPS: &str = "2026-01-26";
/// What a handshake-lane request without an MCP-Protocol-Version header is taken to speak.
pub const HEADERLESS_HANDSHAKE: &str = "2025-03-26";

/// Which rules a request is served under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28 and later: results carry `resultType`, `_meta` serverInfo and cache hints.
    Stateless,
    /// 2024-11-05 … 2025-11-25, through initialize (sessions are never minted).
    Handshake(&'static str),
}

/// A version string that claims the stateless revision or later. Dates compare as strings;
/// anything that does not look like a date ("v999.0.0") sorts after them and so is a stateless claim too,
/// which is what makes it an *unsupported* stateless claim rather than a handshake one.
pub fn is_stateless_claim(version: &str) -> bool {
    version >= STATELESS
}

pub fn is_supported_stateless(version: &str) -> bool {
    SUPPORTED_STATELESS.contains(&version)
}

pub fn supported_handshake(version: &str) -> Option<&'static str> {
    SUPPORTED_HANDSHAKE.iter().copied().find(|v| *v == version)
}

/// initialize's answer: echo the requested version if it is a handshake one we serve, else our
/// newest handshake version (never the stateless one: initialize is the handshake).
pub fn negotiate_handshake(requested: Option<&str>) -> &'static str {
    requested
        .and_then(supported_handshake)
        .unwrap_or(SUPPORTED_HANDSHAKE[0])
}

/// Batching existed only in 2025-03-26 (and is accepted for 2024-11-05 clients too).
pub fn allows_batches(era: Era) -> bool {
    matches!(era, Era::Handshake(v) if v <= "2025-03-26")
}

/// logging/setLevel exists only before the stateless revision (which sets a level per request).
pub fn has_logging_set_level(era: Era) -> bool {
    matches!(era, Era::Handshake(_))
}

/// A missing resource is an invalid-params error (with data.uri) from 2026-07-28 on; the
/// 2024/2025 specs gave it a code of its own.
pub fn resource_not_found_is_invalid_params(era: Era) -> bool {
    era == Era::Stateless
}

/// An unknown method travels with HTTP 404 from 2026-07-28 on; 2025-era clients read the
/// JSON-RPC error from a 200.
pub fn method_not_found_is_404(era: Era) -> bool {
    era == Era::Stateless
}

/// Server capabilities carry `extensions` (SEP-2133) from the stateless revision on; the 2025
/// `ServerCapabilities` schema has no such member.
pub fn has_extensions(era: Era) -> bool {
    era == Era::Stateless
}

/// Result envelope fields of the stateless revision.
pub fn has_result_type(era: Era) -> bool {
    era == Era::Stateless
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_and_negotiation() {
        assert!(is_stateless_claim("2026-07-28"));
        assert!(is_stateless_claim("2027-01-01"));
        assert!(is_stateless_claim("v999.0.0"));
        assert!(!is_stateless_claim("2025-11-25"));
        assert_eq!(negotiate_handshake(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiate_handshake(Some("2026-07-28")), "2025-11-25");
        assert_eq!(negotiate_handshake(Some("1999-01-01")), "2025-11-25");
        assert_eq!(negotiate_handshake(None), "2025-11-25");
    }

    #[test]
    fn era_predicates() {
        assert!(allows_batches(Era::Handshake("2025-03-26")));
        assert!(!allows_batches(Era::Handshake("2025-06-18")));
        assert!(!allows_batches(Era::Stateless));
    }
}
