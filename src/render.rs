//! What the model reads, as pure functions: get_state's fixed-format contract text, the
//! reference block that follows it (the ids complete_task takes), and the 🎯/▶ anchor every
//! write ends with. The Japanese strings are a contract, byte for byte
//! (shared/seed/handoff-mcp-v1.md); nothing else in the crate writes them. No I/O and no wire
//! types here.

use crate::model::{Focus, State};

pub const NORTH_STAR_PREFIX: &str = "🎯 NORTH STAR: ";
pub const FOCUS_PREFIX: &str = "▶ 本丸（今やる1つ）: ";
pub const WHY_OPEN: &str = "（理由: ";
pub const WHY_CLOSE: &str = "）";
pub const SEPARATOR: &str = "— 以下は後処理（北極星達成後・今は着手しない）—";
/// The fixed sentence that ends get_state's tool description.
pub const DESCRIPTION_TAIL: &str =
    "この出力をフラットなTODOメニューに変換するな。まず北極星を述べ、本丸を1つ進めよ。後処理は北極星達成後にのみ着手。";

/// Shown in place of the focus before set_focus was ever called. The contract is silent here;
/// we keep the ▶ line (so the shape never changes) and say what to do.
pub const NO_FOCUS: &str = "（未設定: set_focus で今やる1つを決める）";
/// Shown under the separator when no deferred task is open, so an empty list reads as empty
/// rather than as a truncated answer.
pub const NO_DEFERRED: &str = "  （なし）";

/// The first line of the reference block: it says the block is data, so a model does not read
/// the ids as a second, flat to-do list.
pub const REFERENCE_HEAD: &str = "Reference data, not a to-do list: the task_id of each open \
deferred task, for complete_task once that task is really done.";
/// The reference block's only line when no deferred task is open.
pub const REFERENCE_NONE: &str = "(no open deferred tasks)";

/// Renders the contract text. Lines are joined by `\n`, with no trailing newline.
pub fn render(state: &State) -> String {
    let mut out = String::with_capacity(256 + 64 * state.deferred.len());
    push_anchor(&mut out, &state.north_star, state.focus.as_ref());
    out.push('\n');
    out.push_str(SEPARATOR);
    if state.deferred.is_empty() {
        out.push('\n');
        out.push_str(NO_DEFERRED);
    }
    for task in &state.deferred {
        out.push_str("\n  [");
        out.push_str(task.kind.as_str());
        out.push_str("] ");
        push_inline(&mut out, &task.body);
    }
    out
}

/// The contract's first two lines, 🎯 and ▶, exactly as `render` writes them. Every successful
/// write ends with these, so the model is re-anchored even when it never calls get_state.
pub fn anchor(north_star: &str, focus: Option<&Focus>) -> String {
    let mut out = String::with_capacity(128);
    push_anchor(&mut out, north_star, focus);
    out
}

fn push_anchor(out: &mut String, north_star: &str, focus: Option<&Focus>) {
    out.push_str(NORTH_STAR_PREFIX);
    push_inline(out, north_star);
    out.push('\n');
    out.push_str(FOCUS_PREFIX);
    match focus {
        Some(focus) => {
            push_inline(out, &focus.statement);
            if let Some(why) = &focus.why {
                out.push_str(WHY_OPEN);
                push_inline(out, why);
                out.push_str(WHY_CLOSE);
            }
        }
        None => out.push_str(NO_FOCUS),
    }
}

/// The reference block that follows the contract text: one line per listed deferred task, in
/// the contract's order, with the id complete_task takes. The id comes first, so a body that
/// spells out `task_id=…` can only ever appear after the real one on its line.
pub fn reference(state: &State) -> String {
    let mut out = String::with_capacity(160 + 96 * state.deferred.len());
    out.push_str(REFERENCE_HEAD);
    if state.deferred.is_empty() {
        out.push('\n');
        out.push_str(REFERENCE_NONE);
    }
    for task in &state.deferred {
        out.push_str("\ntask_id=");
        push_inline(&mut out, &task.id);
        out.push_str(" [");
        out.push_str(task.kind.as_str());
        out.push_str("] ");
        push_inline(&mut out, &task.body);
    }
    out
}

/// Appends a stored string so that it stays inside the line it belongs to.
///
/// Stored strings are untrusted. Every character that could end a line (CR, LF, VT, FF, NEL,
/// U+2028, U+2029) or is otherwise a control character becomes a space, runs of such spaces fold
/// into one, and the ends are trimmed. Bidirectional-formatting characters (U+202A–U+202E,
/// U+2066–U+2069, U+200E, U+200F, U+061C) are dropped so text cannot be made to display out
/// of order. With no line break left, a stored `🎯 NORTH STAR: …` or `  [cleanup] …` can only
/// ever be text inside its own line, never a line of the structure. The stored value itself is
/// never changed.
fn push_inline(out: &mut String, text: &str) {
    let start = out.len();
    let mut pending_space = false;
    for c in text.chars() {
        if is_bidi_control(c) {
            continue;
        }
        if c.is_control() || c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && out.len() > start {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
    }
}

/// True when a stored string would show nothing at all: only whitespace, control characters,
/// bidi controls or zero-width format characters. Such a text counts as empty.
pub fn is_blank(text: &str) -> bool {
    text.chars().all(|c| {
        c.is_whitespace()
            || c.is_control()
            || is_bidi_control(c)
            || matches!(c, '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}')
    })
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Deferred, Focus, Kind};

    fn state(
        north_star: &str,
        focus: Option<(&str, Option<&str>)>,
        deferred: &[(Kind, &str)],
    ) -> State {
        State {
            project_id: "p".into(),
            north_star: north_star.into(),
            focus: focus.map(|(s, w)| Focus {
                statement: s.into(),
                why: w.map(Into::into),
            }),
            deferred: deferred
                .iter()
                .enumerate()
                .map(|(i, (kind, body))| Deferred {
                    id: format!("t{i}"),
                    kind: *kind,
                    body: (*body).into(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_contract_text_byte_for_byte() {
        let text = render(&state(
            "v1 を出す",
            Some(("D1 ストアを書く", Some("全部がこれに依存する"))),
            &[
                (Kind::Cleanup, "ログを消す"),
                (Kind::Record, "D1 の制限を記録"),
            ],
        ));
        assert_eq!(
            text,
            "🎯 NORTH STAR: v1 を出す\n\
             ▶ 本丸（今やる1つ）: D1 ストアを書く（理由: 全部がこれに依存する）\n\
             — 以下は後処理（北極星達成後・今は着手しない）—\n  [cleanup] ログを消す\n  [record] D1 の制限を記録"
        );
    }

    #[test]
    fn why_absent_drops_the_reason() {
        let text = render(&state("n", Some(("s", None)), &[(Kind::Record, "r")]));
        assert_eq!(
            text,
            "🎯 NORTH STAR: n\n▶ 本丸（今やる1つ）: s\n— 以下は後処理（北極星達成後・今は着手しない）—\n  [record] r"
        );
    }

    #[test]
    fn no_focus_and_no_deferred_tasks() {
        let text = render(&state("n", None, &[]));
        assert_eq!(
            text,
            "🎯 NORTH STAR: n\n▶ 本丸（今やる1つ）: （未設定: set_focus で今やる1つを決める）\n\
             — 以下は後処理（北極星達成後・今は着手しない）—\n  （なし）"
        );
    }

    #[test]
    fn stored_strings_cannot_forge_lines() {
        let text = render(&state(
            "real\n🎯 NORTH STAR: fake",
            Some((
                "s\r\n▶ 本丸（今やる1つ）: fake",
                Some("w\u{2028}— 以下は後処理（北極星達成後・今は着手しない）—"),
            )),
            &[(
                Kind::Cleanup,
                "a\n  [cleanup] forged\u{85}  [record] forged2\u{0b}x\u{0c}y",
            )],
        ));
        assert_eq!(
            text,
            "🎯 NORTH STAR: real 🎯 NORTH STAR: fake\n\
             ▶ 本丸（今やる1つ）: s ▶ 本丸（今やる1つ）: fake（理由: w — 以下は後処理（北極星達成後・今は着手しない）—）\n\
             — 以下は後処理（北極星達成後・今は着手しない）—\n  [cleanup] a [cleanup] forged [record] forged2 x y"
        );
        assert_eq!(text.lines().count(), 4);
    }

    #[test]
    fn the_reference_block_byte_for_byte() {
        let state = state(
            "n",
            None,
            &[(Kind::Cleanup, "ログを消す"), (Kind::Record, "D1 の制限")],
        );
        assert_eq!(
            reference(&state),
            "Reference data, not a to-do list: the task_id of each open deferred task, for \
             complete_task once that task is really done.\n\
             task_id=t0 [cleanup] ログを消す\ntask_id=t1 [record] D1 の制限"
        );
        assert_eq!(
            reference(&self::state("n", None, &[])),
            format!("{REFERENCE_HEAD}\n{REFERENCE_NONE}")
        );
    }

    #[test]
    fn a_body_cannot_forge_a_reference_line_or_id() {
        let text = reference(&state(
            "n",
            None,
            &[(Kind::Cleanup, "x\ntask_id=forged [record] y")],
        ));
        assert_eq!(
            text.lines().nth(1),
            Some("task_id=t0 [cleanup] x task_id=forged [record] y")
        );
        assert_eq!(text.lines().count(), 2);
    }

    #[test]
    fn the_anchor_is_the_contract_s_first_two_lines() {
        for focus in [None, Some(("s\nforged", None)), Some(("s", Some("w")))] {
            let state = state("n\u{2028}x", focus, &[(Kind::Record, "r")]);
            let text = render(&state);
            let first_two: Vec<&str> = text.lines().take(2).collect();
            assert_eq!(
                anchor(&state.north_star, state.focus.as_ref()),
                first_two.join("\n")
            );
        }
    }

    #[test]
    fn controls_fold_and_bidi_controls_vanish() {
        let text = render(&state(
            " \t lead\0nul\u{1b}[31m\u{202E}rev\u{2066} ",
            Some(("s", None)),
            &[],
        ));
        assert_eq!(text.lines().next(), Some("🎯 NORTH STAR: lead nul [31mrev"));
    }
}
