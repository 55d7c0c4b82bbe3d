//! The project's state as plain text, for scripts and hooks (Claude Code's `SessionStart` and
//! `Stop` hooks, docs/clients.md): `GET /<token>/projects/<id>/state.txt`, or
//! `GET /projects/<id>/state.txt` with `Authorization: Bearer`; for a credential of one project,
//! `…/state.txt` with no id. The body is get_state's two texts, made by the function get_state
//! runs (`render::state_texts`) after the same scope check, so it cannot drift from the tool:
//! the contract then the reference block, joined by one line break (the block starts with its
//! own, so one blank line stands between them, as in the state resource) and ended by a line
//! break. Its headers say which project it is (`x-handoff-project`), when it was last written
//! in any way (`x-handoff-written-at`, what a hook compares to tell whether a session wrote it)
//! and who wrote what it shows (`x-handoff-writers`). A refusal is the tool's sentence as text
//! with its status: 404 for an unknown project or one outside the credential, 400 for a
//! credential of every project on the route without an id.
//!
//! Nothing is written here, and nothing here is HTML: no SQL, no markup, no `worker::*`.

use crate::context::Ctx;
use crate::error::Error;
use crate::http::Response;
use crate::model::State;
use crate::render;
use crate::store;
use crate::tools;

/// The headers of every answer: text that no cache keeps (it holds the state, and a token's
/// path), and that no browser reads as anything else.
const HEADERS: [(&str, &str); 3] = [
    ("content-type", "text/plain; charset=utf-8"),
    ("cache-control", "no-store"),
    ("x-content-type-options", "nosniff"),
];

/// The refusal of `…/state.txt` without a project id under a credential of every project.
pub const NAME_ONE: &str = "This credential reaches every project, so the state needs a project \
id: GET /projects/<project id>/state.txt.";

fn text(status: u16, body: String) -> Response {
    Response::with_headers(status, &HEADERS, body)
}

/// A refusal as this endpoint answers one: the error's sentence as text, its status and
/// headers (`Allow` for a 405, `WWW-Authenticate` for a 401); its detail to the log only.
pub fn refusal(error: &Error) -> Response {
    text(error.page_status(), format!("{}\n", error.message())).refusing(error)
}

/// The state of `project` (none: the credential's one project) as get_state returns it, under
/// the caller's credential: one batch, get_state's.
pub async fn state(project: Option<&str>, ctx: &Ctx<'_>) -> Response {
    let scope = &ctx.caller.scope;
    let Some(id) = project.or(scope.project()) else {
        return text(400, format!("{NAME_ONE}\n"));
    };
    let Some(readable) = scope.readable(id) else {
        return text(404, format!("{}\n", tools::out_of_reach(scope, id)));
    };
    let state = match store::load_state(ctx.db, readable).await {
        Ok(Some(state)) => state,
        Ok(None) => return text(404, format!("{}\n", tools::no_project(id))),
        Err(e) => return refusal(&Error::from(e).in_tool(tools::GET_STATE.name, false)),
    };
    let [contract, reference] =
        render::state_texts(&state, ctx.clock.now_ms(), ctx.focus_stale_days);
    let mut response = text(200, format!("{contract}\n{reference}\n"));
    response.headers.extend(headers(&state));
    response
}

/// The headers that describe `state`: its project, when it was last written, and who wrote
/// what it shows (none when no name is known).
fn headers(state: &State) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("x-handoff-project", state.project_id.clone()),
        ("x-handoff-written-at", state.written_at.to_string()),
    ];
    let writers = writers(state);
    if !writers.is_empty() {
        headers.push(("x-handoff-writers", writers));
    }
    headers
}

/// Who wrote what the state shows: the North Star's writer, the focus's, then each listed
/// task's, each once, in that order, joined by `, `; each folded as the texts are (no line
/// break, invisible characters by their code point) and then percent-encoded, since a header
/// carries ASCII only: every byte outside printable ASCII, and `%` and `,`, as `%XX`.
pub fn writers(state: &State) -> String {
    let known = |by: &str| by != "unknown";
    let names = [Some(state.north_star_set.by.as_str())]
        .into_iter()
        .chain([state.focus.as_ref().map(|f| f.set.by.as_str())])
        .chain(state.deferred.iter().map(|t| t.by.as_deref()))
        .flatten()
        .filter(|by| known(by));
    let mut seen: Vec<&str> = Vec::new();
    let mut out = String::new();
    for name in names {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        if !out.is_empty() {
            out.push_str(", ");
        }
        for byte in render::inline(name).bytes() {
            match byte {
                b' '..=b'~' if byte != b'%' && byte != b',' => out.push(char::from(byte)),
                _ => {
                    const HEX: &[u8; 16] = b"0123456789ABCDEF";
                    out.push('%');
                    out.push(char::from(HEX[usize::from(byte >> 4)]));
                    out.push(char::from(HEX[usize::from(byte & 0xF)]));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Deferred, Focus, Kind, Stamp};

    fn stamp(by: &str) -> Stamp {
        Stamp {
            at_ms: Some(1),
            by: by.into(),
        }
    }

    /// Each writer once, in the order of what they wrote, the unknown ones left out, and every
    /// byte a header cannot carry as it is, encoded.
    #[test]
    fn writers_are_named_once_each_and_encoded() {
        let task = |by: Option<&str>| Deferred {
            id: "t".into(),
            kind: Kind::Cleanup,
            body: "b".into(),
            by: by.map(Into::into),
        };
        let mut state = State {
            project_id: "p".into(),
            north_star: "n".into(),
            north_star_set: stamp("owner (claude-code/2.1.332)"),
            written_at: 5,
            focus: Some(Focus {
                statement: "s".into(),
                why: None,
                done_when: None,
                set: stamp("青木, 50%\u{202E}"),
            }),
            deferred: vec![
                task(Some("owner (claude-code/2.1.332)")),
                task(None),
                task(Some("unknown")),
                task(Some("Claude (OAuth)")),
            ],
            unlisted: 0,
        };
        assert_eq!(
            writers(&state),
            "owner (claude-code/2.1.332), %E9%9D%92%E6%9C%A8%2C 50%25\\u{202E}, Claude (OAuth)"
        );
        state.north_star_set = stamp("unknown");
        state.focus = None;
        state.deferred.clear();
        assert_eq!(writers(&state), "");
        assert_eq!(headers(&state).len(), 2);
    }
}
