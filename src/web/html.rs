//! The pages as HTML, built with `Html`, whose only way in for a string that is not a literal is
//! `text`, which escapes it: markup comes from `&'static str` literals alone, so no stored string
//! (North Star, focus, task, project or task id) can reach a page as markup. No inline script,
//! no external resource, no absolute URL (links are relative, so the token in the path is
//! never written into a page). No storage and no HTTP here.

use super::records;
use super::svg;
use crate::form;
pub use crate::html::{page, Html};
use crate::model::{Deferred, EventKind, Focus, History, Kind, State};
use crate::render;
use crate::store::Summary;

/// A refused form, shown above the page with the tool's own sentence; its fields refill the
/// form that was sent, so nothing typed is lost.
pub struct Refused {
    pub tool: &'static str,
    pub sentence: String,
    pub fields: Vec<(String, String)>,
}

impl Refused {
    /// The value the refused form sent for `name`, if it sent one.
    fn field(&self, name: &str) -> Option<&str> {
        form::field(&self.fields, name)
    }

    /// What the `tool` form's `name` field shows: the refused value when that form was the one
    /// sent, else `current`.
    fn value<'a>(
        refused: Option<&'a Refused>,
        tool: &str,
        name: &str,
        current: &'a str,
    ) -> &'a str {
        match refused {
            Some(r) if r.tool == tool => r.field(name).unwrap_or(""),
            _ => current,
        }
    }
}

/// The list of projects.
pub struct Index<'a> {
    /// The relative way from this page's URL to the list (`./`, `../`): links never name the
    /// token.
    pub up: &'static str,
    pub projects: &'a [Summary],
    /// The id to continue after, when there are more projects than this page shows.
    pub next: Option<&'a str>,
    pub now_ms: i64,
    /// Whether the credential may write at all (a read-only one is not offered the import).
    pub write: bool,
}

/// How long ago, roughly: minutes, then hours, then days. A clock that went backwards is "just
/// now".
pub(super) fn ago(at_ms: i64, now_ms: i64) -> String {
    let minutes = (now_ms - at_ms).max(0) / 60_000;
    let (n, unit) = match minutes {
        0 => return "just now".into(),
        1..=59 => (minutes, "min"),
        60..=2879 => (minutes / 60, "h"),
        _ => (minutes / 1440, "d"),
    };
    format!("{n} {unit} ago")
}

pub fn index(v: &Index<'_>) -> String {
    page("Projects", |h| {
        h.raw("<nav>handoff-mcp</nav><h1>Projects</h1>");
        records::list_box(h, v.up, v.write);
        if v.projects.is_empty() {
            h.raw("<p class=m>No projects yet.</p>");
        }
        h.raw("<ul>");
        for p in v.projects {
            h.fill(
                "<li><a href=\"{}projects/{}\"><b>{}</b></a><div>🎯 {}</div><div>▶ ",
                &[v.up, &p.id, &p.id, &p.north_star],
            );
            let set = match (&p.focus, p.focus_set_ms) {
                (Some(focus), at) => {
                    h.text(focus);
                    at.map_or("focus set before times were kept · ".into(), |at| {
                        format!("focus set {} · ", ago(at, v.now_ms))
                    })
                }
                (None, _) => {
                    h.raw("<span class=m>no focus yet</span>");
                    String::new()
                }
            };
            h.fill(
                "</div><div class=m>{}{} cleanup · {} record</div></li>",
                &[&set, &p.cleanup.to_string(), &p.record.to_string()],
            );
        }
        h.raw("</ul>");
        if let Some(next) = v.next {
            h.fill(
                "<p><a href=\"{}?after={}\">More projects →</a></p>",
                &[v.up, next],
            );
        }
    })
}

/// One project's page.
pub struct Project<'a> {
    pub up: &'static str,
    pub state: &'a State,
    /// get_state's text items, exactly as the model is handed them.
    pub texts: &'a [String],
    pub history: &'a History,
    pub now_ms: i64,
    pub write: bool,
    pub refused: Option<&'a Refused>,
}

/// The add_task form's kinds, deferred ones first, with what each means here.
const KINDS: [(Kind, &str); 3] = [
    (Kind::Cleanup, "cleanup: deferred, listed under 後処理"),
    (Kind::Record, "record: deferred, listed under 後処理"),
    (Kind::Main, "main: stored, not listed"),
];

pub fn project(v: &Project<'_>) -> String {
    let s = v.state;
    let id = s.project_id.as_str();
    page(id, |h| {
        h.fill(
            "<nav><a href=\"{}\">← All projects</a></nav><h1>{}</h1>",
            &[v.up, id],
        );
        if let Some(r) = v.refused {
            h.fill("<p class=err role=alert id=refused>{}</p>", &[&r.sentence]);
        }
        records::project_box(h, v.up, id);
        h.raw("<h2>What the model sees</h2>");
        for text in v.texts {
            // A line break right after <pre> or <textarea> is dropped by the HTML parser, so each
            // gets one of its own and a text's own leading break survives.
            h.fill("<pre>\n{}</pre>", &[text]);
        }
        h.raw("<h2>Deferred tasks (後処理)</h2>");
        if s.deferred.is_empty() {
            h.raw("<p class=m>No open deferred tasks.</p>");
        } else {
            h.raw("<ul>");
            for (n, task) in (1..).zip(&s.deferred) {
                deferred_task(h, v, n, task);
            }
            h.raw("</ul>");
        }
        history(h, v.history, v.now_ms);
        if !v.write {
            return;
        }
        let value = |tool, name, current| Refused::value(v.refused, tool, name, current);
        let focus = s.focus.as_ref();
        let focus_text = |f: fn(&Focus) -> Option<&str>| focus.and_then(f).unwrap_or("");
        // Every text a tool keeps may hold line breaks, so each is a textarea (an input would
        // drop them), opened with a line break of its own as a <pre> is above.
        h.fill(
            "<h2>Change</h2>\
             <form method=post action=\"{}projects/{}/set_north_star\" data-tool=set_north_star>\
             <label for=ns>🎯 North Star</label><textarea id=ns name=text rows=3 required>\n{}</textarea>\
             <button>Set North Star</button></form>\
             <form method=post action=\"{}projects/{}/set_focus\" data-tool=set_focus>\
             <label for=fs>▶ Focus (本丸): the one thing to do now</label>\
             <textarea id=fs name=statement rows=2 required>\n{}</textarea>\
             <label for=fw>Why (optional)</label><textarea id=fw name=why rows=2>\n{}</textarea>\
             <label for=fd>Done when (optional)</label>\
             <textarea id=fd name=done_when rows=2>\n{}</textarea>\
             <button>Set focus</button></form>\
             <form method=post action=\"{}projects/{}/add_task\" data-tool=add_task>\
             <label for=tb>New task</label><textarea id=tb name=body rows=2 required>\n{}</textarea>\
             <label for=tk>Kind</label><select id=tk name=kind>",
            &[
                v.up,
                id,
                value("set_north_star", "text", &s.north_star),
                v.up,
                id,
                value("set_focus", "statement", focus_text(|f| Some(&f.statement))),
                value("set_focus", "why", focus_text(|f| f.why.as_deref())),
                value("set_focus", "done_when", focus_text(|f| f.done_when.as_deref())),
                v.up,
                id,
                value("add_task", "body", ""),
            ],
        );
        let kind = value("add_task", "kind", "");
        for (k, label) in KINDS {
            let selected = if k.as_str() == kind { " selected" } else { "" };
            h.fill(
                "<option value={}{}>{}</option>",
                &[k.as_str(), selected, label],
            );
        }
        h.raw("</select><button>Add task</button></form>");
    })
}

/// The `n`th deferred task's row: its kind and body and, when the page writes, its own
/// complete_task form. The row's form carries its task id and its evidence, so Enter in its
/// field, like its button, completes that task and no other.
fn deferred_task(h: &mut Html, v: &Project<'_>, n: u32, task: &Deferred) {
    h.fill(
        "<li><span class=k>{}</span>{}",
        &[task.kind.as_str(), &task.body],
    );
    if v.write {
        // The evidence field refills only in the row whose post was refused.
        let sent = v.refused.filter(|r| r.field("task_id") == Some(&task.id));
        let n = n.to_string();
        h.fill(
            "<form method=post action=\"{}projects/{}/complete_task\" data-tool=complete_task>\
             <input type=hidden name=task_id value=\"{}\">\
             <label for=ev{}>Evidence (optional): what shows it is done</label>\
             <div class=row><input id=ev{} name=evidence value=\"{}\">\
             <button>Complete</button></div></form>",
            &[
                v.up,
                &v.state.project_id,
                &task.id,
                &n,
                &n,
                Refused::value(sent, "complete_task", "evidence", ""),
            ],
        );
    }
    h.raw("</li>");
}

/// The history: the focus timeline, then the history resource's text (every event newest
/// first, with its UTC time, the note and the client), as a model reading it gets it.
fn history(h: &mut Html, history: &History, now_ms: i64) {
    h.raw("<h2>History</h2>");
    let mut focus: Vec<(i64, &str)> = history
        .events
        .iter()
        .filter(|e| e.what == EventKind::Focus)
        .filter_map(|e| Some((e.at_ms?, e.value.as_str())))
        .collect();
    focus.reverse();
    svg::focus_timeline(h, &focus, now_ms);
    h.fill("<pre>\n{}</pre>", &[&render::history(history)]);
}

/// A page that only says why the request was refused.
pub fn refusal(message: &str) -> String {
    page("Refused", |h| {
        h.fill("<h1>Refused</h1><p class=err role=alert>{}</p>", &[message]);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ago_says_minutes_then_hours_then_days() {
        const MIN: i64 = 60_000;
        let now = 1_796_112_000_000;
        for (minutes_ago, said) in [
            (-5, "just now"),
            (0, "just now"),
            (1, "1 min ago"),
            (59, "59 min ago"),
            (60, "1 h ago"),
            (2879, "47 h ago"),
            (2880, "2 d ago"),
            (10 * 1440 + 5, "10 d ago"),
        ] {
            assert_eq!(ago(now - minutes_ago * MIN, now), said, "{minutes_ago} min");
        }
        // Seconds do not count: 59 of them are still just now.
        assert_eq!(ago(now - 59_999, now), "just now");
    }

    #[test]
    fn text_is_only_ever_characters() {
        let mut h = Html::default();
        h.raw("<p title=\"")
            .text("\"><img src=x onerror=alert(1)>")
            .raw("\">")
            .text("<script>&amp;'</script>")
            .raw("</p>");
        assert_eq!(
            h.finish(),
            "<p title=\"&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\">\
             &lt;script&gt;&amp;amp;&#39;&lt;/script&gt;</p>"
        );
    }

    #[test]
    fn fill_escapes_every_value() {
        let mut h = Html::default();
        h.fill("<a href=\"{}\">{}</a>{}", &["\"x", "<b>", "&"]);
        assert_eq!(h.finish(), "<a href=\"&quot;x\">&lt;b&gt;</a>&amp;");
    }

    #[test]
    fn a_page_has_no_script_and_no_absolute_url() {
        let page = page("p<", |h| {
            h.raw("<p>").text("x").raw("</p>");
        });
        assert!(page.starts_with("<!doctype html>"));
        assert!(page.contains("<title>p&lt; · handoff-mcp</title>"));
        for absent in ["<script", "http:", "https:", "//", "@import", "url("] {
            assert!(!page.contains(absent), "{absent}");
        }
    }
}
