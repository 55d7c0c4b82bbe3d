//! The one rule for characters a reader cannot see: which ones are shown by their code point
//! (`\u{E0041}`) wherever stored text reaches a model or a person (get_state, state.txt, the
//! hook, search, the pages), so that nothing hides in text that looks plain. Unicode tag
//! characters, bidi embeddings, overrides, isolates and marks, zero-width characters that join
//! nothing, and the other default-ignorable characters are shown; a variation selector that
//! belongs to an emoji or a kanji variant, and a joiner between two letters or emoji of a script
//! beyond ASCII (an emoji ZWJ sequence, Persian, Indic), stay as typed. Nothing stored is
//! changed: this decides only how text is shown. Line breaks and controls are the renderer's
//! (`render::push_inline` folds them); no I/O, no markup here.

/// Calls `f` with each character of `text` and whether it is to be shown by its code point.
pub fn each(text: &str, mut f: impl FnMut(char, bool)) {
    let mut chars = text.chars().peekable();
    // The character before, and whether it was kept as itself.
    let mut before: Option<(char, bool)> = None;
    while let Some(c) = chars.next() {
        let kept = match class(c) {
            Class::Shown => false,
            Class::Selector => before.is_some_and(|(b, kept)| kept && takes_selector(c, b)),
            Class::Joiner => {
                let after = chars.peek().copied();
                before.is_some_and(|(b, kept)| kept && !b.is_ascii() && class(b) != Class::Joiner)
                    && after.is_some_and(|a| !a.is_ascii() && class(a) == Class::Plain && !folds(a))
            }
            Class::Plain => true,
        };
        f(c, !kept);
        before = Some((c, kept && !folds(c)));
    }
}

/// Whether `c` may be shown by its code point somewhere: every character `each` may show.
pub fn is_invisible(c: char) -> bool {
    class(c) != Class::Plain
}

/// Appends `c` as its code point: `\u{` and at least four upper-case hex digits, then `}`.
pub fn push_code(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let n = c as u32;
    out.push_str("\\u{");
    let digits = (32 - n.leading_zeros()).div_ceil(4).max(4);
    for i in (0..digits).rev() {
        out.push(char::from(HEX[((n >> (4 * i)) & 0xF) as usize]));
    }
    out.push('}');
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Always shown by its code point.
    Shown,
    /// A variation selector: kept right after a base that takes it, else shown.
    Selector,
    /// ZWNJ or ZWJ: kept between two letters or emoji beyond ASCII, else shown.
    Joiner,
    /// Everything else.
    Plain,
}

/// A line break, a control or a space: the renderer's, and never the base of a selector.
fn folds(c: char) -> bool {
    c.is_control() || c.is_whitespace()
}

fn class(c: char) -> Class {
    match c {
        '\u{FE00}'..='\u{FE0F}'
        | '\u{E0100}'..='\u{E01EF}'
        | '\u{180B}'..='\u{180D}'
        | '\u{180F}' => Class::Selector,
        '\u{200C}' | '\u{200D}' => Class::Joiner,
        // The default-ignorable code points (Unicode's DerivedCoreProperties) less the
        // selectors and joiners above: the soft hyphen, the combining grapheme joiner, Arabic's
        // letter mark, the Hangul fillers, Khmer's inherent vowels, the Mongolian vowel
        // separator, zero-width space, the bidi marks, embeddings, overrides and isolates, the
        // word joiner and invisible operators, the byte order mark, and the tag characters.
        '\u{00AD}'
        | '\u{034F}'
        | '\u{061C}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{180E}'
        | '\u{200B}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{3164}'
        | '\u{FEFF}'
        | '\u{FFA0}'
        | '\u{FFF0}'..='\u{FFF8}'
        | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}' => Class::Shown,
        _ => Class::Plain,
    }
}

/// Whether `base` takes the variation selector `selector`: the emoji and text presentation
/// selectors after a character that has both (keycaps, ©, ®, symbols, emoji); the ideographic
/// variation selectors, and the standardized ones, after a CJK ideograph; Mongolian's after a
/// Mongolian letter. Anything else (a selector after a Latin letter, a second one after the
/// first) is shown, so no text can carry bytes in a run of selectors.
fn takes_selector(selector: char, base: char) -> bool {
    let ideograph = matches!(base,
        '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{3FFFF}');
    match selector {
        '\u{FE0E}' | '\u{FE0F}' => matches!(base,
            '#' | '*' | '0'..='9' | '\u{A9}' | '\u{AE}' | '\u{203C}'..='\u{3299}'
            | '\u{1F000}'..='\u{1FAFF}'),
        '\u{180B}'..='\u{180F}' => matches!(base, '\u{1820}'..='\u{18AF}'),
        _ => ideograph,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        let mut out = String::new();
        each(text, |c, code| match code {
            true => push_code(&mut out, c),
            false => out.push(c),
        });
        out
    }

    /// The characters the issue names are shown by their code point, wherever they stand.
    #[test]
    fn hidden_characters_are_shown_by_their_code_point() {
        assert_eq!(shown("a\u{E0041}\u{E007F}b"), "a\\u{E0041}\\u{E007F}b");
        assert_eq!(shown("\u{202E}evil\u{202C}"), "\\u{202E}evil\\u{202C}");
        assert_eq!(
            shown("\u{2066}\u{2067}\u{2068}\u{2069}"),
            "\\u{2066}\\u{2067}\\u{2068}\\u{2069}"
        );
        assert_eq!(
            shown("x\u{200B}y\u{2060}z\u{FEFF}"),
            "x\\u{200B}y\\u{2060}z\\u{FEFF}"
        );
        assert_eq!(
            shown("\u{200E}\u{200F}\u{61C}\u{AD}"),
            "\\u{200E}\\u{200F}\\u{061C}\\u{00AD}"
        );
        assert_eq!(shown("\u{E0FFF}\u{1D173}"), "\\u{E0FFF}\\u{1D173}");
    }

    /// Emoji sequences, kanji variants and joiners in scripts beyond ASCII stay as typed.
    #[test]
    fn selectors_and_joiners_that_belong_stay_as_typed() {
        for kept in [
            "❤\u{FE0F}",                                   // ❤️, emoji presentation
            "1\u{FE0F}\u{20E3}",                           // 1️⃣, a keycap
            "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}", // a family
            "\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}",          // the rainbow flag
            "\u{1F469}\u{1F3FD}\u{200D}\u{1F4BB}",         // a skin tone, then a joiner
            "葛\u{E0100}城",                               // an ideographic variant
            "辻\u{E0101}",
            "\u{FA10}\u{FE00}", // a standardized CJK variant
            "می\u{200C}خواهم",  // Persian's non-joiner
            "क्\u{200D}ष",       // Devanagari's joiner
            "北極星 🎯",
        ] {
            assert_eq!(shown(kept), kept, "{kept:?}");
        }
    }

    /// A selector or joiner that belongs to nothing is shown: no text carries bytes in
    /// selectors after Latin letters or in a run after one base, nor joins ASCII letters.
    #[test]
    fn selectors_and_joiners_that_belong_to_nothing_are_shown() {
        assert_eq!(shown("a\u{FE0F}"), "a\\u{FE0F}");
        assert_eq!(shown("😀\u{E0100}\u{E0101}"), "😀\\u{E0100}\\u{E0101}");
        assert_eq!(shown("❤\u{FE0F}\u{FE0F}"), "❤\u{FE0F}\\u{FE0F}");
        assert_eq!(shown("葛\u{E0100}\u{E0100}"), "葛\u{E0100}\\u{E0100}");
        assert_eq!(shown("\u{FE0F}start"), "\\u{FE0F}start");
        assert_eq!(shown("ig\u{200D}nore"), "ig\\u{200D}nore");
        assert_eq!(shown("\u{200D}👩"), "\\u{200D}👩");
        assert_eq!(shown("👩\u{200D}"), "👩\\u{200D}");
        assert_eq!(shown("👩\u{200D} 👩"), "👩\\u{200D} 👩");
        assert_eq!(shown("👩 \u{200D}👩"), "👩 \\u{200D}👩");
        assert_eq!(shown("👩\u{200D}\u{200D}👩"), "👩\\u{200D}\\u{200D}👩");
        assert_eq!(shown("👩\u{200B}\u{200D}👩"), "👩\\u{200B}\\u{200D}👩");
        assert_eq!(shown("a\u{1820}\u{180B}"), "a\u{1820}\u{180B}");
        // A space of any script joins nothing: neither before a joiner nor after it.
        assert_eq!(shown("👩\u{200D}\u{3000}👩"), "👩\\u{200D}\u{3000}👩");
        assert_eq!(shown("👩\u{3000}\u{200D}👩"), "👩\u{3000}\\u{200D}👩");
        assert_eq!(shown("👩\u{85}\u{200D}👩"), "👩\u{85}\\u{200D}👩");
        assert_eq!(shown("a\u{180B}"), "a\\u{180B}");
    }

    /// Every character `each` can show is one `is_invisible` names, and every one it names is
    /// shown somewhere (alone, at the start of a text).
    #[test]
    fn is_invisible_names_exactly_what_can_be_shown() {
        for c in (0..=0x10_FFFFu32).filter_map(char::from_u32) {
            let mut alone = false;
            each(&c.to_string(), |_, code| alone = code);
            assert_eq!(is_invisible(c), alone, "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn code_points_are_upper_case_hex_of_four_digits_or_more() {
        let code = |c| {
            let mut out = String::new();
            push_code(&mut out, c);
            out
        };
        assert_eq!(code('\u{AD}'), "\\u{00AD}");
        assert_eq!(code('\u{FEFF}'), "\\u{FEFF}");
        assert_eq!(code('\u{1BCA0}'), "\\u{1BCA0}");
        assert_eq!(code('\u{E0041}'), "\\u{E0041}");
        assert_eq!(code('\u{10FFFF}'), "\\u{10FFFF}");
        assert_eq!(code('a'), "\\u{0061}");
    }
}
