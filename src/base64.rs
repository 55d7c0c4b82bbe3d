//! Standard base64 decoding (RFC 4648 §4, with padding), for `=?base64?…?=` header values.
//! Decoding only, and nothing else: the Worker links no base64 crate for one header form.

/// Decodes `input`; `None` on any malformed input.
pub fn decode(input: &str) -> Option<Vec<u8>> {
    let bytes = input.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (i, chunk) in bytes.chunks(4).enumerate() {
        let last = i == bytes.len() / 4 - 1;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = (n << 6) | value(c)?;
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
}
