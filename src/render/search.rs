//! The search tool's text: what the model reads of the records a search found, one line each,
//! the history resource's wording with the project in front. Its first line says they are
//! records, not tasks to do, so a list of them never reads as a to-do list. Every stored string
//! and the query are folded (`push_inline`) and clipped. No I/O here.

use super::{push_inline, utc, NO_TIME};
use crate::model::{Hit, Hits, Record};

/// Most characters of one text a hit line shows, and of the query a sentence repeats.
pub const CLIP: usize = 200;
const QUERY_CLIP: usize = 80;

/// Where a search looked: the project and the kind of record it was narrowed to, if any.
#[derive(Debug, Clone, Copy)]
pub struct Searched<'a> {
    pub query: &'a str,
    pub project: Option<&'a str>,
    pub kind: Option<&'a str>,
}

/// The search result's text: a head that says what the lines are, one line per hit, then how
/// many records matched; or, with no hit, one sentence saying where nothing was found.
pub fn records(searched: &Searched<'_>, hits: &Hits) -> String {
    let mut out = String::with_capacity(256 + 200 * hits.hits.len());
    if hits.hits.is_empty() {
        out.push_str("No record matches \"");
        push_clipped(&mut out, searched.query, "", QUERY_CLIP);
        out.push('"');
        push_where(&mut out, searched);
        out.push_str(
            ". The search looks through North Stars, focuses (statement, why, done when) and \
             tasks (body, evidence).",
        );
        return out;
    }
    out.push_str("Records, not tasks to do: what was decided and done that matches \"");
    push_clipped(&mut out, searched.query, "", QUERY_CLIP);
    out.push('"');
    push_where(&mut out, searched);
    out.push_str(", newest first (times UTC). get_state says what to do now.");
    for hit in &hits.hits {
        out.push('\n');
        push_hit(&mut out, hit, searched.query);
    }
    let shown = hits.hits.len() as u64;
    if hits.total > shown {
        out.push_str(&format!(
            "\n{shown} of {} matching records shown, the newest; narrow the query, or name a \
             project_id or kind, to reach older ones.",
            hits.total
        ));
    } else if shown == 1 {
        out.push_str("\n1 record matches.");
    } else {
        out.push_str(&format!("\n{shown} records match."));
    }
    out
}

/// ` in project "p"` and ` among cleanup records`, for what the search was narrowed to.
fn push_where(out: &mut String, searched: &Searched<'_>) {
    if let Some(project) = searched.project {
        out.push_str(" in project \"");
        push_inline(out, project);
        out.push('"');
    }
    if let Some(kind) = searched.kind {
        out.push_str(" among ");
        out.push_str(kind);
        out.push_str(" records");
    }
}

/// One hit: `2026-12-03 11:00  p  focus set: … — why: … — done when: … — by web`. A task
/// still open shows its id before any stored text, as the reference block does.
fn push_hit(out: &mut String, hit: &Hit, query: &str) {
    match hit.at_ms {
        Some(at) => out.push_str(&utc(at)),
        None => out.push_str(NO_TIME),
    }
    out.push_str("  ");
    push_inline(out, &hit.project_id);
    out.push_str("  ");
    let note = match &hit.record {
        Record::NorthStar => {
            out.push_str("north star set: ");
            "why"
        }
        Record::Focus => {
            out.push_str("focus set: ");
            "why"
        }
        Record::Task { kind, id, done } => {
            out.push_str(kind.as_str());
            if *done {
                out.push_str(" task completed: ");
            } else {
                out.push_str(" task open, task_id=");
                push_inline(out, id);
                out.push_str(": ");
            }
            "evidence"
        }
    };
    push_clipped(out, &hit.text, query, CLIP);
    if let Some(text) = &hit.note {
        out.push_str(" — ");
        out.push_str(note);
        out.push_str(": ");
        push_clipped(out, text, query, CLIP);
    }
    if let Some(done_when) = &hit.done_when {
        out.push_str(" — done when: ");
        push_clipped(out, done_when, query, CLIP);
    }
    out.push_str(" — by ");
    push_inline(out, &hit.by);
}

/// `text` folded, then at most `clip` characters of it: those around the first place `query`
/// occurs (ignoring ASCII case), else its start, with `…` where text was cut.
pub fn push_clipped(out: &mut String, text: &str, query: &str, clip: usize) {
    let mut folded = String::with_capacity(text.len());
    push_inline(&mut folded, text);
    let chars: Vec<char> = folded.chars().collect();
    if chars.len() <= clip {
        out.push_str(&folded);
        return;
    }
    let start = find(&chars, query)
        .map_or(0, |at| at.saturating_sub(clip / 4))
        .min(chars.len() - clip);
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..start + clip]);
    if start + clip < chars.len() {
        out.push('…');
    }
}

/// Where `query` first occurs in `chars`, ignoring ASCII case. Only ASCII: Unicode's case
/// tables would add about 10 KB to the Worker for where a window of text starts.
fn find(chars: &[char], query: &str) -> Option<usize> {
    let lower = |c: char| c.to_ascii_lowercase();
    let query: Vec<char> = query.chars().map(lower).collect();
    if query.is_empty() {
        return None;
    }
    let text: Vec<char> = chars.iter().copied().map(lower).collect();
    text.windows(query.len())
        .position(|w| w == query.as_slice())
}
