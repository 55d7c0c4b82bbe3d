//! The human view: the state as web pages under the token, and forms that are the write tools.
//! `plan` routes a web path (pure, like `http::plan`); `serve_page` renders a GET; `serve_form`
//! runs a POSTed form through `tools::call` with the tool's own definition, so a form has
//! exactly the tool's validation, limits and writes, attributed to the client `web`, then
//! redirects back (303) or shows the tool's refusal. `access` is the one place that decides
//! what a token may see and do here.
//!
//! Every web response carries `HEADERS` (a CSP without script, no framing, no referrer across
//! origins, no caching). A POST must come from this server's own origin. Links and form actions
//! are relative, so no page holds the token. No SQL, no `worker::*` and no escaping by hand
//! here: markup is built in `html`.

pub mod card;
pub mod form;
mod html;
mod svg;

use serde_json::{Map, Value as Json};

use crate::context::{Caller, Ctx};
use crate::error::Error;
use crate::http::{Plan, Request, Response, MAX_BODY_BYTES};
use crate::model;
use crate::store;
use crate::tools::{self, ToolDef};
use html::Refused;

/// The client name the tools record for a write made through the pages.
pub const CLIENT: &str = "web";
/// Projects per page of the list.
pub const PAGE: usize = 100;
/// The status of a page that shows a tool's refusal: the form was read, the tool said no.
const REFUSED: u16 = 422;
/// The form encoding every page form posts.
pub const FORM_TYPE: &str = "application/x-www-form-urlencoded";

/// The headers of every web response. The CSP allows no script at all, styles only inline,
/// images only from here or `data:`, forms only to here; `frame-ancestors 'none'` (and the
/// older `X-Frame-Options`) keeps the pages out of other sites' frames. The token is in the URL,
/// so the referrer never leaves this origin, and nothing is cached.
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

/// What a GET shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    /// The projects, in id order, after `after` (exclusive).
    Index {
        after: Option<String>,
    },
    Project {
        id: String,
    },
}

/// A POSTed form: the write tool it runs, and the project whose page it is on (`None`: the
/// list's new-project form, whose fields name the project).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub tool: &'static str,
    pub project: Option<String>,
}

/// Where a page's URL sits under `/<token>/`, for relative links back up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// `/<token>/` and `/<token>/projects`.
    Top,
    /// `/<token>/projects/<id>`.
    Project,
    /// `/<token>/projects/<id>/<tool>`, where a refused form is shown.
    Tool,
}

impl Depth {
    fn up(self) -> &'static str {
        match self {
            Depth::Top => "./",
            Depth::Project => "../",
            Depth::Tool => "../../",
        }
    }
}

/// Whether a path after the token is one of the pages' (`http::route` asks).
pub fn is_web_path(tail: &str) -> bool {
    tail.is_empty() || tail == "projects" || tail.starts_with("projects/")
}

/// The plan for a web request: every rule that needs no body. A path that is not a page is
/// the bare 404 of every unknown path.
pub fn plan(req: &Request<'_>) -> Plan {
    let tail = req.path.splitn(3, '/').nth(2).unwrap_or_default();
    let segments: Vec<&str> = tail.split('/').collect();
    const GET: &[&str] = &["GET"];
    const POST: &[&str] = &["POST"];
    let (allow, form) = match segments.as_slice() {
        [""] => (GET, None),
        ["projects"] => (
            POST,
            Some(Form {
                tool: "set_north_star",
                project: None,
            }),
        ),
        ["projects", id] if model::is_project_id(id) => (GET, None),
        ["projects", id, tool] if model::is_project_id(id) => match write_tool(tool) {
            Some(def) => (
                POST,
                Some(Form {
                    tool: def.name,
                    project: Some((*id).to_owned()),
                }),
            ),
            None => return Plan::Respond(Response::not_found()),
        },
        _ => return Plan::Respond(Response::not_found()),
    };
    if !allow.contains(&req.method) {
        return Plan::Respond(refusal(&Error::MethodNotAllowed { allow }));
    }
    let Some(form) = form else {
        return match segments.as_slice() {
            [_, id] => Plan::WebPage(Page::Project {
                id: (*id).to_owned(),
            }),
            _ => match index_cursor(req.query) {
                Ok(after) => Plan::WebPage(Page::Index { after }),
                Err(error) => Plan::Respond(refusal(&error)),
            },
        };
    };
    if !same_origin(req) {
        return Plan::Respond(refusal(&Error::ForbiddenOrigin));
    }
    let content_type = req.headers.get("content-type").unwrap_or_default();
    if !content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .eq_ignore_ascii_case(FORM_TYPE)
    {
        return Plan::Respond(refusal(&Error::UnsupportedMediaType {
            expected: FORM_TYPE,
        }));
    }
    let announced = req.headers.get("content-length");
    if announced.and_then(|n| n.trim().parse::<usize>().ok()) > Some(MAX_BODY_BYTES) {
        return Plan::Respond(refusal(&Error::TooLarge {
            limit: MAX_BODY_BYTES,
        }));
    }
    Plan::WebForm(form)
}

/// A write tool by name: every tool that is not read-only has a form.
fn write_tool(name: &str) -> Option<&'static ToolDef> {
    tools::find(name).filter(|def| !def.annotations.read_only)
}

/// The list's `?after=<project id>`; no query is the first page.
fn index_cursor(query: Option<&str>) -> Result<Option<String>, Error> {
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return Ok(None);
    };
    match query.strip_prefix("after=") {
        Some(id) if model::is_project_id(id) => Ok(Some(id.to_owned())),
        _ => Err(Error::BadRequest(
            "the list takes only ?after=<project id>".into(),
        )),
    }
}

/// A form post must carry this server's own origin: a browser sends `Origin` with every POST,
/// and a page of ours (whose referrer policy is `same-origin`) sends our origin itself, so an
/// absent Origin, `null`, or any other origin is a post we did not serve the form for.
fn same_origin(req: &Request<'_>) -> bool {
    req.headers
        .get("origin")
        .is_some_and(|origin| origin.trim().eq_ignore_ascii_case(req.own_origin))
}

/// What a token may see and do through the pages: the one place that reads the caller's
/// authority here. Every token today is the one full token.
struct Access {
    /// Whether pages carry the write forms and accept their posts.
    write: bool,
}

fn access(_caller: &Caller) -> Access {
    Access { write: true }
}

/// An HTML response with the web headers.
fn html(status: u16, body: String) -> Response {
    Response {
        status,
        headers: HEADERS.iter().map(|&(k, v)| (k, v.to_owned())).collect(),
        body,
        diagnostic: None,
    }
}

/// A refusal as a page: the error's status, headers and public message; its detail to the log.
fn refusal(error: &Error) -> Response {
    let mut response = html(error.page_status(), html::refusal(&error.message()));
    response.headers.extend(error.headers());
    response.diagnostic = error.diagnostic().map(str::to_owned);
    response
}

/// Renders a planned GET.
pub async fn serve_page(page: &Page, ctx: &Ctx<'_>) -> Response {
    let shown = match page {
        Page::Index { after } => index(ctx, after.as_deref(), Depth::Top, None).await,
        Page::Project { id } => project_page(ctx, id, Depth::Project, None).await,
    };
    shown.unwrap_or_else(|error| refusal(&error))
}

async fn index(
    ctx: &Ctx<'_>,
    after: Option<&str>,
    depth: Depth,
    refused: Option<&Refused>,
) -> Result<Response, Error> {
    let mut projects = store::project_summaries(ctx.db, after, PAGE + 1).await?;
    let more = projects.len() > PAGE;
    projects.truncate(PAGE);
    let next = more
        .then(|| projects.last().map(|p| p.id.as_str()))
        .flatten();
    let body = html::index(&html::Index {
        up: depth.up(),
        projects: &projects,
        next,
        now_ms: ctx.clock.now_ms(),
        write: access(&ctx.caller).write,
        refused,
    });
    Ok(html(if refused.is_some() { REFUSED } else { 200 }, body))
}

async fn project_page(
    ctx: &Ctx<'_>,
    id: &str,
    depth: Depth,
    refused: Option<&Refused>,
) -> Result<Response, Error> {
    let get_state = tools::find("get_state").expect("get_state is a tool");
    let outcome = tools::call(
        get_state,
        Some(&serde_json::json!({ "project_id": id })),
        ctx,
    )
    .await?;
    let (state, history) = match outcome.is_error {
        false => (
            store::load_state(ctx.db, id).await?,
            store::load_history(ctx.db, id).await?,
        ),
        true => (None, None),
    };
    let (Some(state), Some(history)) = (state, history) else {
        // No such project (a project cannot be deleted, so this is a mistyped or future id).
        let mut sentence = outcome.texts.join("\n");
        if let Some(refused) = refused {
            sentence = format!("{}\n{sentence}", refused.sentence);
        }
        let body = html::refusal(&sentence);
        return Ok(html(if refused.is_some() { REFUSED } else { 404 }, body));
    };
    let body = html::project(&html::Project {
        up: depth.up(),
        state: &state,
        texts: &outcome.texts,
        history: &history,
        now_ms: ctx.clock.now_ms(),
        write: access(&ctx.caller).write,
        refused,
    });
    Ok(html(if refused.is_some() { REFUSED } else { 200 }, body))
}

/// Runs a planned form post: the body decoded strictly, the tool called with the fields as its
/// arguments (the project id from the URL), then a 303 back to the project's page, or the page
/// again showing the tool's refusal.
pub async fn serve_form(form: &Form, body: &[u8], ctx: &Ctx<'_>) -> Response {
    if body.len() > MAX_BODY_BYTES {
        return refusal(&Error::TooLarge {
            limit: MAX_BODY_BYTES,
        });
    }
    let fields = match form::decode(body) {
        Ok(fields) => fields,
        Err(why) => {
            return refusal(&Error::BadRequest(format!(
                "the form cannot be read: {why}"
            )))
        }
    };
    let def = write_tool(form.tool).expect("planned forms name write tools");
    let mut arguments = Map::new();
    if let Some(project) = &form.project {
        if def.params.iter().any(|p| p.name == "project_id") {
            if fields.iter().any(|(name, _)| name == "project_id") {
                return refusal(&Error::BadRequest(
                    "the page's URL names the project; the form must not".into(),
                ));
            }
            arguments.insert("project_id".into(), Json::String(project.clone()));
        }
    }
    for (name, value) in &fields {
        arguments.insert(name.clone(), Json::String(value.clone()));
    }
    let ctx = Ctx {
        caller: Caller {
            client_info: Some(CLIENT.into()),
            ..ctx.caller.clone()
        },
        ..*ctx
    };
    let outcome = match tools::call(def, Some(&Json::Object(arguments.clone())), &ctx).await {
        Ok(outcome) => outcome,
        Err(error) => return refusal(&error),
    };
    let project = form.project.clone().or_else(|| {
        arguments
            .get("project_id")
            .and_then(Json::as_str)
            .map(str::to_owned)
    });
    let depth = if form.project.is_some() {
        Depth::Tool
    } else {
        Depth::Top
    };
    if !outcome.is_error {
        // A successful write always names a project: from the URL, or the created one's id.
        let project = project.unwrap_or_default();
        let mut response = html(303, String::new());
        response
            .headers
            .push(("location", format!("{}projects/{project}", depth.up())));
        return response;
    }
    let refused = Refused {
        tool: def.name,
        sentence: outcome.texts.join("\n"),
        fields,
    };
    let shown = match (&form.project, project) {
        (Some(_), Some(project)) => project_page(&ctx, &project, depth, Some(&refused)).await,
        _ => index(&ctx, None, depth, Some(&refused)).await,
    };
    shown.unwrap_or_else(|error| refusal(&error))
}
