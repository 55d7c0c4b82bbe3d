//! The pages of the records: the search box (on the list, on each project page and on the
//! search page), and the search page, which runs the search tool through `tools::call` with
//! the form's fields as its arguments, so it shows exactly the hits the model gets. No SQL and
//! no escaping by hand here: markup goes through `Html`.

use super::html::{self, Html};
use super::{form, refusal};
use crate::context::Ctx;
use crate::error::Error;
use crate::http::Response;
use crate::node::Node;
use crate::tools::{self, search::KINDS};

/// The pages directly under `/<token>/` besides the list.
pub fn is_top_page(tail: &str) -> bool {
    tail == "search"
}

/// The search form's fields from a query string (`?query=…&kind=…`), decoded as strictly as a
/// posted form; none for no query string.
pub fn search_fields(query: Option<&str>) -> Result<Vec<(String, String)>, Error> {
    form::decode(query.unwrap_or_default().as_bytes())
        .map_err(|why| Error::InvalidRequest(format!("the search cannot be read: {why}")))
}

/// The search box: a GET form whose fields are the search tool's arguments (the project comes
/// from the URL). `prefix` is the relative way from the page to the search page's folder.
pub fn search_box(h: &mut Html, prefix: &str, query: &str, kind: &str) {
    h.fill(
        "<form method=get action=\"{}search\" role=search data-tool=search>\
         <label for=sq>Search what was decided and done</label>\
         <input id=sq name=query type=search required value=\"{}\">\
         <label for=sk>Kind of record</label><select id=sk name=kind><option value=\"\">any</option>",
        &[prefix, query],
    );
    for k in KINDS {
        let selected = if *k == kind { " selected" } else { "" };
        h.fill("<option value={}{}>{}</option>", &[k, selected, k]);
    }
    h.raw("</select><button>Search</button></form>");
}

/// A project page's search box: its search page is `<up>projects/<id>/search`.
pub fn project_box(h: &mut Html, up: &str, id: &str) {
    search_box(h, &format!("{up}projects/{id}/"), "", "");
}

/// The search page: the box, then the search tool's text for the fields given, or its refusal.
pub async fn search(ctx: &Ctx<'_>, project: Option<&str>, fields: &[(String, String)]) -> Response {
    if let Some(id) = project.filter(|id| !ctx.caller.scope.may_read(id)) {
        return super::html(
            404,
            html::refusal(&format!(
                "No project \"{id}\" yet; set_north_star creates it."
            )),
        );
    }
    let outcome = match run_search(ctx, project, fields).await {
        Ok(outcome) => outcome,
        Err(error) => return refusal(&error),
    };
    let field = |name| {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    };
    let (up, title) = match project {
        Some(id) => (format!("../{id}"), format!("Search {id}")),
        None => ("./".to_owned(), "Search".to_owned()),
    };
    let status = match &outcome {
        Some(outcome) if outcome.is_error => 422,
        _ => 200,
    };
    let body = html::page(&title, |h| {
        h.fill(
            "<nav><a href=\"{}\">← Back</a></nav><h1>{}</h1>",
            &[&up, &title],
        );
        search_box(h, "", field("query"), field("kind"));
        match &outcome {
            Some(outcome) if outcome.is_error => {
                h.fill(
                    "<p class=err role=alert id=refused>{}</p>",
                    &[&outcome.texts.join("\n")],
                );
            }
            Some(outcome) => {
                h.fill("<pre id=records>\n{}</pre>", &[&outcome.texts.join("\n")]);
            }
            None => {}
        }
    });
    super::html(status, body)
}

/// Runs the search tool with the fields as its arguments, as tools/call does; `None` when
/// no search was asked for (the page's first visit). An empty kind is any kind.
async fn run_search(
    ctx: &Ctx<'_>,
    project: Option<&str>,
    fields: &[(String, String)],
) -> Result<Option<tools::Outcome>, Error> {
    if fields.is_empty() {
        return Ok(None);
    }
    let mut arguments = Vec::with_capacity(fields.len() + 1);
    if let Some(id) = project {
        if fields.iter().any(|(name, _)| name == "project_id") {
            return Err(Error::InvalidRequest(
                "the page's URL names the project; the search must not".into(),
            ));
        }
        arguments.push(("project_id".into(), Node::String(id.into())));
    }
    for (name, value) in fields.iter().filter(|(n, v)| n != "kind" || !v.is_empty()) {
        arguments.push((name.as_str().into(), Node::String(value.as_str().into())));
    }
    let def = tools::find("search").expect("the search tool exists");
    tools::call(def, Some(&Node::Object(arguments)), ctx)
        .await
        .map(Some)
}
