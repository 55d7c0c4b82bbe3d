//! Who an OAuth client is: its client id resolved to a name, redirect URIs and token endpoint
//! authentication. Two kinds: a **client ID metadata document** (the client id is an `https` URL
//! whose document the Worker fetched, `from_document`), and a **dynamically registered** client
//! (RFC 7591), whose client id is its own registration, sealed (`seal::Client`), so nothing is
//! stored. The redirect URI rules are here too, for both kinds and for `/authorize`.

use crate::base64;
use crate::config::{is_loopback_host, OAuth};
use crate::context;
use crate::crypto;
use crate::json_read::Node;
use crate::seal;

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
                    || (same_but_port(registered, given) && check_redirect(given).is_ok())
            })
            .map(|_| given)
    }

    /// Whether it must present a client secret at the token endpoint.
    pub fn confidential(&self) -> bool {
        self.auth_method != "none"
    }
}

/// Whether the client id names a metadata document to fetch, and which URL: an `https` URL with
/// a path, or (development only, `OAUTH_LOOPBACK_CLIENTS=1`) an `http` loopback one.
pub fn document_url<'a>(client_id: &'a str, oauth: &OAuth) -> Option<&'a str> {
    let (scheme, rest) = client_id.split_once("://")?;
    let (authority, path) = rest.split_at(rest.find('/')?);
    let host = host_of(authority)?;
    let allowed = match scheme {
        "https" => true,
        "http" => oauth.loopback_clients && is_loopback_host(host),
        _ => false,
    };
    let clean = client_id.len() <= URI_MAX
        && path.len() > 1
        && !authority.contains('@')
        && !client_id.contains(['#', ' ', '\\'])
        && !client_id.chars().any(char::is_control)
        && path.split(['/', '?']).all(|s| s != "." && s != "..");
    (allowed && clean).then_some(client_id)
}

/// The client a fetched metadata document describes, or why it is refused. The document's
/// `client_id` must be the URL it came from, and its redirect URIs must follow the rules.
pub fn from_document(url: &str, document: &str) -> Result<Client, String> {
    let doc = Node::parse(document.as_bytes())
        .map_err(|_| "its client metadata document is not JSON".to_owned())?;
    if !matches!(doc, Node::Object(_)) {
        return Err("its client metadata document is not a JSON object".into());
    }
    if doc.get("client_id").and_then(Node::as_str) != Some(url) {
        return Err("its client metadata document names another client_id than its URL".into());
    }
    let redirect_uris = redirect_uris(doc.get("redirect_uris"))?;
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
        name: name(doc.get("client_name"), url),
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
/// (`context::client_name`: control characters dropped, at most 100 characters); without one,
/// the host its id or redirect URI names.
pub fn name(given: Option<&Node>, fallback_uri: &str) -> String {
    let given = given
        .and_then(Node::as_str)
        .and_then(context::client_name)
        .unwrap_or_default();
    match given.trim() {
        "" => format!("a client of {}", shown_host(fallback_uri)),
        name => name.to_owned(),
    }
}

/// The `redirect_uris` member: an array of 1 to `REDIRECTS_MAX` URIs, each allowed.
pub fn redirect_uris(member: Option<&Node>) -> Result<Vec<String>, String> {
    let Some(Node::Array(items)) = member else {
        return Err("redirect_uris must be an array of URIs".into());
    };
    if items.is_empty() || items.len() > REDIRECTS_MAX {
        return Err(format!(
            "redirect_uris must hold 1 to {REDIRECTS_MAX} URIs, not {}",
            items.len()
        ));
    }
    items
        .iter()
        .map(|item| {
            let uri = item
                .as_str()
                .ok_or_else(|| "each redirect URI must be a string".to_owned())?;
            check_redirect(uri)?;
            Ok(uri.to_owned())
        })
        .collect()
}

/// The rule every redirect URI meets: absolute, at most `URI_MAX` bytes, no fragment, no space
/// or control character; `https`, or `http` on a loopback host only (a desktop client's
/// callback), or a private-use scheme of a native app (`com.example.app:/callback`), never one a
/// browser runs or reads (`javascript:`, `data:`, `file:`…).
pub fn check_redirect(uri: &str) -> Result<(), String> {
    let shown = crate::render::clip(uri, 80);
    let refuse = |why: &str| Err(format!("the redirect URI \"{shown}\" {why}"));
    if uri.len() > URI_MAX {
        return refuse(&format!("is longer than {URI_MAX} bytes"));
    }
    if uri.contains(['#', ' ', '\\']) || uri.chars().any(char::is_control) {
        return refuse("holds a fragment, a space, a backslash or a control character");
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
            Some(_) => Ok(()),
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
        _ => Ok(()),
    }
}

/// Where the person's browser goes after consent, as the page shows it: the host of an
/// `http(s)` URI, or the scheme of an app's.
pub fn shown_host(uri: &str) -> String {
    match uri.split_once("://") {
        Some(("http" | "https", rest)) => host_of(authority(rest)).unwrap_or_default().to_owned(),
        _ => uri.split(':').next().unwrap_or_default().to_owned() + ":",
    }
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
            "com.example.app:/callback",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
        ] {
            assert_eq!(check_redirect(fine), Ok(()), "{fine}");
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
        ] {
            let refused = check_redirect(bad).unwrap_err();
            assert!(refused.contains(why), "{bad}: {refused}");
        }
        assert!(
            check_redirect(&format!("https://a.example/{}", "x".repeat(URI_MAX)))
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
        assert!(document_url("https://claude.ai/oauth/mcp-oauth-client-metadata", &prod).is_some());
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

    #[test]
    fn a_document_must_name_itself_and_follow_the_rules() {
        let url = "https://app.example/client.json";
        let doc = |body: &str| from_document(url, body);
        let good = doc(&format!(
            r#"{{"client_id":"{url}","client_name":"App <b>","redirect_uris":["https://app.example/cb"]}}"#
        ))
        .unwrap();
        assert_eq!(good.name, "App <b>");
        assert_eq!(good.auth_method, "none");
        let unnamed = doc(&format!(
            r#"{{"client_id":"{url}","redirect_uris":["https://app.example/cb"]}}"#
        ))
        .unwrap();
        assert_eq!(unnamed.name, "a client of app.example");
        for (body, why) in [
            ("[1]", "not a JSON object"),
            ("nope", "not JSON"),
            (
                r#"{"client_id":"https://other.example/c.json","redirect_uris":["https://a.example/cb"]}"#,
                "another client_id",
            ),
            (
                &format!(r#"{{"client_id":"{url}","redirect_uris":[]}}"#),
                "1 to 10",
            ),
            (
                &format!(r#"{{"client_id":"{url}","redirect_uris":["http://evil.example/cb"]}}"#),
                "other than loopback",
            ),
            (
                &format!(
                    r#"{{"client_id":"{url}","redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"private_key_jwt"}}"#
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
        assert_eq!(shown_host("com.example.app:/cb"), "com.example.app:");
    }
}
