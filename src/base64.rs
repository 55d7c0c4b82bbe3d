//! Base64: standard decoding (RFC 4648 §4, with padding) for `=?base64?…?=` header values, and
//! the URL-safe alphabet without padding (§5) both ways, for what OAuth hands out and reads back
//! (sealed tokens, PKCE's S256 challenge). Nothing else: the Worker links no base64 crate. The
//! crate `base64` (0.22, its standard engine, `alloc` only) in place of the standard decoder made
//! the Worker's wasm 1.5 KB gzip larger (169,812 → 171,364 bytes, +4,470 raw; 2026-12-05).

/// The URL-safe alphabet (RFC 4648 §5).
const URL_ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `bytes` in the URL-safe alphabet, without padding.
pub fn url_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(URL_ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// Decodes URL-safe base64 without padding; `None` for anything `url_encode` cannot have
/// written (another alphabet, padding, a length of 1 mod 4, stray bits in the last letter), so
/// each byte string has exactly one text.
pub fn url_decode(input: &str) -> Option<Vec<u8>> {
    let bytes = input.as_bytes();
    if bytes.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3 + 2);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for &c in chunk {
            n = (n << 6) | letter(c, *b"-_")?;
        }
        n <<= 6 * (4 - chunk.len()) as u32;
        let whole = chunk.len() - 1;
        if n & (0xff_ffff >> (8 * whole)) != 0 {
            return None;
        }
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8][..whole]);
    }
    Some(out)
}

/// The value of one letter of an alphabet whose last two letters are `last` (`+/` standard,
/// `-_` URL-safe).
fn letter(c: u8, last: [u8; 2]) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        _ if c == last[0] => 62,
        _ if c == last[1] => 63,
        _ => return None,
    } as u32)
}

/// Decodes `input`; `None` on any malformed input.
pub fn decode(input: &str) -> Option<Vec<u8>> {
    let bytes = input.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let last = i == bytes.len() / 4 - 1;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = (n << 6) | letter(c, *b"+/")?;
        }
        n <<= 6 * pad as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_safe_round_trips_and_refuses_what_it_cannot_have_written() {
        let all: Vec<u8> = (0..=255).collect();
        for len in 0..=7 {
            for start in [0, 1, 127, 248] {
                let bytes = &all[start..start + len];
                let text = url_encode(bytes);
                assert!(!text.contains(['=', '+', '/']), "{text}");
                assert_eq!(url_decode(&text).as_deref(), Some(bytes), "{bytes:?}");
            }
        }
        assert_eq!(url_decode(&url_encode(&all)), Some(all));
        // RFC 7636's example: BASE64URL(SHA256(verifier)).
        assert_eq!(
            url_encode(&crate::crypto::sha256(
                b"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
            )),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        for bad in [
            "A", "AAAAA", "QQ==", "Q+==", "a/b", "QR", "QUJ", "QUJE=", "é",
        ] {
            assert_eq!(url_decode(bad), None, "{bad}");
        }
        assert_eq!(url_decode("QQ").as_deref(), Some(&b"A"[..]));
        assert_eq!(url_decode("QUI").as_deref(), Some(&b"AB"[..]));
    }

    #[test]
    fn decodes_and_refuses() {
        assert_eq!(
            decode("dG9vbHMvY2FsbA==").as_deref(),
            Some(&b"tools/call"[..])
        );
        assert_eq!(decode("5pel5pys").as_deref(), Some("日本".as_bytes()));
        assert_eq!(decode(""), Some(Vec::new()));
        for bad in ["not*base64", "QQ=A", "QQ", "Q===", "QQ==QQ=="] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }

    /// RFC 4648's alphabet, index by index, as the test's own encoder uses it.
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    fn encode(bytes: &[u8]) -> String {
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
            for i in 0..4 {
                out.push(match i <= chunk.len() {
                    true => ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char,
                    false => '=',
                });
            }
        }
        out
    }

    #[test]
    fn every_letter_of_the_alphabet_is_its_own_six_bits() {
        for (value, &letter) in ALPHABET.iter().enumerate() {
            // The letter first, then three zeros: its six bits are the top of the first byte.
            let quad = format!("{}AAA", letter as char);
            assert_eq!(
                decode(&quad),
                Some(vec![(value as u8) << 2, 0, 0]),
                "{quad}"
            );
            // The letter last: its six bits are the bottom of the third byte.
            let quad = format!("AAA{}", letter as char);
            assert_eq!(decode(&quad), Some(vec![0, 0, value as u8]), "{quad}");
        }
    }

    #[test]
    fn every_byte_string_round_trips_with_each_padding() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode(&encode(&all)), Some(all.clone()));
        // Lengths 0 to 6 cover no padding, "==" and "=" at the end, one quad and two.
        for len in 0..=6 {
            for start in [0, 1, 127, 250] {
                let bytes = &all[start..start + len];
                assert_eq!(decode(&encode(bytes)).as_deref(), Some(bytes), "{bytes:?}");
            }
        }
    }

    #[test]
    fn every_byte_outside_the_alphabet_is_refused_in_every_position() {
        for byte in (0..0x80u8).filter(|b| !ALPHABET.contains(b) && *b != b'=') {
            for position in 0..4 {
                let mut quad = *b"QUJD";
                quad[position] = byte;
                let quad = String::from_utf8(quad.to_vec()).unwrap();
                assert_eq!(decode(&quad), None, "{byte:#04x} at {position}");
            }
        }
        // Bytes from 0x80 up only come as parts of a UTF-8 character: one of each length,
        // with ASCII letters around it up to a whole number of quads.
        for c in ['é', '日', '🎯'] {
            let fill = 4 - c.len_utf8() % 4;
            for before in 0..=fill {
                let quad = format!("{}{c}{}", "A".repeat(before), "A".repeat(fill - before));
                assert_eq!(decode(&quad), None, "{quad}");
            }
        }
    }
}
