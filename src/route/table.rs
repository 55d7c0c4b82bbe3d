//! The path table: every path the Worker answers, where it goes, the methods it answers and
//! where its credential is (`TABLE`), and matching a path against it (`find`). First match
//! wins; a path in no row is the bare 404 whatever its token.

use crate::model;
use crate::web;

/// What a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Healthz,
    /// `/help`: to the troubleshooting guide (`Config::troubleshooting`).
    Help,
    Mcp,
    Sse,
    SseMessage,
    /// The human view: the list of projects.
    List,
    /// The search page of every project the credential reaches.
    Search,
    /// The import page, and the import it posts.
    Import,
    Project,
    ProjectSearch,
    ExportJson,
    ExportMarkdown,
    /// A project's state as plain text (`plain`), under a path token or a bearer header; with
    /// no project in the path, the credential's one project.
    State,
    /// A form of a project's page: a write tool.
    Form,
    /// The connected OAuth clients.
    Clients,
    /// A connected OAuth client's revoke button.
    Revoke,
    /// A project page's share form: a new project token.
    Share,
    /// A project token's revoke button.
    RevokeToken,
    /// A project page's delete form.
    Delete,
    /// The owner's HTTP API (`owner`, a bearer header): a project's tokens (GET the list, POST
    /// a new one), one token (DELETE revokes it), the project itself (DELETE).
    OwnerTokens,
    OwnerToken,
    OwnerProject,
    /// OAuth's endpoints (`oauth`): served only when OAuth is on, else the bare 404.
    ResourceMetadata,
    ServerMetadata,
    Register,
    Authorize,
    Token,
    /// RFC 7009: a client revokes its own token.
    Revocation,
}

/// One row of the table: a path pattern, where it goes and the methods it answers. In a
/// pattern, `{token}` is any one segment (the path token, checked by `plan`), `{project}` a
/// segment that is a project id (`model::is_project_id`), `{tool}` the name of a write tool and
/// `{grant}` an OAuth grant's id (`is_grant_id`).
pub struct Row {
    pub pattern: &'static str,
    pub route: Route,
    /// The methods answered; any other is 405 with this `Allow`. Empty: any method.
    pub allow: &'static [&'static str],
}

const GET: &[&str] = &["GET"];
const POST: &[&str] = &["POST"];
const GET_POST: &[&str] = &["GET", "POST"];
const DELETE: &[&str] = &["DELETE"];
/// OAuth's endpoints also answer a browser's CORS preflight.
const GET_OPTIONS: &[&str] = &["GET", "OPTIONS"];
const POST_OPTIONS: &[&str] = &["POST", "OPTIONS"];

/// Every path the Worker answers, first match wins (and the rows are walked in order, so the
/// MCP endpoints come first). A browser cannot send a bearer header with a link, so the pages
/// live under path tokens only.
pub const TABLE: [Row; 35] = [
    row("/healthz", Route::Healthz, &[]),
    row("/help", Route::Help, &[]),
    row("/mcp", Route::Mcp, POST),
    row("/{token}/mcp", Route::Mcp, POST),
    // POST /sse is Streamable HTTP, so an old /sse URL works whichever transport a client picks.
    row("/sse", Route::Sse, GET_POST),
    row("/{token}/sse", Route::Sse, GET_POST),
    row("/sse/message", Route::SseMessage, POST),
    row("/{token}/sse/message", Route::SseMessage, POST),
    row("/projects/{project}/state.txt", Route::State, GET),
    row("/{token}/projects/{project}/state.txt", Route::State, GET),
    // A credential of one project reads its state without naming it.
    row("/state.txt", Route::State, GET),
    row("/{token}/state.txt", Route::State, GET),
    // The owner's API, before the pages: `/projects/<id>/…` is no page's path.
    row("/projects/{project}/tokens", Route::OwnerTokens, GET_POST),
    row(
        "/projects/{project}/tokens/{grant}",
        Route::OwnerToken,
        DELETE,
    ),
    row("/projects/{project}", Route::OwnerProject, DELETE),
    row("/{token}/", Route::List, GET),
    row("/{token}/search", Route::Search, GET),
    row("/{token}/import", Route::Import, GET_POST),
    row("/{token}/projects/{project}", Route::Project, GET),
    row(
        "/{token}/projects/{project}/search",
        Route::ProjectSearch,
        GET,
    ),
    row(
        "/{token}/projects/{project}/export.json",
        Route::ExportJson,
        GET,
    ),
    row(
        "/{token}/projects/{project}/export.md",
        Route::ExportMarkdown,
        GET,
    ),
    row("/{token}/projects/{project}/{tool}", Route::Form, POST),
    row("/{token}/projects/{project}/tokens", Route::Share, POST),
    row(
        "/{token}/projects/{project}/tokens/{grant}",
        Route::RevokeToken,
        POST,
    ),
    row("/{token}/projects/{project}/delete", Route::Delete, POST),
    row("/{token}/clients", Route::Clients, GET),
    row("/{token}/clients/{grant}", Route::Revoke, POST),
    // OAuth's last: no pattern above matches these paths, and the MCP rows, which every tool
    // call walks, come first.
    row(
        "/.well-known/oauth-protected-resource",
        Route::ResourceMetadata,
        GET_OPTIONS,
    ),
    row(
        "/.well-known/oauth-protected-resource/mcp",
        Route::ResourceMetadata,
        GET_OPTIONS,
    ),
    row(
        "/.well-known/oauth-authorization-server",
        Route::ServerMetadata,
        GET_OPTIONS,
    ),
    row("/register", Route::Register, POST_OPTIONS),
    row("/authorize", Route::Authorize, GET_POST),
    row("/token", Route::Token, POST_OPTIONS),
    row("/revoke", Route::Revocation, POST_OPTIONS),
];

const fn row(pattern: &'static str, route: Route, allow: &'static [&'static str]) -> Row {
    Row {
        pattern,
        route,
        allow,
    }
}

/// A path matched against the table: its row and what its pattern's placeholders held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found<'a> {
    pub route: Route,
    pub allow: &'static [&'static str],
    /// The path token, not yet checked; `None` where the credential is the Authorization header.
    pub token: Option<&'a str>,
    /// The project id of a project's path, else empty.
    pub project: &'a str,
    /// The write tool of a form's path, else empty.
    pub tool: &'static str,
    /// The grant id of a revoke button's path, else empty.
    pub grant: &'a str,
}

/// The row a path matches, or `None` for a path that is not ours.
pub fn find(path: &str) -> Option<Found<'_>> {
    TABLE.iter().find_map(|row| matches(row, path))
}

fn matches<'a>(row: &Row, path: &'a str) -> Option<Found<'a>> {
    let mut found = Found {
        route: row.route,
        allow: row.allow,
        token: None,
        project: "",
        tool: "",
        grant: "",
    };
    let mut segments = path.split('/');
    for expected in row.pattern.split('/') {
        let segment = segments.next()?;
        match expected {
            "{token}" => found.token = Some(segment),
            "{project}" if model::is_project_id(segment) => found.project = segment,
            "{tool}" => found.tool = web::write_tool(segment)?.name,
            "{grant}" if is_grant_id(segment) => found.grant = segment,
            literal if literal == segment => {}
            _ => return None,
        }
    }
    segments.next().is_none().then_some(found)
}

/// An OAuth grant's id as its revoke path holds it: 1 to 64 ASCII letters, digits and `-` (the
/// Worker's are UUIDs).
pub fn is_grant_id(segment: &str) -> bool {
    (1..=64).contains(&segment.len())
        && segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
}
