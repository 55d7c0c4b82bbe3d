//! The export as Markdown, for a person to read: the North Star, the focus, the open tasks and
//! the history, newest first. Every stored string is folded (`push_inline`), so it stays on its
//! line, and comes after a fixed prefix, so it never starts a line (no heading, list or quote
//! of its own); the characters that make inline markup (emphasis, links, images, HTML, code,
//! entities) are escaped with a backslash, so it reads as the characters it is. No I/O here.

use super::{push_inline, utc};
use crate::model::{EventKind, Export};

/// The Markdown document of an export taken at `now_ms`.
pub fn markdown(export: &Export, now_ms: i64) -> String {
    let mut out = String::with_capacity(1024 + 160 * (export.tasks.len() + export.history.len()));
    let p = &export.project;
    out.push_str("# ");
    push_md(&mut out, &p.id);
    out.push_str("\n\nExported from handoff-mcp on ");
    out.push_str(&utc(now_ms));
    out.push_str(" UTC.\n\n## North Star\n\n🎯 ");
    push_md(&mut out, &p.north_star);
    out.push_str("\n\n- ");
    push_set(&mut out, p.updated_at, p.updated_by.as_deref());
    out.push_str("\n\n## Focus\n\n");
    match &export.focus {
        None => out.push_str("▶ (not set)\n"),
        Some(f) => {
            out.push_str("▶ ");
            push_md(&mut out, &f.statement);
            out.push('\n');
            for (label, text) in [("why", &f.why), ("done when", &f.done_when)] {
                if let Some(text) = text {
                    out.push_str("\n- ");
                    out.push_str(label);
                    out.push_str(": ");
                    push_md(&mut out, text);
                }
            }
            out.push_str("\n- ");
            push_set(&mut out, f.updated_at, f.updated_by.as_deref());
            out.push('\n');
        }
    }
    out.push_str("\n## Open tasks\n\n");
    let open: Vec<_> = export.tasks.iter().filter(|t| !t.done).collect();
    if open.is_empty() {
        out.push_str("(none)\n");
    }
    for t in open {
        out.push_str("- ");
        out.push_str(t.kind.as_str());
        out.push_str(": ");
        push_md(&mut out, &t.body);
        out.push_str(" (task_id ");
        push_md(&mut out, &t.id);
        out.push_str(")\n");
    }
    out.push_str("\n## History, newest first (times UTC)\n\n");
    if export.history.is_empty() {
        out.push_str("(no events)\n");
    }
    for e in export.history.iter().rev() {
        let e = &e.event;
        out.push_str("- ");
        out.push_str(&e.at_ms.map_or("(time unknown)".into(), utc));
        let (what, note) = match e.what {
            EventKind::NorthStar => ("north star set".to_owned(), "why"),
            EventKind::Focus => ("focus set".to_owned(), "why"),
            EventKind::Completed(kind) => (format!("{} task completed", kind.as_str()), "evidence"),
        };
        out.push_str(" — ");
        out.push_str(&what);
        out.push_str(": ");
        push_md(&mut out, &e.value);
        for (label, text) in [(note, &e.note), ("done when", &e.done_when)] {
            if let Some(text) = text {
                out.push_str(" — ");
                out.push_str(label);
                out.push_str(": ");
                push_md(&mut out, text);
            }
        }
        out.push_str(" — by ");
        push_md(&mut out, &e.client);
        out.push('\n');
    }
    out
}

/// `set 2026-12-01 08:00 UTC by web`, or without a time when none was kept.
fn push_set(out: &mut String, at_ms: Option<i64>, by: Option<&str>) {
    out.push_str("set ");
    match at_ms {
        Some(at) => {
            out.push_str(&utc(at));
            out.push_str(" UTC");
        }
        None => out.push_str("before times were kept"),
    }
    out.push_str(" by ");
    push_md(out, by.unwrap_or("unknown"));
}

/// A stored string folded onto its line, with the characters of inline markup escaped.
fn push_md(out: &mut String, text: &str) {
    let mut folded = String::with_capacity(text.len());
    push_inline(&mut folded, text);
    for c in folded.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '~' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
}
