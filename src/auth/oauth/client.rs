//! Who an OAuth client is: its client id resolved to a name, redirect URIs and token endpoint
//! authentication. Two kinds: a **client ID metadata document** (the client id is an `https` URL
//! whose document the Worker fetched, `from_document`), and a **dynamically registered** client
//! (RFC 7591), whose client id is its own registration, sealed (`seal::Client`), so nothing is
//! stored. Claude's two published clients are built in (`known`), never fetched. The redirect
//! URI rules are here too, for every kind and for `/authorize`, and the rule of which hosts a
//! metadata document may be fetched from. No fetch here: the shell fetches what
//! `document_url` names.

use crate::auth::seal;
use crate::base64;
use crate::config::{is_loopback_host, OAuth};
use crate::context;
use crate::crypto;
use crate::json_read::Node;

/// Most redirect URIs one client may have.
pub const REDIRECTS_MAX: usize = 10;
/// Longest redirect URI, and longest client id metadata URL, in bytes.
pub const URI_MAX: usize = 1000;
/// Largest client id metadata document read, in bytes: the draft suggests 5 KB.
pub const DOCUMENT_MAX: usize = 5 * 1024;

/// A client, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    pub id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    /// How it authenticates at the token endpoint: `none`, `client_secret_post` or
    /// `client_secret_basic`.
    pub auth_method: String,
}

/// Claude's published clients, built in so that `/authorize` never fetches their documents:
/// claude.ai's bot protection answers a server's fetch with a challenge often enough that a
/// connector could not be added at all (claude-ai-mcp#650, claude-code#84263). Each is its client
/// id, the document served at that URL (its `client_name`, `redirect_uris` and token endpoint
/// authentication `none`; read by `from_document`, as a fetched one is), and what the consent
/// page says it is. The values are those documents as quoted in public trackers in 2026
/// (docs/oauth.md, "Clients: Claude's built in, metadata documents, registration as the
/// fallback"); a change of Claude's documents reaches a deployment with a new release of this
/// server.
const CLAUDE: [(&str, &str, &str); 2] = [
    (
        "https://claude.ai/oauth/mcp-oauth-client-metadata",
        r#"{"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata","client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback","https://claude.com/api/mcp/auth_callback"],"token_endpoint_auth_method":"none"}"#,
        "Claude's connector (claude.ai, Claude Desktop and the Claude mobile apps)",
    ),
    (
        "https://claude.ai/oauth/claude-code-client-metadata",
        r#"{"client_id":"https://claude.ai/oauth/claude-code-client-metadata","client_name":"Claude Code","redirect_uris":["http://localhost/callback","http://127.0.0.1/callback"],"token_endpoint_auth_method":"none"}"#,
        "Claude Code, the command-line tool",
    ),
];

/// One of Claude's built-in clients, by its exact client id.
pub fn known(client_id: &str) -> Option<Client> {
    let (id, document, _) = CLAUDE.iter().find(|c| c.0 == client_id)?;
    from_document(id, document, false).ok()
}

/// What the consent page says a built-in client is.
pub fn known_as(client_id: &str) -> Option<&'static str> {
    CLAUDE.iter().find(|c| c.0 == client_id).map(|c| c.2)
}

/// Token endpoint authentication methods a registration may ask for.
pub const AUTH_METHODS: [&str; 3] = ["none", "client_secret_post", "client_secret_basic"];

impl Client {
    /// The registered redirect URI `given` matches: the same text, except that a loopback
    /// `http` URI matches on any port (RFC 8252 §7.3: a desktop client's port is picked when it
    /// runs), when `given` meets the rule of every redirect URI itself.
    pub fn redirect<'g>(&self, given: &'g str) -> Option<&'g str> {
        self.redirect_uris
            .iter()
            .find(|registered| {
                *registered == given
                    || (same_but_port(registered, given) && check_redirect(given, false).is_ok())
            })
            .map(|_| given)
    }

    /// Whether it must present a client secret at the token endpoint.
    pub fn confidential(&self) -> bool {
        self.auth_method != "none"
    }
}

/// Whether the client id names a metadata document to fetch, and which URL: an `https` URL with
/// a path on a public host (`public_host`), or in development (`OAUTH_LOOPBACK_CLIENTS=1`) an
/// `https` URL on any host or an `http` loopback one. Never one of Claude's built-in clients.
pub fn document_url<'a>(client_id: &'a str, oauth: &OAuth) -> Option<&'a str> {
    document(client_id, oauth).ok()
}

/// `document_url`, or what an `https` client id's host is instead of a public one
/// (`Err(Some(..))`, `public_host`), or that the client id is no such URL at all (`Err(None)`).
pub fn document<'a>(client_id: &'a str, oauth: &OAuth) -> Result<&'a str, Option<&'static str>> {
    let (scheme, rest) = client_id.split_once("://").ok_or(None)?;
    let (authority, path) = rest.split_at(rest.find('/').ok_or(None)?);
    let host = host_of(authority).ok_or(None)?;
    let allowed = match scheme {
        "https" => true,
        "http" => oauth.loopback_clients && is_loopback_host(host),
        _ => false,
    };
    let clean = client_id.len() <= URI_MAX
        && path.len() > 1
        && !authority.contains('@')
        && !client_id.contains(['#', '\\'])
        && client_id.bytes().all(|b| b.is_ascii_graphic())
        && path.split(['/', '?']).all(|s| s != "." && s != "..");
    if !allowed || !clean || known_as(client_id).is_some() {
        return Err(None);
    }
    match oauth.loopback_clients {
        true => Ok(client_id),
        false => public_host(host).map(|()| client_id).map_err(Some),
    }
}

/// Whether a client id's host is a public DNS name, which a metadata document may be fetched
/// from, or what it is instead, decided from its spelling before any connection: an IP address
/// in any spelling a URL parser reads as one (`127.1`, `2130706433`, `0x7f.1`, `0177.0.0.1`,
/// `[::ffff:7f00:1]`: a last label that is a number makes the host an IPv4 address), a name
/// with no dot (`localhost` among them) and the names only a local network resolves (`.local`,
/// `.internal`, `.localhost`, `.home.arpa`), or anything but ASCII letters, digits, `-` and
/// `.` (a `%` escape, a Unicode look-alike). A public name that resolves to a private address is
/// refused by the runtime (`global_fetch_strictly_public`, wrangler.toml).
pub fn public_host(host: &str) -> Result<(), &'static str> {
    let host = host.strip_suffix('.').unwrap_or(host);
    let last = host.rsplit('.').next().unwrap_or_default();
    let number = last.bytes().all(|b| b.is_ascii_digit())
        || last
            .strip_prefix("0x")
            .is_some_and(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()));
    if host.contains(':') || number {
        return Err("an IP address");
    }
    // Lower case only: a URL parser lowers a host, so an upper-case one is no published id.
    let plain = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(&b);
    if !host.bytes().all(plain) || host.starts_with('.') || host.contains("..") {
        return Err("a host name that is not plain lower-case ASCII");
    }
    let local = [".local", ".internal", ".localhost", ".home.arpa"];
    if !host.contains('.') || local.iter().any(|s| host.ends_with(s)) {
        return Err("a local host name");
    }
    Ok(())
}

/// The client a fetched metadata document describes, or why it is refused. The document's
/// `client_id` must be the URL it came from, it must name itself (`client_name`), and its
/// redirect URIs must follow the rules (`apps`: private-use schemes allowed).
pub fn from_document(url: &str, document: &str, apps: bool) -> Result<Client, String> {
    let doc = Node::parse(document.as_bytes())
        .map_err(|_| "its client metadata document is not JSON".to_owned())?;
    if !matches!(doc, Node::Object(_)) {
        return Err("its client metadata document is not a JSON object".into());
    }
    if doc.get("client_id").and_then(Node::as_str) != Some(url) {
        return Err("its client metadata document names another client_id than its URL".into());
    }
    let redirect_uris = redirect_uris(doc.get("redirect_uris"), apps)?;
    let name = name(doc.get("client_name"))
        .ok_or_else(|| "its client metadata document has no client_name".to_owned())?;
    let auth_method = doc
        .get("token_endpoint_auth_method")
        .and_then(Node::as_str)
        .unwrap_or("none");
    if auth_method != "none" {
        return Err(format!(
            "its client metadata document asks for token_endpoint_auth_method \"{}\"; this server takes \"none\" for such clients",
            crate::render::clip(auth_method, 40)
        ));
    }
    Ok(Client {
        id: url.to_owned(),
        name,
        redirect_uris,
        auth_method: auth_method.to_owned(),
    })
}

/// A dynamically registered client, from its sealed client id.
pub fn registered(client_id: &str, oauth: &OAuth) -> Option<Client> {
    let sealed = seal::Client::open(&oauth.keys, client_id)?;
    Some(Client {
        id: client_id.to_owned(),
        name: sealed.name,
        redirect_uris: sealed.redirect_uris,
        auth_method: sealed.auth_method,
    })
}

/// The secret of a registered confidential client: derived from its client id under the key
/// that sealed it, so it is stored nowhere either.
pub fn secret(client_id: &str, key: &[u8]) -> String {
    base64::url_encode(&crypto::hmac_sha256(
        key,
        &[b"client-secret.", client_id.as_bytes()],
    ))
}

/// Whether `given` is the secret of `client_id` under one of the keys.
pub fn secret_matches(client_id: &str, given: &str, oauth: &OAuth) -> bool {
    let mut matched = false;
    for key in oauth.keys.all() {
        matched |= crypto::same(secret(client_id, key).as_bytes(), given.as_bytes());
    }
    matched
}

/// The client's name as shown and recorded: as every client name in a history is kept
/// (`context::client_name`: control characters dropped, at most 100 characters), and without
/// the characters that reorder or hide text (bidi controls, zero-width ones), so that the page
/// shows the name as it reads; none when nothing is left.
pub fn name(given: Option<&Node>) -> Option<String> {
    let given: String = given
        .and_then(Node::as_str)
        .and_then(context::client_name)?
        .chars()
        .filter(|c| !matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{061C}' | '\u{FEFF}'))
        .collect();
    let name = given.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// The `redirect_uris` member: an array of 1 to `REDIRECTS_MAX` URIs, each allowed (`apps`:
/// private-use schemes too).
pub fn redirect_uris(member: Option<&Node>, apps: bool) -> Result<Vec<String>, String> {
    let Some(Node::Array(items)) = member else {
        return Err("redirect_uris must be an array of URIs".into());
    };
    if items.is_empty() || items.len() > REDIRECTS_MAX {
        return Err(format!(
            "redirect_uris must hold 1 to {REDIRECTS_MAX} URIs, not {}",
            items.len()
        ));
    }
    let mut uris = Vec::with_capacity(items.len());
    for item in items {
        let uri = item
            .as_str()
            .ok_or_else(|| "each redirect URI must be a string".to_owned())?;
        check_redirect(uri, apps)?;
        uris.push(uri.to_owned());
    }
    Ok(uris)
}

/// The rule every redirect URI meets: absolute, at most `URI_MAX` bytes, ASCII only (so the
/// consent page shows the host the browser goes to: a Unicode look-alike of a name must come as
/// its punycode), no fragment, no space or control character; `https` on a host of plain
/// letters, digits, `-` and `.` (or an IP address), or `http` on a loopback host only (a desktop
/// client's callback), or, with `apps` (`OAUTH_APP_REDIRECTS=1`), a private-use scheme of a
/// native app (`com.example.app:/callback`); never one a browser runs or reads
/// (`javascript:`, `data:`, `file:`…).
pub fn check_redirect(uri: &str, apps: bool) -> Result<(), String> {
    let shown = crate::render::clip(uri, 80);
    let refuse = |why: &str| Err(format!("the redirect URI \"{shown}\" {why}"));
    if uri.len() > URI_MAX {
        return refuse(&format!("is longer than {URI_MAX} bytes"));
    }
    if uri.contains(['#', ' ', '\\']) || uri.chars().any(char::is_control) {
        return refuse("holds a fragment, a space, a backslash or a control character");
    }
    const PLAIN: &str = "holds a character outside ASCII, or a host of more than letters, digits, '-' and '.' (a Unicode host is written in punycode, xn--…)";
    // Past the rule above, a byte that is not ASCII's graphic is outside ASCII.
    if !uri.bytes().all(|b| b.is_ascii_graphic()) {
        return refuse(PLAIN);
    }
    let Some((scheme, rest)) = uri.split_once(':') else {
        return refuse("is not an absolute URI");
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_lowercase())
        && scheme
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
    if !scheme_ok {
        return refuse("has no valid scheme");
    }
    match scheme {
        "https" => match rest.strip_prefix("//").and_then(|r| host_of(authority(r))) {
            Some(host)
                if host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-.:_".contains(&b)) =>
            {
                Ok(())
            }
            Some(_) => refuse(PLAIN),
            None => refuse("names no host"),
        },
        "http" => match rest.strip_prefix("//").and_then(|r| host_of(authority(r))) {
            Some(host) if is_loopback_host(host) => Ok(()),
            _ => refuse("uses http on a host other than loopback; use https"),
        },
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" | "ws" | "wss" | "ftp" => {
            refuse("uses a scheme a browser would run or read, not a callback")
        }
        _ if rest.is_empty() => refuse("has nothing after its scheme"),
        _ if !apps => refuse(
            "uses an app's own scheme, which this server accepts only with OAUTH_APP_REDIRECTS=1",
        ),
        _ => Ok(()),
    }
}

/// Where the person's browser goes after consent, as the page shows it: the host of an
/// `http(s)` URI (ASCII, as `check_redirect` holds it), or the whole URI of an app's, since
/// its scheme alone says nothing of where it leads.
pub fn shown_host(uri: &str) -> &str {
    match uri.split_once("://") {
        Some(("http" | "https", rest)) => host_of(authority(rest)).unwrap_or_default(),
        _ => uri,
    }
}

/// Whether every redirect URI is `http` on loopback: then any program on the person's computer
/// can receive the code, so the name is the client's own claim (the consent page says so).
pub fn loopback_only(client: &Client) -> bool {
    client.redirect_uris.iter().all(|uri| {
        uri.strip_prefix("http://")
            .and_then(|rest| host_of(authority(rest)))
            .is_some_and(is_loopback_host)
    })
}

/// The authority of the part of a URI after `//`: up to the path, query or fragment.
fn authority(after_slashes: &str) -> &str {
    after_slashes
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default()
}

/// The host of an authority (`user@host:port`, `[::1]:8080`); `None` when empty.
fn host_of(authority: &str) -> Option<&str> {
    let authority = authority.rsplit('@').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split_once(']')?.0,
        None => authority.split(':').next().unwrap_or_default(),
    };
    (!host.is_empty()).then_some(host)
}

/// Two loopback `http` URIs that differ only in their port. Each authority is the host and a
/// port alone: with user info (`evil.example\@127.0.0.1`, which a browser reads as another
/// host) it is no loopback URI.
fn same_but_port(registered: &str, given: &str) -> bool {
    let without_port = |uri: &str| -> Option<(String, String)> {
        let rest = uri.strip_prefix("http://")?;
        let auth = authority(rest);
        let host = host_of(auth)?;
        let port = auth
            .strip_prefix('[')
            .unwrap_or(auth)
            .strip_prefix(host)?
            .trim_start_matches(']');
        let port_only = port.is_empty()
            || port
                .strip_prefix(':')
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if !port_only || !is_loopback_host(host) {
            return None;
        }
        Some((host.to_owned(), rest[auth.len()..].to_owned()))
    };
    match (without_port(registered), without_port(given)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oauth(loopback: bool) -> OAuth {
        OAuth {
            issuer: "https://mcp.example".into(),
            resource: "https://mcp.example/mcp".into(),
            keys: seal::Keys::parse(&"k".repeat(32)).unwrap(),
            loopback_clients: loopback,
            app_redirects: false,
            access_ms: 3_600_000,
        }
    }

    /// The shell reads at most this much of a metadata document (`worker/fetch.js`), and says "5
    /// KB" when a document is larger (`oauth::fetched`); the smoke sends one of 6 KB.
    #[test]
    fn a_metadata_document_is_read_up_to_the_drafts_five_kilobytes() {
        assert_eq!(DOCUMENT_MAX, 5120);
    }

    #[test]
    fn redirect_uris_follow_the_rules() {
        for fine in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.com/api/mcp/auth_callback",
            "http://127.0.0.1:3334/oauth/callback",
            "http://localhost/cb",
            "http://[::1]:9/cb?x=1",
            "https://xn--laude-8we.ai/cb",
        ] {
            assert_eq!(check_redirect(fine, false), Ok(()), "{fine}");
        }
        // An app's own scheme only with OAUTH_APP_REDIRECTS=1.
        for app in [
            "com.example.app:/callback",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
            "googlechromes://evil.example/cb",
        ] {
            assert_eq!(check_redirect(app, true), Ok(()), "{app}");
            let refused = check_redirect(app, false).unwrap_err();
            assert!(refused.contains("OAUTH_APP_REDIRECTS=1"), "{refused}");
        }
        for (bad, why) in [
            ("http://evil.example/cb", "other than loopback"),
            ("http://127.0.0.1.evil.example/cb", "other than loopback"),
            ("javascript:alert(1)", "would run"),
            ("data:text/html,x", "would run"),
            ("https://a.example/cb#x", "fragment"),
            ("https:///cb", "no host"),
            ("/relative", "not an absolute"),
            ("HTTPS://a.example/", "no valid scheme"),
            ("https://a.example/ cb", "space"),
            // A Cyrillic "с": the browser goes to xn--laude-8we.ai, not claude.ai.
            (
                "https://\u{441}laude.ai/api/mcp/auth_callback",
                "outside ASCII",
            ),
            ("https://claude.ai%2Eevil.example/cb", "more than letters"),
        ] {
            let refused = check_redirect(bad, true).unwrap_err();
            assert!(refused.contains(why), "{bad}: {refused}");
        }
        assert!(
            check_redirect(&format!("https://a.example/{}", "x".repeat(URI_MAX)), true)
                .unwrap_err()
                .contains("longer")
        );
    }

    #[test]
    fn a_loopback_redirect_matches_on_any_port_and_nothing_else_loosely() {
        let client = Client {
            id: "c".into(),
            name: "n".into(),
            redirect_uris: vec![
                "http://127.0.0.1:3334/cb".into(),
                "https://a.example/cb".into(),
            ],
            auth_method: "none".into(),
        };
        assert!(client.redirect("http://127.0.0.1:50123/cb").is_some());
        assert!(client.redirect("http://127.0.0.1/cb").is_some());
        assert!(client.redirect("https://a.example/cb").is_some());
        for wrong in [
            "http://127.0.0.1:3334/other",
            "http://localhost:3334/cb",
            "https://a.example:444/cb",
            "https://a.example/cb/",
            "https://a.example/cb?x=1",
            // A browser goes to evil.example for these two: `\` is `/` in an http URL.
            "http://evil.example\\@127.0.0.1:1/cb",
            "http://evil.example\\@127.0.0.1/cb",
            "http://user@127.0.0.1:3334/cb",
            "http://127.0.0.1:x/cb",
            "http://127.0.0.1:1 /cb",
        ] {
            assert_eq!(client.redirect(wrong), None, "{wrong}");
        }
    }

    #[test]
    fn metadata_document_urls() {
        let prod = oauth(false);
        let dev = oauth(true);
        assert!(document_url("https://app.example/oauth/client.json", &prod).is_some());
        for not_one in [
            "https://claude.ai",
            "https://claude.ai/",
            "http://127.0.0.1:9/client.json",
            "https://u@claude.ai/x",
            "https://claude.ai/a/../b",
            "https://claude.ai/x#f",
            "hmc.abc.def",
            "ftp://a.example/x",
        ] {
            assert_eq!(document_url(not_one, &prod), None, "{not_one}");
        }
        assert!(document_url("http://127.0.0.1:9/client.json", &dev).is_some());
        assert_eq!(document_url("http://a.example/client.json", &dev), None);
    }

    /// Every spelling a URL parser reads as an address, and every name only a local network
    /// resolves, is refused from its text alone: no test here or anywhere connects to one.
    #[test]
    fn a_metadata_document_is_fetched_from_a_public_host_only() {
        for (host, why) in [
            // Loopback, private (10/8, 172.16/12, 192.168/16), link-local, CGNAT, this network.
            ("127.0.0.1", "an IP address"),
            ("10.0.0.1", "an IP address"),
            ("172.16.5.4", "an IP address"),
            ("192.168.1.1", "an IP address"),
            ("169.254.169.254", "an IP address"),
            ("100.64.0.1", "an IP address"),
            ("0.0.0.0", "an IP address"),
            ("8.8.8.8", "an IP address"),
            // The numeric spellings of 127.0.0.1 a browser or fetch accepts.
            ("2130706433", "an IP address"),
            ("0x7f.1", "an IP address"),
            ("0x7f000001", "an IP address"),
            (
                "0X7F000001",
                "a host name that is not plain lower-case ASCII",
            ),
            ("127.1", "an IP address"),
            ("0177.0.0.1", "an IP address"),
            ("127.0.0.1.", "an IP address"),
            ("example.0x", "an IP address"),
            // IPv6 (the brackets already gone): loopback, unique-local, link-local, mapped.
            ("::1", "an IP address"),
            ("fd00::1", "an IP address"),
            ("fe80::1", "an IP address"),
            ("::ffff:127.0.0.1", "an IP address"),
            ("::ffff:7f00:1", "an IP address"),
            ("localhost", "a local host name"),
            ("localhost.", "a local host name"),
            (
                "App.Example",
                "a host name that is not plain lower-case ASCII",
            ),
            ("intranet", "a local host name"),
            ("printer.local", "a local host name"),
            ("metadata.google.internal", "a local host name"),
            ("a.localhost", "a local host name"),
            ("nas.home.arpa", "a local host name"),
            (
                "%6c%6fcalhost",
                "a host name that is not plain lower-case ASCII",
            ),
            (
                "\u{441}laude.ai",
                "a host name that is not plain lower-case ASCII",
            ),
            (
                "a..example",
                "a host name that is not plain lower-case ASCII",
            ),
        ] {
            assert_eq!(public_host(host), Err(why), "{host}");
        }
        for public in [
            "claude.ai",
            "app.example.com",
            "xn--laude-8we.ai",
            "a-1.example.",
            "1e100.net",
        ] {
            assert_eq!(public_host(public), Ok(()), "{public}");
        }
        let prod = oauth(false);
        for (client_id, why) in [
            ("https://127.0.0.1:8443/c.json", "an IP address"),
            ("https://[::1]:8443/c.json", "an IP address"),
            ("https://localhost:8443/c.json", "a local host name"),
            ("https://2130706433/c.json", "an IP address"),
        ] {
            assert_eq!(document(client_id, &prod), Err(Some(why)), "{client_id}");
        }
        // In development (OAUTH_LOOPBACK_CLIENTS=1) the test suites serve theirs on loopback.
        assert!(document_url("https://127.0.0.1:9/c.json", &oauth(true)).is_some());
    }

    #[test]
    fn claudes_clients_are_built_in_and_never_fetched() {
        let prod = oauth(false);
        let connector = known("https://claude.ai/oauth/mcp-oauth-client-metadata").unwrap();
        assert_eq!(connector.name, "Claude");
        // Both callbacks Claude's connector uses, each matched exactly.
        assert_eq!(
            connector.redirect_uris,
            [
                "https://claude.ai/api/mcp/auth_callback",
                "https://claude.com/api/mcp/auth_callback"
            ]
        );
        for callback in connector.redirect_uris.iter() {
            assert!(connector.redirect(callback).is_some(), "{callback}");
        }
        for near in [
            "https://claude.com/api/mcp/auth_callback/",
            "https://claude.com/api/mcp/auth_callback?x=1",
            "https://www.claude.com/api/mcp/auth_callback",
            "https://claude.co/api/mcp/auth_callback",
        ] {
            assert!(connector.redirect(near).is_none(), "{near}");
        }
        assert!(!connector.confidential() && !loopback_only(&connector));
        let code = known("https://claude.ai/oauth/claude-code-client-metadata").unwrap();
        assert_eq!(code.name, "Claude Code");
        assert!(!code.confidential() && loopback_only(&code));
        // RFC 8252: Claude Code's ephemeral port, on either loopback name.
        assert!(code.redirect("http://localhost:51234/callback").is_some());
        assert!(code.redirect("http://127.0.0.1:9/callback").is_some());
        assert!(code.redirect("http://127.0.0.1:9/other").is_none());
        for id in [&connector.id, &code.id] {
            assert_eq!(document_url(id, &prod), None, "{id}");
            assert!(known_as(id).is_some());
        }
        // Exactly these ids: anything near them is a document like any other.
        for near in [
            "https://claude.ai/oauth/mcp-oauth-client-metadata/",
            "https://CLAUDE.AI/oauth/mcp-oauth-client-metadata",
            "https://claude.ai.evil.example/oauth/mcp-oauth-client-metadata",
        ] {
            assert_eq!(known(near), None, "{near}");
            assert_eq!(known_as(near), None, "{near}");
        }
    }

    #[test]
    fn a_document_must_name_itself_and_follow_the_rules() {
        let url = "https://app.example/client.json";
        let doc = |body: &str| from_document(url, body, false);
        let good = doc(&format!(
            r#"{{"client_id":"{url}","client_name":"App <b>","redirect_uris":["https://app.example/cb"]}}"#
        ))
        .unwrap();
        assert_eq!(good.name, "App <b>");
        assert_eq!(good.auth_method, "none");
        for (body, why) in [
            (
                &format!(r#"{{"client_id":"{url}","redirect_uris":["https://app.example/cb"]}}"#)[..],
                "no client_name",
            ),
            (
                &format!(
                    r#"{{"client_id":"{url}","client_name":" \u0007","redirect_uris":["https://app.example/cb"]}}"#
                ),
                "no client_name",
            ),
            ("[1]", "not a JSON object"),
            ("nope", "not JSON"),
            (
                r#"{"client_id":"https://other.example/c.json","client_name":"A","redirect_uris":["https://a.example/cb"]}"#,
                "another client_id",
            ),
            (
                &format!(r#"{{"client_id":"{url}","client_name":"A","redirect_uris":[]}}"#),
                "1 to 10",
            ),
            (
                &format!(
                    r#"{{"client_id":"{url}","client_name":"A","redirect_uris":["http://evil.example/cb"]}}"#
                ),
                "other than loopback",
            ),
            (
                &format!(
                    r#"{{"client_id":"{url}","client_name":"A","redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"private_key_jwt"}}"#
                ),
                "private_key_jwt",
            ),
        ] {
            let refused = doc(body).unwrap_err();
            assert!(refused.contains(why), "{body}: {refused}");
        }
    }

    #[test]
    fn a_registered_client_is_its_own_sealed_id_and_its_secret_derives_from_it() {
        let o = oauth(false);
        let sealed = seal::Client {
            name: "mcp-remote".into(),
            redirect_uris: vec!["http://127.0.0.1:3334/cb".into()],
            auth_method: "client_secret_post".into(),
            issued_at: 1,
        }
        .seal(&o.keys);
        let client = registered(&sealed, &o).unwrap();
        assert_eq!(client.name, "mcp-remote");
        assert!(client.confidential());
        let s = secret(&sealed, &o.keys.all()[0]);
        assert!(secret_matches(&sealed, &s, &o));
        assert!(!secret_matches(&sealed, "wrong", &o));
        assert_eq!(registered("hmc.x.y", &o), None);
        assert_eq!(shown_host("https://claude.ai/api/cb"), "claude.ai");
        assert_eq!(
            shown_host("googlechromes://evil.example/cb"),
            "googlechromes://evil.example/cb"
        );
    }
}
