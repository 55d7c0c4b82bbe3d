//! The tools. One `ToolDef` per tool, in its own file with its handler, drives tools/list,
//! argument checking and tools/call. Tools return `Outcome`s (a failure the model can act on is
//! an `isError` outcome, not an error); they never build JSON-RPC errors and never see HTTP.
//! Argument rules live in `args`, the tools/list entry in `schema`. The caller's scope is
//! enforced here, once, before any handler runs: a read-only token runs read-only tools only,
//! and a project-scoped token names its own project only. A handler whose tool names no
//! project (complete_task) passes the scope's project to the store instead.

mod add_task;
pub mod args;
mod complete_task;
mod get_state;
pub mod schema;
pub mod search;
mod set_focus;
mod set_north_star;

use crate::context::{Ctx, Scope};
use crate::error::Error;
use crate::model::Anchor;
use crate::node::Node;
use crate::render;
use crate::store::LocalFuture;
use args::Args;

/// Every tool, in the order tools/list shows them.
pub const ALL: [&ToolDef; 6] = [
    &get_state::DEF,
    &set_north_star::DEF,
    &set_focus::DEF,
    &add_task::DEF,
    &complete_task::DEF,
    &search::DEF,
];

/// A tool's handler: checked arguments and the request context in, the outcome out. A storage
/// failure is an `Error`, which `call` tells as the tool's.
pub type Handler = for<'a> fn(&'a Args, &'a Ctx<'a>) -> LocalFuture<'a, Result<Outcome, Error>>;

pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    /// Joined without separator; split so get_state can end with the contract sentence.
    pub description: &'static [&'static str],
    pub params: &'static [args::Param],
    pub annotations: Annotations,
    pub handler: Handler,
}

pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

/// What a tool call produced: its text items, in order, which is all the model is shown. There is
/// no structured content: clients such as Claude Code hand the model `structuredContent` in
/// place of the text, which would hide the contract (ARCHITECTURE.md, "What the model sees").
/// `is_error` results are failures the model can act on; the sentence says what happened and
/// what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub texts: Vec<String>,
    pub is_error: bool,
}

impl Outcome {
    pub fn ok(text: String) -> Self {
        Outcome {
            texts: vec![text],
            is_error: false,
        }
    }

    /// A success of several text items (get_state: the contract, then the reference block).
    pub fn ok_texts(texts: Vec<String>) -> Self {
        Outcome {
            texts,
            is_error: false,
        }
    }

    /// A successful write: its sentence, then the project's 🎯 and ▶ lines as they now stand.
    pub fn written(sentence: String, anchor: &Anchor) -> Self {
        let anchor = render::anchor(&anchor.north_star, anchor.focus.as_ref());
        Outcome::ok(format!("{sentence}\n{anchor}"))
    }

    pub fn error(text: String) -> Self {
        Outcome {
            texts: vec![text],
            is_error: true,
        }
    }
}

pub fn find(name: &str) -> Option<&'static ToolDef> {
    ALL.into_iter().find(|t| t.name == name)
}

/// Checks the arguments and the caller's scope, then runs the tool: bad arguments and calls
/// outside the scope are `isError` outcomes that say why (and reach no storage). A storage
/// failure (after the adapter's one retry, `store::retry`) is an `Error::Storage` told as this
/// tool's: one sentence that says whether the tool can have written anything and whether calling
/// it again is safe, which dispatch answers as the tool's `isError` result and the web view as
/// its error page; the detail, named by the tool, goes to the log.
pub async fn call(
    def: &'static ToolDef,
    arguments: Option<&Node<'_>>,
    ctx: &Ctx<'_>,
) -> Result<Outcome, Error> {
    let args = match args::check(def, arguments) {
        Ok(args) => args,
        Err(sentence) => {
            return Ok(Outcome::error(format!(
                "Invalid arguments for {}: {}. Nothing was written.",
                def.name,
                sentence.trim_end_matches('.')
            )))
        }
    };
    if let Some(refusal) = scope_refusal(def, &args, &ctx.caller.scope) {
        return Ok(Outcome::error(refusal));
    }
    (def.handler)(&args, ctx)
        .await
        .map_err(|e| e.in_tool(def.name, !def.annotations.read_only))
}

/// Why the scope forbids this call, if it does: a tool that writes under a read-only token, or
/// a project the token does not reach.
fn scope_refusal(def: &ToolDef, args: &args::Args, scope: &Scope) -> Option<String> {
    let writes = !def.annotations.read_only;
    if writes && scope.read_only() {
        let readers: Vec<&str> = ALL
            .iter()
            .filter(|t| t.annotations.read_only)
            .map(|t| t.name)
            .collect();
        return Some(format!(
            "{} was refused: this token is read-only, so it can call {} only. Nothing was written.",
            def.name,
            readers.join(", ")
        ));
    }
    let project = args.project_id()?;
    let allowed = if writes {
        scope.may_write(project)
    } else {
        scope.may_read(project)
    };
    (!allowed).then(|| out_of_reach(scope, project))
}

/// The refusal of a project outside a scoped token's reach. It names the token's own project
/// and never says whether the other one exists: it is decided before any storage is reached.
pub fn out_of_reach(scope: &Scope, project: &str) -> String {
    format!(
        "This token reaches project \"{}\" only, not \"{project}\". Nothing was read or written.",
        scope.project().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_satisfy_the_conformance_rule() {
        for def in ALL {
            assert!(def.name.len() <= 64);
            assert!(def
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c)));
        }
    }
}
