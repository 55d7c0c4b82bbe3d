//! Markup for every page the Worker serves (the human view, OAuth's consent page): `Html`,
//! whose markup comes from `&'static str` literals alone and whose only way in for any other
//! string is `text`, which escapes it; the document shell with the one style sheet (`page`);
//! and the security headers every page carries (`HEADERS`). No page here, no storage, no HTTP.

use crate::invisible;

/// The headers of every web response. The CSP allows no script at all, styles only inline,
/// images only from here or `data:`, forms only to here; `frame-ancestors 'none'` (and the
/// older `X-Frame-Options`) keeps the pages out of other sites' frames. The token is in the URL, so the referrer never leaves this
/// origin, and nothing is cached.
pub const HEADERS: [(&str, &str); 6] = [
    ("content-type", "text/html; charset=utf-8"),
    (
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; \
         form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    ("referrer-policy", "same-origin"),
    ("cache-control", "no-store"),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
];

/// A page under construction.
#[derive(Default)]
pub struct Html(String);

impl Html {
    /// Markup: only literals can be markup.
    pub fn raw(&mut self, markup: &'static str) -> &mut Self {
        self.0.push_str(markup);
        self
    }

    /// Text to read, escaped so that it is only ever characters, and with every character a
    /// reader cannot see shown by its code point (`invisible`), as a model is shown it.
    pub fn text(&mut self, text: &str) -> &mut Self {
        invisible::each(text, |c, code| match code {
            true => invisible::push_code(&mut self.0, c),
            false => self.escape(c),
        });
        self
    }

    /// A form field's value (an input's `value`, a textarea's text), escaped so that it is only
    /// ever characters and otherwise exactly as stored: posted back unchanged, it writes back
    /// what was typed. The page shows the same text beside it through `text`.
    pub fn value(&mut self, text: &str) -> &mut Self {
        text.chars().for_each(|c| self.escape(c));
        self
    }

    fn escape(&mut self, c: char) {
        match c {
            '&' => self.0.push_str("&amp;"),
            '<' => self.0.push_str("&lt;"),
            '>' => self.0.push_str("&gt;"),
            '"' => self.0.push_str("&quot;"),
            '\'' => self.0.push_str("&#39;"),
            c => self.0.push(c),
        }
    }

    /// A literal template with each `{}` replaced by the next value, escaped as text (`text`):
    /// the markup is the template's, the values are only ever text.
    pub fn fill(&mut self, template: &'static str, values: &[&str]) -> &mut Self {
        self.fill_with(template, values, Html::text)
    }

    /// `fill` for a template of form fields, each value escaped as a field's (`value`).
    pub fn fields(&mut self, template: &'static str, values: &[&str]) -> &mut Self {
        self.fill_with(template, values, Html::value)
    }

    fn fill_with(
        &mut self,
        template: &'static str,
        values: &[&str],
        escape: for<'a> fn(&'a mut Html, &str) -> &'a mut Html,
    ) -> &mut Self {
        let mut parts = template.split("{}");
        self.0.push_str(parts.next().unwrap_or_default());
        for (part, value) in parts.zip(values) {
            escape(self, value).0.push_str(part);
        }
        self
    }

    pub fn finish(self) -> String {
        self.0
    }
}

/// The one style sheet: system fonts with Japanese ones behind them, light and dark through
/// `prefers-color-scheme` (every pair of colours meets WCAG AA), touch targets of 44 px, long
/// unbroken text wrapped (a token block anywhere, so a command's words stay on its lines), a
/// destructive button in red, and nothing wider than a 320 px screen.
const STYLE: &str = "<style>\
:root{color-scheme:light dark;--f:#1c1e22;--m:#595f69;--g:#fff;--c:#f3f5f8;--b:#8f96a1;--a:#0b57d0;--r:#b3261e}\
@media(prefers-color-scheme:dark){:root{--f:#e7e9ec;--m:#a5acb6;--g:#15171b;--c:#1e2228;--b:#5d6571;--a:#8ab4f8;--r:#f2b8b5}}\
body{font:16px/1.65 system-ui,\"Hiragino Sans\",\"Noto Sans CJK JP\",\"Yu Gothic UI\",Meiryo,sans-serif;\
color:var(--f);background:var(--g);max-width:44rem;margin:0 auto;padding:.5rem 1.25rem 4rem;overflow-wrap:anywhere}\
a{color:var(--a)}:focus-visible{outline:3px solid var(--a)}\
h1{font-size:clamp(1.6rem,1rem + 2.6vw,2.3rem);line-height:1.3;margin:.25rem 0}\
h2{font-size:1.25rem;margin:2.5rem 0 .5rem}h3,.c h2{font-size:1rem;color:var(--m);margin:1.5rem 0 0}\
nav{display:flex;gap:1.25rem}nav a{padding:.6rem 0}summary{padding:.6rem 0;font-weight:600}\
.m{color:var(--m);font-size:.9rem}p{margin:.5rem 0}\
.c{background:var(--c);border-left:4px solid var(--a);border-radius:12px;padding:.25rem 1.25rem .75rem;margin:1.5rem 0}.c h2{margin-top:.75rem}\
li h2{font-size:1rem;margin:0}.fs{font-size:1.35rem;font-weight:600;line-height:1.45}\
ul,ol{list-style:none;padding:0}li{border-bottom:2px solid var(--c);padding:.75rem 0}\
.k{font-size:.8rem;border:1px solid var(--b);border-radius:1rem;padding:0 .5rem;margin-right:.5rem}\
pre{font-size:.85rem;white-space:pre-wrap;background:var(--c);padding:.75rem}\
label,legend{display:block;font-weight:600;margin:.75rem 0 .25rem}li label{font-weight:400}\
input,textarea,select,button{box-sizing:border-box;width:100%;min-height:44px;font:inherit;color:inherit;background:var(--g);border:1px solid var(--b);border-radius:8px;padding:.5rem .75rem}\
fieldset{border:0;padding:0;margin:0}fieldset label{display:flex;gap:.5rem;align-items:center;font-weight:400}input[type=radio]{width:auto}\
button{width:auto;font-weight:600;margin:.75rem .5rem 0 0;background:var(--a);color:var(--g)}li button{background:0;color:var(--a);border-color:var(--a)}.d{background:var(--r);border-color:var(--r)}\
.row{display:flex;gap:.5rem}.row input{min-width:0}.row button{margin:0;flex:none}\
.err{border:2px solid #d33;padding:.75rem;white-space:pre-wrap}#token{user-select:all;font-size:1rem}.tok{word-break:break-all}\
</style>";

/// A whole page: the document shell around `body`, titled `title` (escaped). The body is the
/// page's `<main>` landmark; a page's `<nav>` opens it.
pub fn page(title: &str, body: impl FnOnce(&mut Html)) -> String {
    let mut h = Html::default();
    h.fill(
        "<!doctype html><html lang=en><head><meta charset=utf-8>\
         <meta name=viewport content=\"width=device-width,initial-scale=1\">\
         <title>{} · handoff-mcp</title>",
        &[title],
    )
    .raw(STYLE)
    .raw("</head><body><main>");
    body(&mut h);
    h.raw("</main></body></html>");
    h.finish()
}
