//! Stored text inside the line it belongs to: line breaks and controls folded into spaces,
//! characters a reader cannot see shown by their code point (`invisible`), copied in one piece
//! when there is nothing to change (`is_plain`); the one clip of untrusted text for a sentence
//! (`clip`, `preview`), and what counts as blank.

use crate::invisible;

/// A caller's input quoted inside a sentence (an error, a refusal): folded as every stored
/// string is (`push_inline`: no line break or control survives, U+2028 and
/// U+2029 included) and cut to `max_chars` characters, with `…` where it was cut. The one way
/// untrusted text is clipped for display.
pub fn clip(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(4 * max_chars + 3));
    push_inline(&mut out, text);
    if let Some((at, _)) = out.char_indices().nth(max_chars) {
        out.truncate(at);
        out.push('…');
    }
    out
}

/// A stored string folded as every stored string is in a text (`push_inline`), whole.
pub fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_inline(&mut out, text);
    out
}

/// At most 40 characters of untrusted input, folded (`clip`), for echoing inside an error
/// sentence: a tool's argument, a form's field name, an import's value.
pub fn preview(s: &str) -> String {
    clip(s, 40)
}

/// Appends a stored string so that it stays inside the line it belongs to, with nothing in it
/// that a reader cannot see.
///
/// Stored strings are untrusted. Every character that could end a line (CR, LF, VT, FF, NEL,
/// U+2028, U+2029) or is otherwise a control character or a space becomes a space, runs of such
/// spaces fold into one, and the ends are trimmed. With no line break left, a stored
/// `🎯 NORTH STAR: …` or `  [cleanup] …` can only ever be text inside its own line, never a
/// line of the structure. Characters a reader cannot see (tag characters, bidi controls,
/// zero-width characters that join nothing: `invisible`) are shown by their code point, so text
/// can neither hide words from a person nor display out of order. The stored value itself is
/// never changed.
pub(super) fn push_inline(out: &mut String, text: &str) {
    match is_plain(text) {
        true => out.push_str(text),
        false => fold(out, text),
    }
}

/// `push_inline`'s rule, one character at a time.
fn fold(out: &mut String, text: &str) {
    let start = out.len();
    let mut pending_space = false;
    invisible::each(text, |c, code| {
        if !code && (c.is_control() || c.is_whitespace()) {
            pending_space = true;
            return;
        }
        if pending_space && out.len() > start {
            out.push(' ');
        }
        pending_space = false;
        match code {
            true => invisible::push_code(out, c),
            false => out.push(c),
        }
    });
}

/// Whether `push_inline` keeps `text` as it is: no control character, no whitespace but single
/// ASCII spaces between other characters, and no character that may be folded or shown by its
/// code point (`may_change`). Most stored text is plain, and is then copied in one piece after
/// one look at each byte.
fn is_plain(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().all(|(i, &byte)| match byte {
        // Printable ASCII, continuation bytes, and the leads `may_change` never matches.
        b'!'..=b'~'
        | 0x80..0xc2
        | 0xc3..0xcd
        | 0xce..0xd8
        | 0xd9..0xe1
        | 0xe4..0xef
        | 0xf1
        | 0xf2
        | 0xf4.. => true,
        // A space with a character before it and one after it that is not a space.
        b' ' => i != 0 && bytes.get(i + 1).is_some_and(|&next| next != b' '),
        0xc2 | 0xcd | 0xd8 | 0xe1..=0xe3 | 0xef | 0xf0 | 0xf3 => !may_change(&bytes[i..]),
        // Controls and DEL.
        _ => false,
    })
}

/// Whether the character a non-ASCII lead byte starts (the first bytes of `bytes`) may be a
/// control, a space or a character `invisible` may show, and so must be decoded: every such
/// character is one of U+0080–U+00A0 and U+00AD (C2), U+034F (CD 8F), U+061C (D8 9C), U+115F,
/// U+1160, U+1680, U+17B4, U+17B5 and U+180B–U+180F (E1), U+2000–U+200F, U+2028–U+202F and
/// U+205F–U+206F (E2), U+3000 and U+3164 (E3), U+FE00–U+FE0F, U+FEFF, U+FFA0 and U+FFF0–U+FFF8
/// (EF), U+1BCA0–U+1BCA3 and U+1D173–U+1D17A (F0) or U+E0000–U+E0FFF (F3 A0). Text in most
/// scripts, Japanese with its punctuation, dashes and curly quotes among them, holds none of
/// these. A continuation byte is never such a lead.
fn may_change(bytes: &[u8]) -> bool {
    matches!(
        bytes,
        [0xc2, 0x80..=0xa0 | 0xad, ..]
            | [0xcd, 0x8f, ..]
            | [0xd8, 0x9c, ..]
            | [0xe1, 0x85, 0x9f | 0xa0, ..]
            | [0xe1, 0x9a, 0x80, ..]
            | [0xe1, 0x9e, 0xb4 | 0xb5, ..]
            | [0xe1, 0xa0, 0x8b..=0x8f, ..]
            | [0xe2, 0x80, 0x80..=0x8f | 0xa8..=0xaf, ..]
            | [0xe2, 0x81, 0x9f..=0xaf, ..]
            | [0xe3, 0x80, 0x80, ..]
            | [0xe3, 0x85, 0xa4, ..]
            | [0xef, 0xb8, 0x80..=0x8f, ..]
            | [0xef, 0xbb, 0xbf, ..]
            | [0xef, 0xbe, 0xa0, ..]
            | [0xef, 0xbf, 0xb0..=0xb8, ..]
            | [0xf0, 0x9b, 0xb2, 0xa0..=0xa3, ..]
            | [0xf0, 0x9d, 0x85, 0xb3..=0xba, ..]
            | [0xf3, 0xa0, ..]
    )
}

/// True when a stored string would show nothing at all: only whitespace, control characters
/// and characters a reader cannot see (`invisible`). Such a text counts as empty.
pub fn is_blank(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_whitespace() || c.is_control() || invisible::is_invisible(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quoted input is folded first, then cut: exactly `max` characters stay whole, one more
    /// is cut with `…`, and no line break of any kind survives.
    #[test]
    fn clip_folds_then_cuts() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc…");
        assert_eq!(clip("本本本本", 3), "本本本…");
        assert_eq!(clip("a\u{2028}b\u{2029}c\r\nd", 40), "a b c d");
        assert_eq!(clip("  a  \n  b  ", 2), "a …");
        assert_eq!(clip("", 5), "");
    }

    /// The shortcut is taken where it matters: no character of Japanese text (kana, CJK
    /// ideographs, full-width forms) nor of most other scripts is decoded to be kept.
    #[test]
    fn text_in_most_scripts_is_kept_without_decoding() {
        let ranges = [
            0xa1..0xad,
            0xae..0x34f,
            0x350..0x600,
            0x640..0x115f,
            0x1161..0x1680,
            0x16c0..0x17b4,
            0x17b6..0x180b,
            0x1810..0x2000,
            0x2010..0x2028,
            0x2030..0x205f,
            0x2070..0x3000,
            0x3001..0x3164,
            0x3165..0xa000,
            0xff01..0xff5f,
            0x1f000..0x1fb00,
        ];
        for c in ranges.into_iter().flatten().filter_map(char::from_u32) {
            let mut utf8 = [0; 4];
            let bytes = c.encode_utf8(&mut utf8).as_bytes();
            assert!(!may_change(bytes), "U+{:04X}", c as u32);
        }
        assert!(may_change("\u{3000}".as_bytes()), "U+3000 is decoded");
    }

    /// `may_change` holds for every non-ASCII character that folds or may be shown by its code
    /// point, and for no other character at all.
    #[test]
    fn may_change_names_the_characters_that_change_and_few_others() {
        let (mut decoded, mut changing) = (0, 0);
        for c in (0x80..=0x10_ffff).filter_map(char::from_u32) {
            let mut utf8 = [0; 4];
            let may = may_change(c.encode_utf8(&mut utf8).as_bytes());
            let changes = c.is_control() || c.is_whitespace() || invisible::is_invisible(c);
            assert!(may || !changes, "U+{:04X} changes", c as u32);
            decoded += usize::from(may);
            changing += usize::from(changes);
        }
        assert_eq!(decoded, changing);
    }

    /// The one-piece copy is taken where it matters: text with single spaces between words, in
    /// English and in Japanese, and ids; and not where a byte would be dropped or folded.
    #[test]
    fn plain_text_is_copied_in_one_piece() {
        for plain in [
            "",
            "x",
            "Remove the temporary debug logging from the D1 adapter",
            "handoff-mcp v1 を公開し、どのチャット世代からでも get_state 一回で北極星に戻る",
            "性能の issue: 1 クエリの Worker から 15 % 以内に収める（理由）",
            "2a0ef7c0-0687-4e7a-a91d-b6ea9d2fe99f",
            "~!\"#$%&'()*+,-./0123456789:;<=>?@[\\]^_`{|}",
            "é Ω Я ب ह ñ ü ✓ 🎯 — …",
        ] {
            assert!(is_plain(plain), "{plain:?}");
        }
        for folded in [
            " ",
            " lead",
            "trail ",
            "two  spaces",
            "tab\there",
            "line\nbreak",
            "nul\0",
            "del\u{7f}",
            "nbsp\u{a0}",
            "ideographic\u{3000}space",
            "bidi\u{202e}",
            "arabic\u{61c}",
            "a\u{1680}b",
            "\u{85}",
        ] {
            assert!(!is_plain(folded), "{folded:?}");
        }
    }

    /// Every character of the Basic Multilingual Plane and every 61st above it, between kept
    /// ones and in runs, comes out as the character-by-character rule says: the shortcuts for
    /// ASCII and for characters that cannot fold agree with it.
    #[test]
    fn every_character_folds_or_stays_as_the_rule_says() {
        let chars = (0..0x1_0000)
            .chain((0x1_0000..=0x10_ffff).step_by(61))
            .chain([0x1f3af, 0x10_ffff])
            .filter_map(char::from_u32);
        for c in chars {
            for text in [format!("a{c}b"), format!("{c}"), format!("{c}{c}x{c}")] {
                let (mut runs, mut chars) = (String::from("x:"), String::from("x:"));
                push_inline(&mut runs, &text);
                fold(&mut chars, &text);
                assert_eq!(runs, chars, "{text:?}");
            }
        }
    }

    /// `push_inline` copies runs of kept characters; its output is the one character-by-character
    /// rule's, for every string of up to five characters from an alphabet of each kind.
    #[test]
    fn inline_text_is_the_character_by_character_rule() {
        let alphabet = [
            'a', 'é', '界', '🎯', ' ', '\n', '\t', '\u{7}', '\u{3000}', '\u{202A}', '\u{2066}',
            '\u{200B}',
        ];
        let mut text = String::new();
        let mut tried = 0;
        for n in 0..=5u32 {
            for mut code in 0..alphabet.len().pow(n) {
                text.clear();
                for _ in 0..n {
                    text.push(alphabet[code % alphabet.len()]);
                    code /= alphabet.len();
                }
                for prefix in ["", "x:"] {
                    let (mut runs, mut chars) = (prefix.to_owned(), prefix.to_owned());
                    push_inline(&mut runs, &text);
                    fold(&mut chars, &text);
                    assert_eq!(runs, chars, "{text:?} after {prefix:?}");
                    tried += 1;
                }
            }
        }
        assert_eq!(tried, 2 * (0..=5).map(|n| 12usize.pow(n)).sum::<usize>());
    }
}
