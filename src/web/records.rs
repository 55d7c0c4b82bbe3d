//! The pages of the records: the search box (on the list, on each project page and on the
//! search page) and the search page, which runs the search tool through `tools::call` with
//! the form's fields as its arguments, so it shows exactly the hits the model gets; a project's
//! export (JSON or Markdown, a download) and the import page and its post. The scope is asked
//! here as `web::access` asks it: a project the credential may not read is the page of no
//! project, and only a credential that may write the new project id imports. No SQL and no
//! escaping by hand here: markup goes through `Html`.

use super::html::{self, html, refusal, search_box};
use crate::context::Ctx;
use crate::error::Error;
use crate::export;
use crate::form;
use crate::http::{Response, MAX_BODY_BYTES};
use crate::json_read::Node;
use crate::render;
use crate::render::preview;
use crate::store::{self, Imported};
use crate::tools;

/// The search form's fields from a query string (`?query=…&kind=…`), decoded as strictly as a
/// posted form; none for no query string.
pub fn search_fields(query: Option<&str>) -> Result<Vec<(String, String)>, Error> {
    form::decode(query.unwrap_or_default().as_bytes())
        .map_err(|why| Error::InvalidRequest(format!("the search cannot be read: {why}")))
}

/// A project's export, as a download: the JSON document, or its Markdown. A project the
/// credential may not read is the page of no project, as everywhere.
pub async fn export(ctx: &Ctx<'_>, id: &str, markdown: bool) -> Response {
    let found = match ctx.caller.scope.readable(id) {
        Some(project) => store::load_export(ctx.db, project).await,
        None => Ok(None),
    };
    let now_ms = ctx.clock.now_ms();
    let (body, content_type, disposition) = match found {
        Err(e) => return refusal(&Error::from(e)),
        Ok(None) => return no_project(id),
        Ok(Some(whole)) if markdown => (
            render::markdown(&whole, now_ms),
            "text/markdown; charset=utf-8",
            format!("inline; filename=\"{id}.md\""),
        ),
        Ok(Some(whole)) => (
            export::to_json(&whole, now_ms),
            "application/json",
            format!("attachment; filename=\"{id}.handoff.json\""),
        ),
    };
    let mut response = html(200, body);
    for (name, value) in &mut response.headers {
        if *name == "content-type" {
            *value = content_type.into();
        }
    }
    response.headers.push(("content-disposition", disposition));
    response
}

/// The page of a project the credential does not reach or that does not exist.
fn no_project(id: &str) -> Response {
    html(
        404,
        html::refused_page(&format!(
            "No project \"{id}\" yet; set_north_star creates it."
        )),
    )
}

/// The import page (a form posting a document and the project id to import it as), or the
/// import it posted: 303 to the new project, or the page again with the refusal (422).
pub async fn import(ctx: &Ctx<'_>, post: bool, body: &[u8]) -> Response {
    if !post {
        return import_page(200, ctx, None, &[]);
    }
    if body.len() > MAX_BODY_BYTES {
        return refusal(&Error::TooLarge {
            limit: MAX_BODY_BYTES,
        });
    }
    let fields = match form::decode(body) {
        Ok(fields) => fields,
        Err(why) => {
            return refusal(&Error::InvalidRequest(format!(
                "the form cannot be read: {why}"
            )))
        }
    };
    match import_fields(ctx, &fields).await {
        Ok(Ok(id)) => {
            let mut response = html(303, String::new());
            response
                .headers
                .push(("location", format!("./projects/{id}")));
            response
        }
        Ok(Err(sentence)) => import_page(422, ctx, Some(&sentence), &fields),
        Err(error) => refusal(&error),
    }
}

/// Imports the posted document: the project id it goes to (a failure the user can act on is
/// the sentence), or a failure of the store.
async fn import_fields(
    ctx: &Ctx<'_>,
    fields: &[(String, String)],
) -> Result<Result<String, String>, Error> {
    let scope = &ctx.caller.scope;
    if scope.read_only() {
        return Ok(Err(
            "This token is read-only: it cannot import. Nothing was written.".into(),
        ));
    }
    let mut document = None;
    let mut into = None;
    for (name, value) in fields {
        match name.as_str() {
            "document" => document = Some(value.as_str()),
            "project_id" => into = Some(value.as_str()).filter(|v| !v.trim().is_empty()),
            other => {
                return Ok(Err(format!(
                    "The import form has no field \"{}\"; it takes document and project_id. \
                     Nothing was written.",
                    preview(other)
                )))
            }
        }
    }
    let whole = match export::parse(document.unwrap_or_default().as_bytes(), into) {
        Ok(whole) => whole,
        Err(why) => return Ok(Err(format!("Nothing was imported: {why}."))),
    };
    let id = whole.project.id.clone();
    let Some(into) = scope.writable(&id) else {
        return Ok(Err(tools::out_of_reach(scope, &id)));
    };
    Ok(match store::import(ctx.db, into, &whole).await? {
        Imported::Written => Ok(id),
        Imported::ProjectExists => Err(format!(
            "A project \"{id}\" exists already: an import only makes a new project. Nothing \
             was written; import it under another project id."
        )),
        Imported::TaskTaken(task) => Err(format!(
            "The task id \"{}\" is in use on this server already (this document was imported \
             here before, or comes from here): an import keeps task ids, so nothing was written.",
            preview(&task)
        )),
    })
}

fn import_page(
    status: u16,
    ctx: &Ctx<'_>,
    refused: Option<&str>,
    fields: &[(String, String)],
) -> Response {
    let field = |name| form::field(fields, name).unwrap_or_default();
    let body = html::page("Import", |h| {
        h.raw("<nav><a href=\"./\">← All projects</a></nav><h1>Import a project</h1>");
        if let Some(sentence) = refused {
            h.fill("<p class=err role=alert id=refused>{}</p>", &[sentence]);
        }
        if ctx.caller.scope.read_only() {
            h.raw("<p class=m>This token is read-only: it cannot import.</p>");
            return;
        }
        h.fields(
            "<p class=m>A document that an export wrote (the JSON) becomes a new project, with \
             its tasks, ids and history, or nothing at all.</p>\
             <form method=post action=\"import\" data-tool=import>\
             <label for=ip>Project id (empty: the document's own)</label>\
             <input id=ip name=project_id value=\"{}\">\
             <label for=id>Document (JSON)</label>\
             <textarea id=id name=document rows=12 required>\n{}</textarea>\
             <button>Import</button></form>",
            &[field("project_id"), field("document")],
        );
    });
    html(status, body)
}

/// The search page: the box, then the search tool's text for the fields given, or its refusal.
pub async fn search(ctx: &Ctx<'_>, project: Option<&str>, fields: &[(String, String)]) -> Response {
    if let Some(id) = project.filter(|id| ctx.caller.scope.readable(id).is_none()) {
        return no_project(id);
    }
    let outcome = match run_search(ctx, project, fields).await {
        Ok(outcome) => outcome,
        Err(error) => return refusal(&error),
    };
    let field = |name| form::field(fields, name).unwrap_or_default();
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
    html(status, body)
}

/// Runs the search tool with the fields as its arguments, as tools/call does; `None` when
/// no search was asked for (the page's first visit). An empty kind is any kind.
async fn run_search(
    ctx: &Ctx<'_>,
    project: Option<&str>,
    fields: &[(String, String)],
) -> Result<Option<tools::ToolResult>, Error> {
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
