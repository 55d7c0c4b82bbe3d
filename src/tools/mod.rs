//! The tools. One `ToolDef` per tool, in its own file with its handler, drives tools/list,
//! argument checking and tools/call. Tools return `ToolResult`s (a failure the model can act on is
//! an `isError` outcome, not an error); they never build JSON-RPC errors and never see HTTP.
//! Argument rules live in `args`, the tools/list entry in `schema`. The caller's scope is
//! asked here, once, before any handler runs: a read-only token runs read-only tools only, and
//! a project-scoped token names its own project only. What the scope allows reaches the handler
//! as the proof its kind of `Handler` takes (`scope::Readable`, `Writable`, `Reach`,
//! `WriteReach`), the value the store demands, so a handler cannot reach a project unasked.

mod add_task;
pub mod args;
mod complete_task;
mod get_state;
pub mod schema;
pub mod search;
mod set_focus;
mod set_north_star;

use crate::auth::scope::{Reach, Readable, Scope, Writable, WriteReach};
use crate::context::Ctx;
use crate::error::Error;
use crate::json_read::Node;
use crate::model::Anchor;
use crate::render;
use crate::store::LocalFuture;
use args::Args;

/// get_state, whose name and refusal the plain-text state (`plain`) shares.
pub const GET_STATE: &ToolDef = &get_state::DEF;
pub use get_state::no_project;

/// Every tool, in the order tools/list shows them.
pub const ALL: [&ToolDef; 6] = [
    &get_state::DEF,
    &set_north_star::DEF,
    &set_focus::DEF,
    &add_task::DEF,
    &complete_task::DEF,
    &search::DEF,
];

/// What a handler returns: its outcome, or a storage failure (an `Error`, which `call` tells as
/// the tool's).
pub type Run<'a> = LocalFuture<'a, Result<ToolResult, Error>>;

/// A tool's handler, by what it may reach: checked arguments, the proof of what the caller's
/// scope allows it, and the request context in; the outcome out. `call` makes the proof, so the
/// kind of handler is the tool's whole claim on storage.
#[derive(Clone, Copy)]
pub enum Handler {
    /// Reads the project its `project_id` names.
    Read(for<'a> fn(&'a Args, Readable<'a>, &'a Ctx<'a>) -> Run<'a>),
    /// Writes the project its `project_id` names.
    Write(for<'a> fn(&'a Args, Writable<'a>, &'a Ctx<'a>) -> Run<'a>),
    /// Reads the project its optional `project_id` names, else every project the caller reaches.
    Reach(for<'a> fn(&'a Args, Reach<'a>, &'a Ctx<'a>) -> Run<'a>),
    /// Writes within every project the caller may write (a task named by its id alone).
    WriteReach(for<'a> fn(&'a Args, WriteReach<'a>, &'a Ctx<'a>) -> Run<'a>),
}

impl Handler {
    /// Whether the handler can write: the tool's annotation must say the same (a test holds it).
    pub fn writes(&self) -> bool {
        matches!(self, Handler::Write(_) | Handler::WriteReach(_))
    }
}

pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    /// Joined without separator; split so get_state can end with the contract sentence.
    pub description: &'static [&'static str],
    pub params: &'static [args::Param],
    pub annotations: Annotations,
    /// The `ui://` resource (MCP Apps) that shows this tool's results, named in its tools/list
    /// entry.
    pub ui: Option<&'static str>,
    /// Claude Code's `anthropic/alwaysLoad`: listed with its whole definition from the start
    /// of a session rather than deferred behind tool search.
    pub always_load: bool,
    pub handler: Handler,
}

pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

/// What a tool call produced: its text items, in order, which is all the model is shown. There is
/// no structured content: clients such as Claude Code hand the model `structuredContent` in
/// place of the text, which would hide the contract (docs/tools.md, "What the model sees").
/// `is_error` results are failures the model can act on; the sentence says what happened and
/// what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub texts: Vec<String>,
    pub is_error: bool,
}

impl ToolResult {
    pub fn ok(text: String) -> Self {
        ToolResult {
            texts: vec![text],
            is_error: false,
        }
    }

    /// A success of several text items (get_state: the contract, then the reference block).
    pub fn ok_texts(texts: Vec<String>) -> Self {
        ToolResult {
            texts,
            is_error: false,
        }
    }

    /// A successful write: its sentence, then the project's 🎯 and ▶ lines as they now stand.
    pub fn written(sentence: String, anchor: &Anchor) -> Self {
        let anchor = render::anchor(&anchor.north_star, anchor.focus.as_ref());
        ToolResult::ok(format!("{sentence}\n{anchor}"))
    }

    pub fn error(text: String) -> Self {
        ToolResult {
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
) -> Result<ToolResult, Error> {
    let scope = &ctx.caller.scope;
    // A credential of one project means that project when the call names none; with one of
    // several projects, a call that must name one is told which it may name.
    let filled;
    let arguments = match (unnamed_project(def, arguments), scope.project()) {
        (None, _) => arguments,
        (Some(_), Some(only)) => {
            filled = with_project(arguments, only);
            Some(&filled)
        }
        (Some(Unnamed::Absent), None) => return which_project(def, ctx).await,
        // An empty id is an id, and the rule refuses it.
        (Some(Unnamed::Empty), None) => arguments,
    };
    let args = match args::check(def, arguments) {
        Ok(args) => args,
        Err(sentence) => {
            return Ok(ToolResult::error(format!(
                "Invalid arguments for {}: {}. Nothing was written.",
                def.name,
                sentence.trim_end_matches('.')
            )))
        }
    };
    if def.handler.writes() && scope.read_only() {
        return Ok(ToolResult::error(read_only_refusal(def)));
    }
    let named = args.project_id();
    let refused = |project| Ok(ToolResult::error(out_of_reach(scope, project)));
    let run = match (def.handler, named) {
        (Handler::Read(run), Some(project)) => match scope.readable(project) {
            Some(proof) => run(&args, proof, ctx),
            None => return refused(project),
        },
        (Handler::Write(run), Some(project)) => match scope.writable(project) {
            Some(proof) => run(&args, proof, ctx),
            None => return refused(project),
        },
        (Handler::Reach(run), Some(project)) => match scope.readable(project) {
            Some(proof) => run(&args, proof.reach(), ctx),
            None => return refused(project),
        },
        (Handler::Reach(run), None) => run(&args, scope.reach(), ctx),
        (Handler::WriteReach(run), _) => match scope.write_reach() {
            Some(proof) => run(&args, proof, ctx),
            None => return Ok(ToolResult::error(read_only_refusal(def))),
        },
        (Handler::Read(_) | Handler::Write(_), None) => {
            return Err(Error::Internal {
                detail: format!("{} names no project_id parameter", def.name),
            })
        }
    };
    run.await
        .map_err(|e| e.in_tool(def.name, def.handler.writes()))
}

/// How a call leaves out the `project_id` its tool requires.
enum Unnamed {
    /// Not there at all, or null.
    Absent,
    /// An empty string: left out where the credential reaches one project, else refused.
    Empty,
}

/// Whether, and how, the call leaves out the `project_id` its tool requires.
fn unnamed_project(def: &ToolDef, arguments: Option<&Node<'_>>) -> Option<Unnamed> {
    let requires = def
        .params
        .iter()
        .any(|p| p.required && matches!(p.rule, args::Rule::ProjectId));
    // Arguments that are not an object are for `args::check` to refuse.
    let object = matches!(arguments, None | Some(Node::Null | Node::Object(_)));
    if !requires || !object {
        return None;
    }
    match arguments.and_then(|a| a.get(args::PROJECT_ID.name)) {
        None | Some(Node::Null) => Some(Unnamed::Absent),
        Some(given) if given.as_str() == Some("") => Some(Unnamed::Empty),
        Some(_) => None,
    }
}

/// The arguments with `project_id` set to the credential's one project (any non-object
/// arguments are left for `args::check` to refuse).
fn with_project<'a>(arguments: Option<&Node<'a>>, project: &str) -> Node<'a> {
    let mut members = match arguments {
        Some(Node::Object(members)) => members.clone(),
        Some(other) => return other.clone(),
        None => Vec::new(),
    };
    members.retain(|(name, _)| name != args::PROJECT_ID.name);
    members.push((
        args::PROJECT_ID.name.into(),
        Node::String(project.to_owned().into()),
    ));
    Node::Object(members)
}

/// How many projects the error of a call without `project_id` names before it counts the rest.
const NAMED_MAX: usize = 5;

/// The error of a call that leaves out `project_id` under a credential of several projects: it
/// names the first few it can reach, and how many more.
async fn which_project(def: &ToolDef, ctx: &Ctx<'_>) -> Result<ToolResult, Error> {
    let reach = ctx.caller.scope.reach();
    let (ids, total) = crate::store::first_project_ids(ctx.db, NAMED_MAX, reach)
        .await
        .map_err(|e| Error::from(e).in_tool(def.name, def.handler.writes()))?;
    let named: Vec<String> = ids.iter().map(|id| format!("\"{id}\"")).collect();
    let more = total - ids.len() as i64;
    let which = match (named.is_empty(), more > 0) {
        (true, _) => "none exists yet: name the one to create".to_owned(),
        (false, false) => format!("it reaches {}", named.join(", ")),
        (false, true) => format!("it reaches {} and {more} more", named.join(", ")),
    };
    Ok(ToolResult::error(format!(
        "{} needs a project_id: this connection reaches several projects, and {which}. Nothing \
         was read or written.",
        def.name
    )))
}

/// The refusal of a tool that writes, under a read-only token.
fn read_only_refusal(def: &ToolDef) -> String {
    let readers: Vec<&str> = ALL
        .iter()
        .filter(|t| !t.handler.writes())
        .map(|t| t.name)
        .collect();
    format!(
        "{} was refused: this token is read-only, so it can call {} only. Nothing was written.",
        def.name,
        readers.join(", ")
    )
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

    /// The annotation a client reads says what the handler's kind allows, and a handler that
    /// takes one project's proof names that project in a required parameter.
    #[test]
    fn handlers_claim_what_their_tools_declare() {
        for def in ALL {
            assert_eq!(
                def.annotations.read_only,
                !def.handler.writes(),
                "{}",
                def.name
            );
            let names_project = def
                .params
                .iter()
                .any(|p| p.name == "project_id" && p.required);
            let one_project = matches!(def.handler, Handler::Read(_) | Handler::Write(_));
            assert_eq!(names_project, one_project, "{}", def.name);
        }
    }

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
