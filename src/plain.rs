//! The project's state as plain text, for scripts and hooks (Claude Code's `SessionStart` hook,
//! docs/clients.md): `GET /<token>/projects/<id>/state.txt`, or `GET /projects/<id>/state.txt`
//! with `Authorization: Bearer`. It is get_state itself, run by `tools::call` under the request's
//! credential, so the body cannot drift from the tool: get_state's two texts, the contract then
//! the reference block, joined by one line break (the block starts with its own, so one blank
//! line stands between them, as in the state resource) and ended by a line break. The tool's
//! refusal (an unknown project, one outside the credential) is its sentence with a 404; a
//! storage failure is the tool's sentence with its status.
//!
//! Nothing is written here, and nothing here is HTML: no SQL, no markup, no `worker::*`.

use crate::context::Ctx;
use crate::error::Error;
use crate::http::Response;
use crate::json_read::Node;
use crate::tools;

/// The headers of every answer: text that no cache keeps (it holds the state, and a token's
/// path), and that no browser reads as anything else.
const HEADERS: [(&str, &str); 3] = [
    ("content-type", "text/plain; charset=utf-8"),
    ("cache-control", "no-store"),
    ("x-content-type-options", "nosniff"),
];

fn text(status: u16, body: String) -> Response {
    Response::with_headers(status, &HEADERS, body)
}

/// A refusal as this endpoint answers one: the error's sentence as text, its status and
/// headers (`Allow` for a 405); its detail to the log only.
pub fn refusal(error: &Error) -> Response {
    text(error.page_status(), format!("{}\n", error.message())).refusing(error)
}

/// The state of `project` as get_state returns it, under the caller's credential: one batch,
/// the tool's.
pub async fn state(project: &str, ctx: &Ctx<'_>) -> Response {
    let arguments = Node::Object(vec![("project_id".into(), Node::String(project.into()))]);
    match tools::call(tools::GET_STATE, Some(&arguments), ctx).await {
        Ok(result) => {
            let status = if result.is_error { 404 } else { 200 };
            text(status, format!("{}\n", result.texts.join("\n")))
        }
        Err(error) => refusal(&error),
    }
}
