//! The human view: the state as web pages under the token, and forms that are the write tools.
//! `route` plans a page (its paths are rows of `route::TABLE`); `serve` renders a page, or runs a posted
//! form through `tools::call` with the tool's own definition, so a form has exactly the tool's
//! validation, limits and writes, attributed to the client `web`, then redirects back (303) or
//! shows the tool's refusal. `access` is the one place that decides what a token may see and
//! do here.
//!
//! Every web response carries `HEADERS` (a CSP without script, no framing, no referrer across
//! origins, no caching). A POST must come from this server's own origin. Links and form actions
//! are relative, so no page holds the token. No SQL, no `worker::*` and no escaping by hand
//! here: markup is built in `html`.
//!
//! A GET renders from the store: the list is one statement (`store::PROJECT_SUMMARIES`), a
//! project's page `load_state` and `load_history`, its texts made by the functions get_state and
//! the history resource run (`render::contract`, `render::reference`, `render::history`; wire
//! tests hold the page to their texts). `records` serves search, export and import, asking the
//! scope as `access` does (may read for search and export, may write the new id for an import)
//! before any storage. A POST is checked before its body is read (the server's own `Origin`,
//! else 403; the form type, else 415; an announced size over 1 MiB, 413), decoded by `form` (its
//! one normalisation: line breaks to LF), turned into the tool's arguments with the project id
//! from the URL, and run by `tools::call` with the scope narrowed to that project
//! (`Access::form_scope`), so a form reaches no other project's task: a success is 303 to the
//! page, an `isError` outcome the page again with the tool's sentence (422). Each deferred task's
//! row is a form of its own; every stored text is edited in a textarea.

mod clients;
mod html;
mod records;
mod sharing;

pub use html::{refusal, HEADERS};
pub use records::search_fields;

use crate::auth::scope::{Readable, Scope};
use crate::config::Config;
use crate::context::{Caller, Ctx};
use crate::error::Error;
use crate::form;
use crate::http::Response;
use crate::json_read::Node;
use crate::model;
use crate::render;
use crate::store;
use crate::tools::{self, ToolDef};
use html::{html, Refused};

/// The client name the tools record for a write made through the pages.
pub const CLIENT: &str = "web";
/// Projects per page of the list.
pub const PAGE: usize = 100;
/// The status of a page that shows a tool's refusal: the form was read, the tool said no.
const REFUSED: u16 = 422;
/// The form encoding every page form posts.
pub const FORM_TYPE: &str = "application/x-www-form-urlencoded";

/// A planned web request: a page to render, or a form post whose body is to be read. `route`
/// makes it from a path of its table and the query string (`index_cursor`, `search_fields`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    /// The projects, in id order, after `after` (exclusive).
    Index {
        after: Option<String>,
    },
    Project {
        id: String,
    },
    /// A form of the project's page: the write tool it runs.
    Form {
        project: String,
        tool: &'static str,
    },
    /// The search page, of one project or of all the credential reaches, with the search
    /// form's fields from the query string (none: the empty form).
    Search {
        project: Option<String>,
        fields: Vec<(String, String)>,
    },
    /// A project's export: the JSON document, or its Markdown.
    Export {
        project: String,
        markdown: bool,
    },
    /// The import page, or (`post`) the import it posts.
    Import {
        post: bool,
    },
    /// The connected OAuth clients.
    Clients,
    /// A connected client's Revoke button.
    Revoke {
        grant: String,
    },
    /// The share form of a project's page: a new project token, shown on a page whose share
    /// block names this server by `origin` (the request's own, as the browser reached it).
    Share {
        project: String,
        origin: String,
    },
    /// A project token's Revoke button.
    RevokeToken {
        project: String,
        token: String,
    },
    /// The delete form of a project's page.
    Delete {
        project: String,
    },
}

impl Page {
    /// Whether the shell must read the body before `serve`.
    pub fn reads_body(&self) -> bool {
        matches!(
            self,
            Page::Form { .. }
                | Page::Import { post: true }
                | Page::Share { .. }
                | Page::Delete { .. }
        )
    }
}

/// Where a page's URL sits under `/<token>/`, for relative links back up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// `/<token>/`.
    Top,
    /// `/<token>/projects/<id>`.
    Project,
    /// `/<token>/projects/<id>/<tool>`, where a refused form is shown.
    Tool,
    /// `/<token>/projects/<id>/tokens/<token id>`, a Revoke button's post.
    Token,
}

impl Depth {
    fn up(self) -> &'static str {
        match self {
            Depth::Top => "./",
            Depth::Project => "../",
            Depth::Tool => "../../",
            Depth::Token => "../../../",
        }
    }
}

/// A write tool by name: every tool that is not read-only has a form.
pub fn write_tool(name: &str) -> Option<&'static ToolDef> {
    tools::find(name).filter(|def| !def.annotations.read_only)
}

/// The list's `?after=<project id>`; no query is the first page.
pub fn index_cursor(query: Option<&str>) -> Result<Option<String>, Error> {
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return Ok(None);
    };
    match query.strip_prefix("after=") {
        Some(id) if model::is_project_id(id) => Ok(Some(id.to_owned())),
        _ => Err(Error::InvalidRequest(
            "the list takes only ?after=<project id>".into(),
        )),
    }
}

/// What the caller's credential may do with a project through the pages: the one place the
/// web view reads the scope. A project it may not read is shown as one that does not exist.
struct Access<'a> {
    /// The proof the store asks for a read, when the credential may read the project.
    read: Option<Readable<'a>>,
    /// Whether the page carries the write forms (a post is still the tool's to refuse).
    write: bool,
}

fn access<'a>(caller: &Caller, project: &'a str) -> Access<'a> {
    Access {
        read: caller.scope.readable(project),
        write: caller.scope.writable(project).is_some(),
    }
}

impl Access<'_> {
    /// The scope a form of `project`'s page runs its tool with: that project alone, whatever
    /// else the credential reaches. A form acts on the project in its URL, so a task id of
    /// another project posted there is, to complete_task, a task that does not exist.
    fn form_scope(&self, project: &str) -> Scope {
        Scope::Project {
            id: project.to_owned(),
            write: self.write,
        }
    }
}

/// Carries out a planned web request (`body` is empty for a page).
pub async fn serve(action: &Page, body: &[u8], ctx: &Ctx<'_>, config: &Config) -> Response {
    // Every project page is drawn by one call below: the page itself, a form's refusal, and the
    // page of no project that a credential outside its scope gets.
    let (id, depth, refused) = match action {
        Page::Index { after } => {
            return index(ctx, after.as_deref())
                .await
                .unwrap_or_else(|error| refusal(&error))
        }
        Page::Project { id } => (id, Depth::Project, None),
        Page::Search { project, fields } => {
            return records::search(ctx, project.as_deref(), fields).await
        }
        Page::Export { project, markdown } => {
            return records::export(ctx, project, *markdown).await
        }
        Page::Import { post } => return records::import(ctx, *post, body).await,
        Page::Clients => return clients::list(ctx, config).await,
        Page::Revoke { grant } => return clients::revoke(ctx, grant).await,
        Page::Form { project, tool } => match form(ctx, project, tool, body).await {
            Ok(FormResult::Written(response)) => return response,
            Ok(FormResult::Refused(refused)) => (project, Depth::Tool, refused),
            Err(error) => return refusal(&error),
        },
        Page::Share { project, origin } => {
            match sharing::share(ctx, config, project, origin, body).await {
                sharing::Outcome::Answered(response) => return response,
                sharing::Outcome::Refused(refused) => (project, Depth::Tool, Some(refused)),
            }
        }
        Page::RevokeToken { project, token } => match sharing::revoke(ctx, project, token).await {
            sharing::Outcome::Answered(response) => return response,
            sharing::Outcome::Refused(refused) => (project, Depth::Token, Some(refused)),
        },
        Page::Delete { project } => match sharing::delete(ctx, project, body).await {
            sharing::Outcome::Answered(response) => return response,
            sharing::Outcome::Refused(refused) => (project, Depth::Tool, Some(refused)),
        },
    };
    project(ctx, id, depth, refused.as_ref())
        .await
        .unwrap_or_else(|error| refusal(&error))
}

async fn index(ctx: &Ctx<'_>, after: Option<&str>) -> Result<Response, Error> {
    // A project-scoped credential lists its one project (`access` says the same of each).
    let reach = ctx.caller.scope.reach();
    let mut projects = store::project_summaries(ctx.db, after, PAGE + 1, reach).await?;
    let more = projects.len() > PAGE;
    projects.truncate(PAGE);
    let next = more
        .then(|| projects.last().map(|p| p.id.as_str()))
        .flatten();
    let body = html::index(&html::Index {
        up: Depth::Top.up(),
        projects: &projects,
        next,
        now_ms: ctx.clock.now_ms(),
        write: ctx.caller.scope.write_reach().is_some(),
    });
    Ok(html(200, body))
}

/// The project's page, or after a refused form the page again with the tool's sentence.
async fn project(
    ctx: &Ctx<'_>,
    id: &str,
    depth: Depth,
    refused: Option<&Refused>,
) -> Result<Response, Error> {
    let status = if refused.is_some() { REFUSED } else { 200 };
    let access = access(&ctx.caller, id);
    let found = match access.read {
        Some(project) => store::load_state(ctx.db, project)
            .await?
            .map(|state| (project, state)),
        None => None,
    };
    let Some((project, state)) = found else {
        // A project cannot be deleted, so this is a mistyped id or one not created yet.
        let mut sentence = format!("No project \"{id}\" yet; set_north_star creates it.");
        if let Some(refused) = refused {
            sentence = format!("{}\n{sentence}", refused.sentence);
        }
        let status = if refused.is_some() { REFUSED } else { 404 };
        return Ok(html(status, html::refused_page(&sentence)));
    };
    let history = store::load_history(ctx.db, project)
        .await?
        .ok_or(Error::Internal {
            detail: "the project has no history".into(),
        })?;
    // The owner's page lists the project's tokens, to share it and take a share back.
    let tokens = match crate::sharing::list(ctx, id).await {
        Ok(tokens) => Some(tokens),
        Err(crate::sharing::Refused::Failed(error)) => return Err(error),
        Err(_) => None,
    };
    // get_state's two texts, from the same functions get_state runs.
    let now_ms = ctx.clock.now_ms();
    let texts = [
        render::contract(&state),
        render::reference(&state, now_ms, ctx.focus_stale_days),
    ];
    let body = html::project(&html::Project {
        up: depth.up(),
        state: &state,
        texts: &texts,
        history: &history,
        now_ms,
        stale_days: ctx.focus_stale_days,
        write: access.write,
        refused,
        tokens: tokens.as_deref(),
    });
    Ok(html(status, body))
}

/// What a form post came to: a write (its 303), or the page to draw again with the tool's
/// refusal (none when the credential may not read the project: the page of no project).
enum FormResult {
    Written(Response),
    Refused(Option<Refused>),
}

/// Runs a form post: the body decoded strictly, the tool called with the fields as its
/// arguments and the project id from the URL, within that project alone (`form_scope`), then a
/// 303 back to the project's page, or the page again showing the tool's refusal.
async fn form(
    ctx: &Ctx<'_>,
    project_id: &str,
    tool: &str,
    body: &[u8],
) -> Result<FormResult, Error> {
    let access = access(&ctx.caller, project_id);
    if access.read.is_none() {
        return Ok(FormResult::Refused(None));
    }
    let fields = form::decode(body)
        .map_err(|why| Error::InvalidRequest(format!("the form cannot be read: {why}")))?;
    let def = write_tool(tool).expect("planned forms name write tools");
    let mut arguments = Vec::with_capacity(fields.len() + 1);
    if def.params.iter().any(|p| p.name == "project_id") {
        if fields.iter().any(|(name, _)| name == "project_id") {
            return Err(Error::InvalidRequest(
                "the page's URL names the project; the form must not".into(),
            ));
        }
        arguments.push(("project_id".into(), Node::String(project_id.into())));
    }
    for (name, value) in &fields {
        arguments.push((name.as_str().into(), Node::String(value.as_str().into())));
    }
    let ctx = Ctx {
        caller: Caller {
            scope: access.form_scope(project_id),
            client_info: Some(CLIENT.into()),
            ..ctx.caller.clone()
        },
        ..*ctx
    };
    let outcome = tools::call(def, Some(&Node::Object(arguments)), &ctx).await?;
    if outcome.is_error {
        return Ok(FormResult::Refused(Some(Refused {
            tool: def.name,
            sentence: outcome.texts.join("\n"),
            fields,
        })));
    }
    let mut response = html(303, String::new());
    response.headers.push((
        "location",
        format!("{}projects/{project_id}", Depth::Tool.up()),
    ));
    Ok(FormResult::Written(response))
}
