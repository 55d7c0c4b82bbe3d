//! `application/x-www-form-urlencoded` bodies, decoded strictly: `&`-separated `name=value`
//! pairs, `+` as a space, `%XX` as one byte, and the bytes must be UTF-8. A malformed escape,
//! bytes that are not UTF-8, or a name given twice is refused with a sentence naming it,
//! rather than guessed at. The one normalisation: a value's line breaks become LF, since a
//! browser sends a textarea's as CR LF (and may send a lone CR), so a text typed on a page is
//! stored as the same text sent over MCP, and a text saved unchanged equals the stored one. No
//! tool rules here: otherwise the decoded fields go to the tool as they were typed.
//!
//! Hand-written for its strictness, and it is smaller. The crate `form_urlencoded` (which
//! `serde_urlencoded` builds on) decodes leniently: a malformed escape passes through as typed
//! and bytes that are not UTF-8 become U+FFFD, both of which this decoder refuses, so a swap
//! would keep the checks written here. Even without them, its `parse` in place of this loop
//! (the twice-given check and the line breaks kept) made the Worker's wasm 691 bytes gzip
//! larger (169,812 → 170,503, +1,883 raw; 2026-12-05): `worker` depends on it, but little of
//! its decoding was in the wasm already.

use crate::render;

/// The decoded fields, in body order, each name at most once, each value's line breaks LF.
pub fn decode(body: &[u8]) -> Result<Vec<(String, String)>, String> {
    let mut fields: Vec<(String, String)> = Vec::new();
    // Empty pieces (`a=1&&b=2`, a trailing `&`) carry nothing, as the WHATWG parser has it.
    for pair in body.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
        let (name, value) = match pair.iter().position(|&b| b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &b""[..]),
        };
        let name = unescape(name).map_err(|why| format!("a field name {why}"))?;
        let shown = render::preview(&name);
        let value = unescape(value).map_err(|why| format!("the field \"{shown}\" {why}"))?;
        let value = lf_line_breaks(&value);
        if fields.iter().any(|(n, _)| *n == name) {
            return Err(format!("the field \"{shown}\" is given twice"));
        }
        fields.push((name, value));
    }
    Ok(fields)
}

/// The value of the field `name` in decoded fields, the first if it came more than once.
pub fn field<'f>(fields: &'f [(String, String)], name: &str) -> Option<&'f str> {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// `value` percent-encoded for a URL's query string: every byte but RFC 3986's unreserved
/// characters as `%XX`, so it reads back the same through any query parser.
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b & 15)]));
        }
    }
    out
}

/// One form-encoded value on its own (the client id and secret of `Authorization: Basic`, which
/// RFC 6749 §2.3.1 form-encodes), decoded; as it is when it does not decode.
pub fn percent_decoded(raw: &str) -> String {
    unescape(raw.as_bytes()).unwrap_or_else(|_| raw.to_owned())
}

fn unescape(raw: &[u8]) -> Result<String, &'static str> {
    let mut bytes = Vec::with_capacity(raw.len());
    let mut rest = raw.iter();
    while let Some(&b) = rest.next() {
        bytes.push(match b {
            b'+' => b' ',
            b'%' => {
                let hi = rest.next().and_then(|&h| hex(h));
                let lo = rest.next().and_then(|&l| hex(l));
                match (hi, lo) {
                    (Some(hi), Some(lo)) => (hi << 4) | lo,
                    _ => return Err("has a % that is not followed by two hex digits"),
                }
            }
            other => other,
        });
    }
    String::from_utf8(bytes).map_err(|_| "is not UTF-8")
}

/// CR LF and a lone CR as LF: the line breaks the HTML form encoding produces, back to the
/// one line break the tools store.
fn lf_line_breaks(value: &str) -> String {
    value.replace("\r\n", "\n").replace('\r', "\n")
}

fn hex(b: u8) -> Option<u8> {
    char::from(b).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(body: &str) -> Vec<(String, String)> {
        decode(body.as_bytes()).unwrap()
    }

    #[test]
    fn encoded_values_decode_to_themselves() {
        for value in ["", "abc-._~", "a b&c=d+e%f/g?h#i", "本丸 🎯", "x\ny"] {
            let encoded = encode(value);
            assert!(encoded
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b)));
            assert_eq!(ok(&format!("v={encoded}")), [("v".into(), value.into())]);
            assert_eq!(percent_decoded(&encoded), value);
        }
        assert_eq!(percent_decoded("100%"), "100%");
    }

    #[test]
    fn decodes_what_browsers_send() {
        assert_eq!(
            ok("text=Ship+v1%21&why="),
            [
                ("text".into(), "Ship v1!".into()),
                ("why".into(), String::new())
            ]
        );
        // 本丸 🎯, a literal +, CR LF as a browser sends a textarea's line breaks.
        assert_eq!(
            ok("body=%E6%9C%AC%E4%B8%B8+%F0%9F%8E%AF%2B%0D%0Ax"),
            [("body".into(), "本丸 🎯+\nx".into())]
        );
        assert_eq!(ok(""), []);
        assert_eq!(
            ok("&a=1&&b&"),
            [("a".into(), "1".into()), ("b".into(), String::new())]
        );
        assert_eq!(ok("a=x=y"), [("a".into(), "x=y".into())]);
        assert_eq!(ok("%61%62=%3d"), [("ab".into(), "=".into())]);
    }

    #[test]
    fn every_line_break_becomes_lf() {
        for (raw, value) in [
            ("a%0D%0Ab", "a\nb"),
            ("a%0Db", "a\nb"),
            ("a%0Ab", "a\nb"),
            ("%0D%0A%0D%0Aa%0D%0D%0A%0A%0D", "\n\na\n\n\n\n"),
            ("%0D", "\n"),
            ("a%09b+", "a\tb "),
        ] {
            assert_eq!(
                ok(&format!("x={raw}")),
                [("x".into(), value.into())],
                "{raw}"
            );
        }
    }

    #[test]
    fn refuses_what_it_would_have_to_guess() {
        for (body, why) in [
            (
                &b"a=%"[..],
                "the field \"a\" has a % that is not followed by two hex digits",
            ),
            (
                b"a=%4",
                "the field \"a\" has a % that is not followed by two hex digits",
            ),
            (
                b"a=%zz",
                "the field \"a\" has a % that is not followed by two hex digits",
            ),
            (b"a=%ff", "the field \"a\" is not UTF-8"),
            (b"a=%C3", "the field \"a\" is not UTF-8"),
            (b"a=\xff", "the field \"a\" is not UTF-8"),
            (b"%ED%A0%80=x", "a field name is not UTF-8"),
            (b"a=1&a=2", "the field \"a\" is given twice"),
        ] {
            assert_eq!(decode(body).unwrap_err(), why, "{body:?}");
        }
    }
}
