//! The pages as HTML, built with `Html`, whose only way in for a string that is not a literal is
//! `text`, which escapes it: markup comes from `&'static str` literals alone, so no stored string
//! (North Star, focus, task, project or task id) can reach a page as markup. No inline script,
//! no external resource, no absolute URL (links are relative, so the token in the path is
//! never written into a page). No storage and no HTTP here.

use super::svg;
use crate::model::{EventKind, History, Kind, State};
use crate::render;
use crate::store::Summary;

/// A page under construction.
#[derive(Default)]
pub struct Html(String);

impl Html {
    /// Markup: only literals can be markup.
    pub fn raw(&mut self, markup: &'static str) -> &mut Self {
        self.0.push_str(markup);
        self
    }

    /// Text or an attribute value, escaped so that it is only ever characters.
    pub fn text(&mut self, text: &str) -> &mut Self {
        for c in text.chars() {
            match c {
                '&' => self.0.push_str("&amp;"),
                '<' => self.0.push_str("&lt;"),
                '>' => self.0.push_str("&gt;"),
                '"' => self.0.push_str("&quot;"),
                '\'' => self.0.push_str("&#39;"),
                c => self.0.push(c),
            }
        }
        self
    }

    /// A number (counts, coordinates): digits cannot be markup.
    pub fn num(&mut self, n: impl Into<i64>) -> &mut Self {
        self.0.push_str(&n.into().to_string());
        self
    }

    pub fn finish(self) -> String {
        self.0
    }
}

const STYLE: &str = "<style>\
:root{color-scheme:light dark;--b:#8886;--m:#8889}\
body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:0 auto;padding:.75rem 1rem 3rem;overflow-wrap:anywhere}\
h1{font-size:1.4rem;margin:.3rem 0}h2{font-size:1.1rem;margin:1.6rem 0 .4rem}\
a{color:inherit}nav{font-size:.9rem}\
pre{white-space:pre-wrap;background:#8881;border:1px solid var(--b);border-radius:.4rem;padding:.6rem;font-size:.85rem;margin:.4rem 0}\
ul{list-style:none;padding:0;margin:0}\
li,form{border:1px solid var(--b);border-radius:.5rem;padding:.6rem .8rem;margin:.6rem 0}\
form li{display:flow-root;border:0;border-top:1px solid var(--b);border-radius:0;margin:0;padding:.5rem 0}\
form li:first-child{border:0}\
label{display:block;font-weight:600;margin:.5rem 0 .1rem}\
input,textarea,select{box-sizing:border-box;width:100%;font:inherit;padding:.35rem}\
button{font:inherit;padding:.3rem .9rem;margin-top:.6rem}\
li button{float:right;margin:0 0 0 .6rem}\
.m{opacity:.75;font-size:.9rem}.k{font-size:.75rem;border:1px solid var(--b);border-radius:1rem;padding:0 .45rem;margin-right:.35rem}\
.err{border:2px solid #d33;border-radius:.4rem;padding:.6rem;white-space:pre-wrap}\
svg{display:block;width:100%;height:auto}\
</style>";

/// A whole page: the document shell around `body`, titled `title` (escaped).
pub fn page(title: &str, body: impl FnOnce(&mut Html)) -> String {
    let mut h = Html::default();
    h.raw(
        "<!doctype html><html lang=en><head><meta charset=utf-8>\
           <meta name=viewport content=\"width=device-width,initial-scale=1\"><title>",
    )
    .text(title)
    .raw(" · handoff-mcp</title>")
    .raw(STYLE)
    .raw("</head><body>");
    body(&mut h);
    h.raw("</body></html>");
    h.finish()
}

/// A refused form, shown above the page with the tool's own sentence; its fields refill the
/// form that was sent, so nothing typed is lost.
pub struct Refused {
    pub tool: &'static str,
    pub sentence: String,
    pub fields: Vec<(String, String)>,
}

impl Refused {
    /// What the `tool` form's `name` field shows: the refused value when that form was the one
    /// sent, else `current`.
    fn value<'a>(
        refused: Option<&'a Refused>,
        tool: &str,
        name: &str,
        current: &'a str,
    ) -> &'a str {
        match refused {
            Some(r) if r.tool == tool => r
                .fields
                .iter()
                .find(|(n, _)| n == name)
                .map_or("", |(_, v)| v.as_str()),
            _ => current,
        }
    }
}

fn refused_banner(h: &mut Html, refused: Option<&Refused>) {
    if let Some(r) = refused {
        h.raw("<p class=err role=alert id=refused>")
            .text(&r.sentence)
            .raw("</p>");
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
}

/// How long ago, roughly: minutes, then hours, then days. A clock that went backwards is "just
/// now".
fn ago(h: &mut Html, at_ms: i64, now_ms: i64) {
    let minutes = (now_ms - at_ms).max(0) / 60_000;
    match minutes {
        0 => h.raw("just now"),
        1..=59 => h.num(minutes).raw(" min ago"),
        60..=2879 => h.num(minutes / 60).raw(" h ago"),
        _ => h.num(render::age_days(at_ms, now_ms)).raw(" d ago"),
    };
}

pub fn index(v: &Index<'_>) -> String {
    page("Projects", |h| {
        h.raw("<nav>handoff-mcp</nav><h1>Projects</h1>");
        if v.projects.is_empty() {
            h.raw("<p class=m>No projects yet.</p>");
        }
        h.raw("<ul>");
        for p in v.projects {
            h.raw("<li><a href=\"")
                .raw(v.up)
                .raw("projects/")
                .text(&p.id)
                .raw("\"><b>")
                .text(&p.id)
                .raw("</b></a><div>🎯 ")
                .text(&p.north_star)
                .raw("</div><div>▶ ");
            match &p.focus {
                Some(focus) => h.text(focus),
                None => h.raw("<span class=m>no focus yet</span>"),
            };
            h.raw("</div><div class=m>");
            match (&p.focus, p.focus_set_ms) {
                (Some(_), Some(at)) => {
                    h.raw("focus set ");
                    ago(h, at, v.now_ms);
                    h.raw(" · ")
                }
                (Some(_), None) => h.raw("focus set before times were kept · "),
                (None, _) => h,
            };
            h.num(p.cleanup as i64)
                .raw(" cleanup · ")
                .num(p.record as i64)
                .raw(" record</div></li>");
        }
        h.raw("</ul>");
        if let Some(next) = v.next {
            h.raw("<p><a href=\"")
                .raw(v.up)
                .raw("?after=")
                .text(next)
                .raw("\">More projects →</a></p>");
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

/// The kinds the add_task form offers, deferred ones first, with what each means here.
const KINDS: [(Kind, &str); 3] = [
    (Kind::Cleanup, "cleanup: deferred, listed under 後処理"),
    (Kind::Record, "record: deferred, listed under 後処理"),
    (Kind::Main, "main: stored, not listed"),
];

pub fn project(v: &Project<'_>) -> String {
    let s = v.state;
    page(&s.project_id, |h| {
        h.raw("<nav><a href=\"")
            .raw(v.up)
            .raw("\">← All projects</a></nav><h1>")
            .text(&s.project_id)
            .raw("</h1>");
        refused_banner(h, v.refused);
        h.raw("<h2>What the model sees</h2>");
        for text in v.texts {
            h.raw("<pre>").text(text).raw("</pre>");
        }
        h.raw("<h2>Deferred tasks (後処理)</h2>");
        if s.deferred.is_empty() {
            h.raw("<p class=m>No open deferred tasks.</p>");
        } else {
            if v.write {
                h.raw("<form method=post action=\"")
                    .raw(v.up)
                    .raw("projects/")
                    .text(&s.project_id)
                    .raw("/complete_task\" data-tool=complete_task>");
            }
            h.raw("<ul>");
            for task in &s.deferred {
                h.raw("<li>");
                if v.write {
                    h.raw("<button name=task_id value=\"")
                        .text(&task.id)
                        .raw("\">Complete</button>");
                }
                h.raw("<span class=k>")
                    .raw(task.kind.as_str())
                    .raw("</span>")
                    .text(&task.body)
                    .raw("</li>");
            }
            h.raw("</ul>");
            if v.write {
                h.raw(
                    "<label for=ev>Evidence (optional): what shows it is done</label>\
                       <input id=ev name=evidence value=\"",
                )
                .text(Refused::value(v.refused, "complete_task", "evidence", ""))
                .raw("\"></form>");
            }
        }
        history(h, v.history, v.now_ms);
        if !v.write {
            return;
        }
        let action = |h: &mut Html, tool: &'static str| {
            h.raw("<form method=post action=\"")
                .raw(v.up)
                .raw("projects/")
                .text(&s.project_id)
                .raw("/")
                .raw(tool)
                .raw("\" data-tool=")
                .raw(tool)
                .raw(">");
        };
        let value = |tool, name, current| Refused::value(v.refused, tool, name, current);
        let focus = s.focus.as_ref();
        h.raw("<h2>Change</h2>");
        action(h, "set_north_star");
        h.raw("<label for=ns>🎯 North Star</label><textarea id=ns name=text rows=3 required>")
            .text(value("set_north_star", "text", &s.north_star))
            .raw("</textarea><button>Set North Star</button></form>");
        action(h, "set_focus");
        h.raw(
            "<label for=fs>▶ Focus (本丸): the one thing to do now</label>\
               <input id=fs name=statement required value=\"",
        )
        .text(value(
            "set_focus",
            "statement",
            focus.map_or("", |f| &f.statement),
        ))
        .raw("\"><label for=fw>Why (optional)</label><input id=fw name=why value=\"")
        .text(value(
            "set_focus",
            "why",
            focus.and_then(|f| f.why.as_deref()).unwrap_or(""),
        ))
        .raw("\"><label for=fd>Done when (optional)</label><input id=fd name=done_when value=\"")
        .text(value(
            "set_focus",
            "done_when",
            focus.and_then(|f| f.done_when.as_deref()).unwrap_or(""),
        ))
        .raw("\"><button>Set focus</button></form>");
        action(h, "add_task");
        let kind = value("add_task", "kind", "");
        h.raw("<label for=tb>New task</label><textarea id=tb name=body rows=2 required>")
            .text(value("add_task", "body", ""))
            .raw("</textarea><label for=tk>Kind</label><select id=tk name=kind>");
        for (k, label) in KINDS {
            h.raw("<option value=").raw(k.as_str());
            if k.as_str() == kind {
                h.raw(" selected");
            }
            h.raw(">").raw(label).raw("</option>");
        }
        h.raw("</select><button>Add task</button></form>");
    })
}

/// The history: the focus timeline, then every event newest first, with its time (UTC), what
/// changed, the note, and the client that made the change.
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
    h.raw("<ul>");
    for event in &history.events {
        h.raw("<li><span class=m>");
        match event.at_ms {
            Some(at) => h.text(&render::utc(at)),
            None => h.text(render::NO_TIME),
        };
        h.raw("</span> <span class=k>");
        let note = match event.what {
            EventKind::NorthStar => {
                h.raw("🎯 north star");
                "why"
            }
            EventKind::Focus => {
                h.raw("▶ focus");
                "why"
            }
            EventKind::Completed(kind) => {
                h.raw("✓ ").raw(kind.as_str());
                "evidence"
            }
        };
        h.raw("</span>").text(&event.value).raw("<div class=m>");
        if let Some(text) = &event.note {
            h.raw(note).raw(": ").text(text).raw(" · ");
        }
        if let Some(done_when) = &event.done_when {
            h.raw("done when: ").text(done_when).raw(" · ");
        }
        h.raw("by ").text(&event.client).raw("</div></li>");
    }
    if history.events.is_empty() {
        h.raw("<li class=m>No events yet.</li>");
    }
    h.raw("</ul>");
    if history.older > 0 {
        h.raw("<p class=m>… and ")
            .num(history.older as i64)
            .raw(" older events.</p>");
    }
}

/// A page that only says why the request was refused.
pub fn refusal(message: &str) -> String {
    page("Refused", |h| {
        h.raw("<h1>Refused</h1><p class=err role=alert>")
            .text(message)
            .raw("</p>");
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
