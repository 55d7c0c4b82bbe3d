//! The pages as HTML, built with `Html`, whose only way in for a string that is not a literal is
//! `text`, which escapes it: markup comes from `&'static str` literals alone, so no stored string
//! (North Star, focus, task, project or task id) can reach a page as markup. A page leads with
//! what it is for (the North Star, the focus) and puts the machinery (what the model reads, the
//! forms, search and export) below it or behind a disclosure. No inline script, no external
//! resource, no absolute URL of our own (links are relative, so the token in the path is never
//! written into a page); the one absolute URL a page may hold is a completion's evidence, as a
//! link no referrer follows. No storage and no HTTP here, and no import of another page file.

use crate::error::Error;
use crate::form;
pub use crate::html::{page, Html, HEADERS};
use crate::http::Response;
use crate::model::{Deferred, Event, EventKind, Focus, History, Kind, Stamp, State};
use crate::render::{self, age_days, clip};
use crate::store::tokens::TokenRow;
use crate::store::Summary;
use crate::tools::search::KINDS as RECORD_KINDS;

/// An HTML response with the web headers.
pub fn html(status: u16, body: String) -> Response {
    Response::with_headers(status, &HEADERS, body)
}

/// A refusal as a page: the error's status, headers and public message; its detail to the log.
pub fn refusal(error: &Error) -> Response {
    html(error.page_status(), refused_page(&error.message())).refusing(error)
}

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
pub fn ago(at_ms: i64, now_ms: i64) -> String {
    let minutes = (now_ms - at_ms).max(0) / 60_000;
    let (n, unit) = match minutes {
        0 => return "just now".into(),
        1..=59 => (minutes, "min"),
        60..=2879 => (minutes / 60, "h"),
        _ => (minutes / 1440, "d"),
    };
    format!("{n} {unit} ago")
}

/// A moment as a person reads it, exact and relative: `<time>` with the machine-readable UTC
/// instant, showing `2026-12-01 08:00 UTC · 3 h ago`.
fn moment(h: &mut Html, at_ms: i64, now_ms: i64) {
    let utc = render::utc(at_ms);
    h.fill(
        "<time datetime=\"{}T{}Z\">{} UTC</time> · {}",
        &[&utc[..10], &utc[11..], &utc, &ago(at_ms, now_ms)],
    );
}

/// `set <moment> by <client>`, or the unknown-time form.
fn stamp(h: &mut Html, stamp: &Stamp, now_ms: i64) {
    match stamp.at_ms {
        Some(at) => {
            h.raw("set ");
            moment(h, at, now_ms);
        }
        None => {
            h.raw("set before the server kept times");
        }
    }
    h.fill(" · by {}", &[&stamp.by]);
}

pub fn index(v: &Index<'_>) -> String {
    page("Projects", |h| {
        h.raw("<nav aria-label=Pages>");
        if v.write {
            h.fill("<a href=\"{}import\">Import a project</a>", &[v.up]);
        }
        h.fill(
            "<a href=\"{}clients\">Connected clients</a></nav><h1>Projects</h1>",
            &[v.up],
        );
        search_box(h, v.up, "", "");
        if v.projects.is_empty() {
            h.raw("<p class=m>No projects yet.</p>");
        }
        h.raw("<ul>");
        for p in v.projects {
            h.fill(
                "<li><h2><a href=\"{}projects/{}\">{}</a></h2><p class=fs>🎯 {}</p><p>▶ ",
                &[v.up, &p.id, &p.id, &clip(&p.north_star, 160)],
            );
            match &p.focus {
                Some(focus) => h.text(&clip(focus, 160)),
                None => h.raw("<span class=m>no focus yet</span>"),
            };
            h.raw("</p><p class=m>");
            if p.focus.is_some() {
                match p.focus_set_ms {
                    Some(at) => {
                        h.fill("focus set {}", &[&ago(at, v.now_ms)]);
                    }
                    None => {
                        h.raw("focus set before times were kept");
                    }
                }
                h.raw(" · ");
            }
            let open = (p.cleanup + p.record).to_string();
            h.fill("{} deferred open · last change ", &[&open]);
            match p.last_ms {
                Some(at) => {
                    h.text(&ago(at, v.now_ms));
                }
                None => {
                    h.raw("before times were kept");
                }
            }
            h.raw("</p></li>");
        }
        h.raw("</ul>");
        if let Some(next) = v.next {
            h.fill(
                "<nav aria-label=More><a href=\"{}?after={}\">More projects →</a></nav>",
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
    /// After how many days the focus asks to be confirmed (FOCUS_STALE_DAYS).
    pub stale_days: u32,
    pub write: bool,
    pub refused: Option<&'a Refused>,
    /// The project's live tokens, for its owner's page (none for any other credential).
    pub tokens: Option<&'a [TokenRow]>,
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
            "<nav aria-label=Pages><a href=\"{}\">← All projects</a></nav>\
             <p class=m>{} · North Star</p><h1>{}</h1><p class=m>",
            &[v.up, id, &s.north_star],
        );
        stamp(h, &s.north_star_set, v.now_ms);
        h.raw("</p>");
        if let Some(r) = v.refused {
            h.fill("<p class=err role=alert id=refused>{}</p>", &[&r.sentence]);
        }
        focus_card(h, v);
        h.raw("<h2>Deferred tasks (<span lang=ja>後処理</span>)</h2>");
        if s.deferred.is_empty() && s.unlisted == 0 {
            h.raw("<p class=m>No open deferred tasks.</p>");
        }
        let mut n = 0;
        for kind in [Kind::Cleanup, Kind::Record] {
            if !s.deferred.iter().any(|t| t.kind == kind) {
                continue;
            }
            h.fill("<h3>{}</h3><ul>", &[kind.as_str()]);
            for task in s.deferred.iter().filter(|t| t.kind == kind) {
                n += 1;
                deferred_task(h, v, n, task);
            }
            h.raw("</ul>");
        }
        if s.unlisted > 0 {
            h.fill(
                "<p class=m>… and {} more, not listed (get_state lists the oldest).</p>",
                &[&s.unlisted.to_string()],
            );
        }
        history(h, v.history, v.now_ms);
        // What the model reads, byte for byte; the contract text is Japanese where it is fixed.
        // A line break right after <pre> or <textarea> is dropped by the HTML parser, so each
        // gets one of its own and a text's own leading break survives.
        h.raw("<h2>More</h2><details id=model><summary>What the model reads at the start of a chat</summary>");
        for (i, text) in v.texts.iter().enumerate() {
            let lang = if i == 0 { "ja" } else { "en" };
            h.fill("<pre lang={}>\n{}</pre>", &[lang, text]);
        }
        h.raw("</details>");
        if v.write {
            change_forms(h, v);
        }
        if let Some(tokens) = v.tokens {
            sharing(h, v, tokens);
        }
        let folder = format!("{}projects/{id}/", v.up);
        h.raw("<details id=records><summary>Search and export</summary>");
        search_box(h, &folder, "", "");
        h.fill(
            "<p><a href=\"{}export.json\" download>Export (JSON)</a> · \
             <a href=\"{}export.md\">Export (Markdown)</a></p></details>",
            &[&folder, &folder],
        );
    })
}

/// The focus, the one card under the North Star: its statement set large, why and done-when,
/// when and by whom; past `stale_days`, the question and a one-press "still the focus" (set_focus
/// with the same statement, why and done-when, each carried by the form itself).
fn focus_card(h: &mut Html, v: &Project<'_>) {
    h.raw("<section class=c aria-labelledby=focus><h2 id=focus>Focus now (<span lang=ja>本丸</span>)</h2>");
    let Some(focus) = &v.state.focus else {
        h.raw("<p class=m>No focus yet: set_focus names the one thing to do now.</p></section>");
        return;
    };
    h.fill("<p class=fs>{}</p>", &[&focus.statement]);
    let why = focus.why.as_deref().filter(|t| !t.is_empty());
    let done = focus.done_when.as_deref().filter(|t| !t.is_empty());
    for (term, text) in [("Why", why), ("Done when", done)] {
        if let Some(text) = text {
            h.fill("<p><span class=m>{}: </span>{}</p>", &[term, text]);
        }
    }
    h.raw("<p class=m>");
    stamp(h, &focus.set, v.now_ms);
    h.raw("</p>");
    let age = focus.set.at_ms.map(|at| age_days(at, v.now_ms));
    if age.is_none_or(|days| days > i64::from(v.stale_days)) {
        let how_old = age.map_or("older than the server's timestamps".into(), |d| {
            format!("{d} days old")
        });
        h.fill(
            "<p><b>This focus is {} (the limit is {} days): is it still the one thing to do \
             now?</b> Confirm it, or set another below.</p>",
            &[&how_old, &v.stale_days.to_string()],
        );
        if v.write {
            still_the_focus(h, v, focus);
        }
    }
    h.raw("</section>");
}

/// The one-press confirmation: set_focus with the focus as it stands, every field carried.
fn still_the_focus(h: &mut Html, v: &Project<'_>, focus: &Focus) {
    h.fields(
        "<form method=post action=\"{}projects/{}/set_focus\" data-tool=set_focus>\
         <input type=hidden name=statement value=\"{}\">",
        &[v.up, &v.state.project_id, &focus.statement],
    );
    for (name, text) in [("why", &focus.why), ("done_when", &focus.done_when)] {
        if let Some(text) = text {
            h.fields("<input type=hidden name={} value=\"{}\">", &[name, text]);
        }
    }
    h.raw("<button>Still the focus</button></form>");
}

/// The change forms, behind their disclosure (open when one of them was refused). Every text a
/// tool keeps may hold line breaks, so each is a textarea (an input would drop them), opened
/// with a line break of its own as a <pre> is.
fn change_forms(h: &mut Html, v: &Project<'_>) {
    let s = v.state;
    let id = s.project_id.as_str();
    let value = |tool, name, current| Refused::value(v.refused, tool, name, current);
    let focus = s.focus.as_ref();
    let focus_text = |f: fn(&Focus) -> Option<&str>| focus.and_then(f).unwrap_or("");
    let open = match v.refused {
        Some(r) if ["set_north_star", "set_focus", "add_task"].contains(&r.tool) => " open",
        _ => "",
    };
    h.fields(
        "<details id=change{}><summary>Change the North Star or the focus, add a task</summary>\
         <form method=post action=\"{}projects/{}/set_north_star\" data-tool=set_north_star>\
         <label for=ns>🎯 North Star</label><textarea id=ns name=text rows=3 required>\n{}</textarea>\
         <button>Set North Star</button></form>\
         <form method=post action=\"{}projects/{}/set_focus\" data-tool=set_focus>\
         <label for=fs>▶ Focus (<span lang=ja>本丸</span>): the one thing to do now</label>\
         <textarea id=fs name=statement rows=2 required>\n{}</textarea>\
         <label for=fw>Why (optional)</label><textarea id=fw name=why rows=2>\n{}</textarea>\
         <label for=fd>Done when (optional)</label>\
         <textarea id=fd name=done_when rows=2>\n{}</textarea>\
         <button>Set focus</button></form>\
         <form method=post action=\"{}projects/{}/add_task\" data-tool=add_task>\
         <label for=tb>New task</label><textarea id=tb name=body rows=2 required>\n{}</textarea>\
         <label for=tk>Kind</label><select id=tk name=kind>",
        &[
            open,
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
    h.raw("</select><button>Add task</button></form></details>");
}

/// The owner's disclosure: the project's tokens, each with its Revoke button; the form that
/// makes one (a label, read and write or read only); and deleting the project, its id typed to
/// confirm, after a link to its export. Open when one of its forms was refused.
fn sharing(h: &mut Html, v: &Project<'_>, tokens: &[TokenRow]) {
    let id = v.state.project_id.as_str();
    let refused = v
        .refused
        .filter(|r| r.tool == "share" || r.tool == "delete");
    h.fill(
        "<details id=share{}><summary>Share this project, or delete it</summary>\
         <p class=m>A project token reaches this project alone, read and write or read only: \
         give one to a teammate or to another machine, and revoke it here to take it back at \
         once. Each change it makes is named by its label.</p><h3 id=tokens>Tokens</h3>",
        &[if refused.is_some() { " open" } else { "" }],
    );
    if tokens.is_empty() {
        h.raw("<p class=m>No tokens yet.</p>");
    }
    h.raw("<ul>");
    for token in tokens {
        let reach = match crate::sharing::writes(&token.scope) {
            true => "read and write",
            false => "read only",
        };
        let used = token.last_used_at.map_or_else(
            || "never used".to_owned(),
            |at| format!("last used {}", ago(at, v.now_ms)),
        );
        h.fill(
            "<li><b>{}</b> <span class=k>{}</span><div class=m>made {} · {}</div>\
             <form method=post action=\"{}projects/{}/tokens/{}\" data-tool=revoke-token>\
             <button>Revoke</button></form></li>",
            &[
                &token.label,
                reach,
                &ago(token.created_at, v.now_ms),
                &used,
                v.up,
                id,
                &token.id,
            ],
        );
    }
    let label = Refused::value(v.refused, "share", "label", "");
    h.fields(
        "</ul><form method=post action=\"{}projects/{}/tokens\" data-tool=share>\
         <label for=tl>Label: who or which machine it is for</label>\
         <input id=tl name=label required maxlength=40 value=\"{}\">\
         <fieldset><legend>It may</legend>\
         <label><input type=radio name=access value=write checked> Read and write</label>\
         <label><input type=radio name=access value=read> Read only</label></fieldset>\
         <button>Make a token</button></form>",
        &[v.up, id, label],
    );
    h.fill(
        "<h3>Delete this project</h3><p>Deleting removes its North Star, focus, tasks and \
         history, ends its tokens and revokes the clients connected to it alone. It cannot be \
         undone: <a href=\"{}projects/{}/export.json\" download>export it first</a>.</p>\
         <form method=post action=\"{}projects/{}/delete\" data-tool=delete>\
         <label for=dc>Type the project id, {}, to confirm</label>\
         <input id=dc name=confirm required autocomplete=off>\
         <button class=d>Delete project</button></form></details>",
        &[v.up, id, v.up, id, id],
    );
}

/// The `n`th deferred task's row: its body and, when the page writes, its own complete_task
/// form. The row's form carries its task id and its evidence, so Enter in its field, like its
/// button, completes that task and no other.
fn deferred_task(h: &mut Html, v: &Project<'_>, n: u32, task: &Deferred) {
    h.fill("<li>{}", &[&task.body]);
    if v.write {
        // The evidence field refills only in the row whose post was refused.
        let sent = v.refused.filter(|r| r.field("task_id") == Some(&task.id));
        let n = n.to_string();
        h.fields(
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

/// The history as a person reads it: one entry per change, newest first, grouped by UTC day,
/// each with its exact and relative time and who made it.
fn history(h: &mut Html, history: &History, now_ms: i64) {
    h.raw("<h2>History</h2>");
    if history.events.is_empty() {
        h.raw("<p class=m>Nothing recorded yet.</p>");
    }
    let mut day: Option<String> = None;
    for event in &history.events {
        let this = event
            .at_ms
            .map_or_else(String::new, |at| render::utc(at)[..10].to_owned());
        if day.as_deref() != Some(&this) {
            if day.is_some() {
                h.raw("</ol>");
            }
            match this.is_empty() {
                true => h.raw("<h3>Before the server kept times</h3><ol>"),
                false => h.fill("<h3><time datetime={}>{}</time></h3><ol>", &[&this, &this]),
            };
            day = Some(this);
        }
        entry(h, event, now_ms);
    }
    if day.is_some() {
        h.raw("</ol>");
    }
    if history.older > 0 {
        h.fill(
            "<p class=m>… and {} older entries (the export holds them all).</p>",
            &[&history.older.to_string()],
        );
    }
}

/// One entry of the history: what changed, its why and done-when or its evidence, then when
/// and by whom.
fn entry(h: &mut Html, event: &Event, now_ms: i64) {
    let (what, note) = match event.what {
        EventKind::NorthStar => ("North Star set", "Why"),
        EventKind::Focus => ("focus set", "Why"),
        EventKind::Completed(kind) => (kind.as_str(), "Evidence"),
    };
    let done = if note == "Why" { "" } else { " done" };
    h.fill(
        "<li><span class=k>{}{}</span>{}",
        &[what, done, &event.value],
    );
    for (term, text) in [(note, &event.note), ("Done when", &event.done_when)] {
        let Some(text) = text.as_deref().filter(|t| !t.is_empty()) else {
            continue;
        };
        h.fill("<br><span class=m>{}: </span>", &[term]);
        // Only evidence is ever a link, and only a plain web address.
        match term == "Evidence" && link(text) {
            true => h.fill(
                "<a href=\"{}\" rel=\"noopener noreferrer nofollow\">{}</a>",
                &[text, text],
            ),
            false => h.text(text),
        };
    }
    h.raw("<br><span class=m>");
    if let Some(at) = event.at_ms {
        moment(h, at, now_ms);
        h.raw(" · ");
    }
    h.fill("by {}</span></li>", &[&event.client]);
}

/// Whether evidence is one web address a page may link: `http` or `https`, a host of letters,
/// digits, dots and hyphens with an optional port (no user part, so what a person reads is where
/// it goes), the rest printable ASCII that needs no escaping in a URL.
fn link(text: &str) -> bool {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .unwrap_or_default();
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    !host.is_empty()
        && !host.starts_with(':')
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:".contains(&b))
        && text
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"\"<>\\^`{|}".contains(&b))
}

/// The search box: a GET form whose fields are the search tool's arguments (the project comes
/// from the URL). `prefix` is the relative way from the page to the search page's folder.
pub fn search_box(h: &mut Html, prefix: &str, query: &str, kind: &str) {
    h.fields(
        "<form method=get action=\"{}search\" role=search data-tool=search>\
         <label for=sq>Search what was decided and done</label>\
         <input id=sq name=query type=search required value=\"{}\">\
         <label for=sk>Kind of record</label><select id=sk name=kind><option value=\"\">any</option>",
        &[prefix, query],
    );
    for k in RECORD_KINDS {
        let selected = if *k == kind { " selected" } else { "" };
        h.fill("<option value={}{}>{}</option>", &[k, selected, k]);
    }
    h.raw("</select><button>Search</button></form>");
}

/// A page that only says why the request was refused.
pub fn refused_page(message: &str) -> String {
    page("Refused", |h| {
        h.fill("<h1>Refused</h1><p class=err role=alert>{}</p>", &[message])
            .raw("<p class=m>Not what you expected? <a href=/help>Troubleshooting</a></p>");
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
    fn only_a_plain_web_address_is_a_link() {
        for linked in [
            "https://github.com/o/r/pull/12",
            "http://127.0.0.1:8787/x?y=1&z=2#top",
            "https://ci.example",
        ] {
            assert!(link(linked), "{linked}");
        }
        for text in [
            "see https://github.com/o/r",
            "https://github.com@evil.example/",
            "https://evil.example\\@github.com",
            "javascript:alert(1)",
            "https://",
            "https://:80/",
            "https://exämple.com/",
            "https://host/a b",
            "https://host/\"onmouseover=x",
            "ftp://host/",
        ] {
            assert!(!link(text), "{text}");
        }
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
