//! Markup for every page the Worker serves (the human view, OAuth's consent page): `Html`,
//! whose markup comes from `&'static str` literals alone and whose only way in for any other
//! string is `text`, which escapes it; the document shell with the one style sheet (`page`);
//! and the security headers every page carries (`HEADERS`). No page here, no storage, no HTTP.

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

    /// A literal template with each `{}` replaced by the next value, escaped: the markup is the
    /// template's, the values are only ever text.
    pub fn fill(&mut self, template: &'static str, values: &[&str]) -> &mut Self {
        let mut parts = template.split("{}");
        self.0.push_str(parts.next().unwrap_or_default());
        for (part, value) in parts.zip(values) {
            self.text(value).0.push_str(part);
        }
        self
    }

    pub fn finish(self) -> String {
        self.0
    }
}

const STYLE: &str = "<style>\
:root{color-scheme:light dark;--b:#8886}\
body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:0 auto;padding:.75rem 1rem 3rem;overflow-wrap:anywhere}\
h1{font-size:1.4rem;margin:.3rem 0}h2{font-size:1.1rem;margin:1.6rem 0 .4rem}\
a{color:inherit}nav{font-size:.9rem}\
pre{white-space:pre-wrap;background:#8881;border:1px solid var(--b);border-radius:.4rem;padding:.6rem;font-size:.85rem;margin:.4rem 0}\
ul{list-style:none;padding:0;margin:0}\
li,form{border:1px solid var(--b);border-radius:.5rem;padding:.6rem .8rem;margin:.6rem 0}\
li form{border:0;padding:0;margin:0}\
label{display:block;font-weight:600;margin:.5rem 0 .1rem}\
li label{font-weight:400;font-size:.9rem}\
input,textarea,select{box-sizing:border-box;width:100%;font:inherit;padding:.35rem}\
input[type=radio]{width:auto;margin:0 .4rem 0 0}fieldset{border:1px solid var(--b);border-radius:.5rem;margin:.6rem 0}\
button{font:inherit;padding:.3rem .9rem;margin-top:.6rem}\
.row{display:flex;gap:.6rem}.row input{flex:1;min-width:0}.row button{margin:0}\
.m{opacity:.75;font-size:.9rem}.k{font-size:.75rem;border:1px solid var(--b);border-radius:1rem;padding:0 .45rem;margin-right:.35rem}\
.err{border:2px solid #d33;border-radius:.4rem;padding:.6rem;white-space:pre-wrap}\
svg{display:block;width:100%;height:auto}\
</style>";

/// A whole page: the document shell around `body`, titled `title` (escaped).
pub fn page(title: &str, body: impl FnOnce(&mut Html)) -> String {
    let mut h = Html::default();
    h.fill(
        "<!doctype html><html lang=en><head><meta charset=utf-8>\
         <meta name=viewport content=\"width=device-width,initial-scale=1\">\
         <title>{} · handoff-mcp</title>",
        &[title],
    )
    .raw(STYLE)
    .raw("</head><body>");
    body(&mut h);
    h.raw("</body></html>");
    h.finish()
}
