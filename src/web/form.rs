//! `application/x-www-form-urlencoded` bodies, decoded strictly: `&`-separated `name=value`
//! pairs, `+` as a space, `%XX` as one byte, and the bytes must be UTF-8. A malformed escape,
//! bytes that are not UTF-8, or a name given twice is refused with a sentence naming it,
//! rather than guessed at. No tool rules here: the decoded fields go to the tool unchanged.

use crate::tools::args::preview;

/// The decoded fields, in body order, each name at most once.
pub fn decode(body: &[u8]) -> Result<Vec<(String, String)>, String> {
    let mut fields: Vec<(String, String)> = Vec::new();
    // Empty pieces (`a=1&&b=2`, a trailing `&`) carry nothing, as the WHATWG parser has it.
    for pair in body.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
        let (name, value) = match pair.iter().position(|&b| b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &b""[..]),
        };
        let name = unescape(name).map_err(|why| format!("a field name {why}"))?;
        let shown = preview(&name);
        let value = unescape(value).map_err(|why| format!("the field \"{shown}\" {why}"))?;
        if fields.iter().any(|(n, _)| *n == name) {
            return Err(format!("the field \"{shown}\" is given twice"));
        }
        fields.push((name, value));
    }
    Ok(fields)
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
    fn decodes_what_browsers_send() {
        assert_eq!(
            ok("text=Ship+v1%21&why="),
            [
                ("text".into(), "Ship v1!".into()),
                ("why".into(), String::new())
            ]
        );
        // 本丸 🎯, a literal +, CR LF as a browser normalizes a textarea's line breaks.
        assert_eq!(
            ok("body=%E6%9C%AC%E4%B8%B8+%F0%9F%8E%AF%2B%0D%0Ax"),
            [("body".into(), "本丸 🎯+\r\nx".into())]
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
