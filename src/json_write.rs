//! JSON text out: a `serde_json::Value` written as compact JSON, byte for byte what
//! `serde_json::to_string` writes, and the string escape it uses. Every JSON string the server
//! sends is escaped here (`push_string`): reply bodies, the HTTP+SSE stream's message events, the
//! card's constants; the one text written around them elsewhere is a tools/call result and a
//! success's head (`dispatch::methods`, `jsonrpc::Success`, each held to `to_text` of the same
//! `Value` by a test). No parsing (serde_json reads).
//!
//! It exists for speed, and it is smaller. serde_json's string escape looks at one byte per loop
//! turn and splits the string at every byte to do so; a reply is mostly the model's text
//! (get_state's contract is a kilobyte and more), and at the Worker's opt-level "z" that loop is
//! not inlined. Here a string is copied in runs between the bytes that need an escape. Measured
//! when replies moved here (`6ffbebf`, 2026-12-02, docs/benchmarks-history.md, "The fifth pass"): natively
//! get_state 330,269 → 293,383 instructions per request (×0.888), tools/list ×0.762, add_task
//! ×0.959 (`scripts/instructions`), for +0.1 KB of wasm gzip; once every JSON the Worker sends
//! was written here (`6ee3b4b`), serde_json's serializer left the bundle: −1.5 KB gzip.

// `push_str` of one ASCII character, not `push`: at opt-level "z" `push` is an out-of-line
// call that encodes the char first (measured with callgrind).
#![allow(clippy::single_char_add_str)]

use std::fmt::Write;

use serde_json::Value as Json;

/// `value` as compact JSON text, written into a buffer of about its size: a reply holds
/// kilobytes of the model's text, which a buffer doubling from a small one copies again at
/// each step.
pub fn to_text(value: &Json) -> String {
    let mut out = String::new();
    push_value(&mut out, value);
    out
}

/// `value` as compact JSON text, appended to `out` (room for it made first, as in `to_text`).
pub fn push_value(out: &mut String, value: &Json) {
    out.reserve(size_hint(value));
    write_value(out, value);
}

/// About the length of `value`'s JSON text: exact for everything but numbers (taken as 20
/// bytes) and escapes (a string's own length, plus 1/16 for the escapes of a text of lines).
fn size_hint(value: &Json) -> usize {
    match value {
        Json::Null | Json::Bool(_) => 5,
        Json::Number(_) => 20,
        Json::String(s) => string_size_hint(s),
        Json::Array(items) => items.iter().map(|item| size_hint(item) + 1).sum::<usize>() + 2,
        Json::Object(map) => {
            map.iter()
                .map(|(key, item)| key.len() + 4 + size_hint(item))
                .sum::<usize>()
                + 2
        }
    }
}

fn string_size_hint(s: &str) -> usize {
    s.len() + s.len() / 16 + 2
}

/// About the length of a result that holds `texts` as JSON strings, with up to 256 bytes of
/// members around them (as `size_hint`), for a writer that writes one without a `Value`.
pub fn texts_size_hint(texts: &[String]) -> usize {
    texts.iter().map(|t| string_size_hint(t)).sum::<usize>() + 256
}

fn write_value(out: &mut String, value: &Json) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(true) => out.push_str("true"),
        Json::Bool(false) => out.push_str("false"),
        // A number's `Display` is its JSON text (itoa for integers, ryu for the finite floats a
        // `Number` can hold), as serde_json's serializer writes it.
        Json::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Json::String(s) => push_string(out, s),
        Json::Array(items) => {
            out.push_str("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(",");
                }
                write_value(out, item);
            }
            out.push_str("]");
        }
        Json::Object(map) => {
            out.push_str("{");
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(",");
                }
                push_string(out, key);
                out.push_str(":");
                write_value(out, item);
            }
            out.push_str("}");
        }
    }
}

/// A JSON string, escaped as serde_json escapes: `"` and `\`, the five control characters
/// with a short escape, the other controls below U+0020 as `\u00XX` (lower-case hex), nothing
/// else (not DEL, not `/`, not non-ASCII). Runs without an escape are found eight bytes at a
/// time and copied whole.
pub fn push_string(out: &mut String, s: &str) {
    out.push_str("\"");
    let bytes = s.as_bytes();
    let mut run = 0;
    let mut at = 0;
    while at < bytes.len() {
        if let Some(word) = bytes.get(at..at + 8) {
            if !any_needs_escape(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
                at += 8;
                continue;
            }
        }
        let byte = bytes[at];
        if needs_escape(byte) {
            // The byte is ASCII, so both ends of the run are character boundaries.
            out.push_str(&s[run..at]);
            push_escape(out, byte);
            run = at + 1;
        }
        at += 1;
    }
    out.push_str(&s[run..]);
    out.push_str("\"");
}

fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Whether any of the eight bytes of `word` needs an escape, exactly. The lowest byte below `n`
/// (0x20, or 1 for a zero byte after the XOR) takes no borrow from below: it wraps to 0x80 or
/// more while its own high bit is clear, so it sets its high bit of `(word - n·LOW) & !word`.
/// With no byte below `n` nothing borrows, and a byte keeps its high bit clear after the
/// subtraction unless it had it set, which `!word` clears. A flagged word is then looked at
/// byte by byte.
fn any_needs_escape(word: u64) -> bool {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |w: u64, n: u64| w.wrapping_sub(LOW * n) & !w;
    let quote = word ^ (LOW * u64::from(b'"'));
    let backslash = word ^ (LOW * u64::from(b'\\'));
    (below(word, 0x20) | below(quote, 1) | below(backslash, 1)) & HIGH != 0
}

fn push_escape(out: &mut String, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => "\\\"",
        b'\\' => "\\\\",
        b'\n' => "\\n",
        b'\r' => "\\r",
        b'\t' => "\\t",
        0x08 => "\\b",
        0x0c => "\\f",
        _ => {
            let hex = [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]];
            out.push_str("\\u00");
            out.push_str(std::str::from_utf8(&hex).expect("hex digits are ASCII"));
            return;
        }
    };
    out.push_str(short);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn same_as_serde_json(value: &Json) {
        let expected = serde_json::to_string(value).unwrap();
        assert_eq!(to_text(value), expected, "{value:?}");
    }

    #[test]
    fn every_byte_that_can_start_a_character_is_escaped_as_serde_json_escapes_it() {
        let ascii: String = (0u8..0x80).map(char::from).collect();
        same_as_serde_json(&json!(ascii));
        for c in (0u8..0x80).map(char::from) {
            same_as_serde_json(&json!(c.to_string()));
            same_as_serde_json(&json!(format!("a{c}b{c}{c}")));
        }
    }

    /// The eight-byte test says yes exactly when a byte of the word needs an escape: every byte
    /// value at every place among fillers of each kind, then a million words from an LCG.
    #[test]
    fn the_word_test_is_exact() {
        let exact = |word: u64| word.to_le_bytes().into_iter().any(needs_escape);
        let check = |word: u64| assert_eq!(any_needs_escape(word), exact(word), "{word:#018x}");
        for filler in [
            b'a', b' ', b'!', b'#', b'[', b']', 0x1f, b'"', b'\\', 0x7f, 0x80, 0xa2, 0xdc, 0xff,
        ] {
            for place in 0..8 {
                for byte in 0..=255u8 {
                    let mut bytes = [filler; 8];
                    bytes[place] = byte;
                    check(u64::from_le_bytes(bytes));
                }
            }
        }
        let mut word = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..1_000_000 {
            word = word
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            check(word);
            // Words of mostly plain bytes, where a lone escape must still be seen.
            check(word | 0x4040_4040_4040_4040);
        }
    }

    #[test]
    fn an_escape_at_any_place_in_or_across_eight_byte_words_is_found() {
        for special in ['"', '\\', '\n', '\u{0}', '\u{1f}', ' ', '~', 'é', '本'] {
            for before in 0..20 {
                for after in 0..10 {
                    let s = format!("{}{special}{}", "a".repeat(before), "b".repeat(after));
                    same_as_serde_json(&json!(s));
                    same_as_serde_json(&json!(format!("{s}{special}{s}")));
                }
            }
        }
    }

    #[test]
    fn text_the_model_reads_is_written_as_serde_json_writes_it() {
        for s in [
            "",
            "🎯 North Star: ship v2\n▶ 本丸: 「テスト」を書く\n  reason: \"why\" \\ here",
            "\u{7f}\u{80}\u{2028}\u{2029}\u{feff}\u{202e}/</script>",
            "\r\n\t\u{0}\u{1f}\u{1b}[0m",
        ] {
            same_as_serde_json(&json!(s));
            same_as_serde_json(&json!({ s: s }));
        }
    }

    #[test]
    fn every_kind_of_value_and_nesting_is_written_as_serde_json_writes_it() {
        same_as_serde_json(&json!(null));
        same_as_serde_json(&json!({
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "content": [{"type": "text", "text": "a\nb"}, {"type": "text", "text": ""}],
                "isError": false,
                "empty": {}, "none": [], "nested": [[[]], [{}], [null, true, false]],
            },
            "numbers": [0, -1, 1, i64::MIN, i64::MAX, u64::MAX, 0.5, -2.5e-7, 1e300, 9007199254740993.0],
            "with \"quotes\"": "\\",
        }));
    }
}
