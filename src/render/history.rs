//! The history resource's text: one line per event, newest first, with its time, what happened,
//! its texts folded, and who made it; then how many older events were left out.

use super::{push_inline, utc, STATE_BUDGET};
use crate::model::{Event, EventKind, History};

/// The first line of the history text.
pub const HISTORY_HEAD: &str = "History, newest first (times UTC):";
/// The time column of an event from before the server kept times.
pub const NO_TIME: &str = "(time unknown)";

/// The history resource's text: one line per event, newest first, with its UTC time, what
/// happened, the new value (or the task's body), the why or evidence, and the client's name as
/// it sent it; then how many older events were left out. Every stored string is folded. The
/// text stays within `STATE_BUDGET` characters: an event whose line would pass it is left out
/// with every older one, and counted with them (an event line is at most about 3,100
/// characters, so a dozen or more always fit).
pub fn history(history: &History) -> String {
    let mut out = String::with_capacity(128 + 160 * history.events.len());
    out.push_str(HISTORY_HEAD);
    if history.events.is_empty() {
        out.push_str("\n(no events yet)");
    }
    let mut chars = out.chars().count();
    let mut line = String::with_capacity(256);
    let mut older = history.older;
    for (shown, event) in history.events.iter().enumerate() {
        line.clear();
        push_event(&mut line, event);
        let line_chars = line.chars().count() + 1;
        // Room is kept for the closing count's line.
        if chars + line_chars + 40 > STATE_BUDGET {
            older += (history.events.len() - shown) as u64;
            break;
        }
        out.push('\n');
        out.push_str(&line);
        chars += line_chars;
    }
    if older > 0 {
        out.push_str(&format!("\n… and {older} older events"));
    }
    out
}

/// One event's line of the history, without its line break.
fn push_event(out: &mut String, event: &Event) {
    match event.at_ms {
        Some(at) => out.push_str(&utc(at)),
        None => out.push_str(NO_TIME),
    }
    out.push_str("  ");
    let (what, note) = match event.what {
        EventKind::NorthStar => ("north star set: ".to_owned(), "why"),
        EventKind::Focus => ("focus set: ".to_owned(), "why"),
        EventKind::Completed(kind) => (format!("{} task completed: ", kind.as_str()), "evidence"),
    };
    out.push_str(&what);
    push_inline(out, &event.value);
    if let Some(text) = &event.note {
        out.push_str(" — ");
        out.push_str(note);
        out.push_str(": ");
        push_inline(out, text);
    }
    if let Some(done_when) = &event.done_when {
        out.push_str(" — done when: ");
        push_inline(out, done_when);
    }
    out.push_str(" — by ");
    push_inline(out, &event.client);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;

    /// 2026-12-01 08:00 UTC, the tests' now.
    const NOW: i64 = 1_796_112_000_000;
    const DAY: i64 = 86_400_000;

    #[test]
    fn the_history_byte_for_byte() {
        let event = |days_ago: Option<i64>, what, value: &str, note: Option<&str>| Event {
            at_ms: days_ago.map(|d| NOW - d * DAY - 5 * 60_000),
            what,
            value: value.into(),
            note: note.map(Into::into),
            done_when: None,
            client: "claude-code/2.1.332".into(),
        };
        let mut focus = event(Some(0), EventKind::Focus, "Ship\nit", Some("why"));
        focus.done_when = Some("tests pass".into());
        let history = History {
            project_id: "p".into(),
            events: vec![
                focus,
                event(
                    Some(2),
                    EventKind::Completed(Kind::Cleanup),
                    "logs",
                    Some("PR #7"),
                ),
                event(None, EventKind::NorthStar, "v1", None),
            ],
            older: 3,
        };
        assert_eq!(
            self::history(&history),
            "History, newest first (times UTC):\n\
             2026-12-01 07:55  focus set: Ship it — why: why — done when: tests pass — by claude-code/2.1.332\n\
             2026-11-29 07:55  cleanup task completed: logs — evidence: PR #7 — by claude-code/2.1.332\n\
             (time unknown)  north star set: v1 — by claude-code/2.1.332\n\
             … and 3 older events"
        );
        let empty = History {
            project_id: "p".into(),
            events: Vec::new(),
            older: 0,
        };
        assert_eq!(
            self::history(&empty),
            format!("{HISTORY_HEAD}\n(no events yet)")
        );
    }
}
