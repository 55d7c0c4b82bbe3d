//! The five tools. One `ToolDef` per tool, in its own file with its handler, drives tools/list,
//! argument checking and tools/call. Tools return `Outcome`s (a failure the model can act on is
//! an `isError` outcome, not an error); they never build JSON-RPC errors and never see HTTP.
//! Argument rules live in `args`, the tools/list entry in `schema`.

mod add_task;
pub mod args;
mod complete_task;
mod get_state;
pub mod schema;
mod set_focus;
mod set_north_star;

use serde_json::Value as Json;

use crate::context::Ctx;
use crate::error::Error;
use crate::model::Anchor;
use crate::render;
use crate::store::LocalFuture;
use args::Args;

/// Every tool, in the order tools/list shows them.
pub const ALL: [&ToolDef; 5] = [
    &get_state::DEF,
    &set_north_star::DEF,
    &set_focus::DEF,
    &add_task::DEF,
    &complete_task::DEF,
];

/// A tool's handler: checked arguments and the request context in, the outcome out. A storage
/// failure is an `Error` (an internal error to the client, the detail to the log).
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

/// Checks the arguments and runs the tool: bad arguments are an `isError` outcome that names
/// the rule (and reach no storage); a storage failure is an internal error.
pub async fn call(
    def: &'static ToolDef,
    arguments: Option<&Json>,
    ctx: &Ctx<'_>,
) -> Result<Outcome, Error> {
    match args::check(def, arguments) {
        Ok(args) => (def.handler)(&args, ctx).await.map_err(|e| match e {
            Error::Internal { detail } => Error::Internal {
                detail: format!("{}: {detail}", def.name),
            },
            other => other,
        }),
        Err(sentence) => Ok(Outcome::error(format!(
            "Invalid arguments for {}: {}. Nothing was written.",
            def.name,
            sentence.trim_end_matches('.')
        ))),
    }
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
