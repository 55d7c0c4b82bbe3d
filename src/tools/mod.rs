//! The five tools. One `ToolDef` per tool drives tools/list, argument checking and tools/call;
//! each tool's file holds its definition and its `run`. Tools return `Outcome`s; they never
//! build JSON-RPC errors (dispatch.rs does) and never see HTTP.

mod add_task;
mod complete_task;
mod get_state;
mod set_focus;
mod set_north_star;

use serde_json::{json, Map, Value as Json};

use crate::model::Anchor;
use crate::render;
use crate::store::{Sql, StoreError};

/// Every tool, in the order tools/list shows them.
pub const ALL: [&ToolDef; 5] = [
    &get_state::DEF,
    &set_north_star::DEF,
    &set_focus::DEF,
    &add_task::DEF,
    &complete_task::DEF,
];

/// Longest project id; ids are also used inside resource URIs, hence the short ASCII rule.
pub const PROJECT_ID_MAX: usize = 64;
/// Longest task id accepted (ours are 36-character UUIDs).
pub const TASK_ID_MAX: usize = 64;
/// Longest stored text (north star, focus statement, why, task body), in characters.
pub const TEXT_MAX: usize = 2000;

pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    /// Joined without separator; split so get_state can end with the contract sentence.
    pub description: &'static [&'static str],
    pub params: &'static [Param],
    pub annotations: Annotations,
}

pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

pub struct Param {
    pub name: &'static str,
    pub description: &'static str,
    pub rule: Rule,
    pub required: bool,
}

#[derive(Clone, Copy)]
pub enum Rule {
    /// 1–64 ASCII letters, digits, '-', '_', '.', starting with a letter or digit.
    ProjectId,
    /// Any non-blank id up to `TASK_ID_MAX` characters.
    TaskId,
    /// Text up to `TEXT_MAX` characters; `blank_ok` lets an optional text be empty (= absent).
    Text { blank_ok: bool },
    /// One of main, cleanup, record.
    Kind,
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

/// Hands out fresh task ids. The Worker passes random UUIDs; tests pass a counter.
pub trait NewId {
    fn new_id(&self) -> String;
}

impl<F: Fn() -> String> NewId for F {
    fn new_id(&self) -> String {
        self()
    }
}

pub fn find(name: &str) -> Option<&'static ToolDef> {
    ALL.into_iter().find(|t| t.name == name)
}

/// Runs a tool whose arguments are already checked. Storage failures are returned as errors for
/// dispatch to turn into a JSON-RPC internal error.
pub async fn run(
    def: &ToolDef,
    args: &Args,
    db: &impl Sql,
    ids: &impl NewId,
) -> Result<Outcome, StoreError> {
    match def.name {
        "get_state" => get_state::run(args, db).await,
        "set_north_star" => set_north_star::run(args, db).await,
        "set_focus" => set_focus::run(args, db).await,
        "add_task" => add_task::run(args, db, ids).await,
        "complete_task" => complete_task::run(args, db).await,
        _ => unreachable!("every ToolDef in ALL has a run arm"),
    }
}

/// Checked arguments: every present value is a string that passed its rule.
pub struct Args(Map<String, Json>);

impl Args {
    /// A required argument (present after `check`).
    pub fn get(&self, name: &str) -> &str {
        self.opt(name).unwrap_or_default()
    }

    /// An optional argument; blank counts as absent.
    pub fn opt(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .and_then(Json::as_str)
            .filter(|s| !crate::render::is_blank(s))
    }
}

/// Checks `arguments` against the tool's parameters. The error is a sentence for the model,
/// naming the argument, the rule and what was received.
pub fn check(def: &ToolDef, arguments: Option<&Json>) -> Result<Args, String> {
    let names = || {
        def.params
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let empty = Map::new();
    let given = match arguments {
        None | Some(Json::Null) => &empty,
        Some(Json::Object(map)) => map,
        Some(other) => {
            return Err(format!(
                "arguments must be an object with {}, got {}",
                names(),
                type_name(other)
            ))
        }
    };
    if let Some(unknown) = given
        .keys()
        .find(|k| def.params.iter().all(|p| p.name != k.as_str()))
    {
        return Err(format!(
            "unknown argument \"{}\"; {} takes only: {}",
            preview(unknown),
            def.name,
            names()
        ));
    }
    let mut checked = Map::new();
    for param in def.params {
        match given.get(param.name) {
            None | Some(Json::Null) if param.required => {
                return Err(format!(
                    "missing required argument \"{}\": {}",
                    param.name, param.description
                ))
            }
            None | Some(Json::Null) => {}
            Some(Json::String(s)) => {
                check_rule(param, s)?;
                checked.insert(param.name.into(), Json::String(s.clone()));
            }
            Some(other) => {
                return Err(format!(
                    "argument \"{}\" must be a string, got {}",
                    param.name,
                    type_name(other)
                ))
            }
        }
    }
    Ok(Args(checked))
}

fn check_rule(param: &Param, value: &str) -> Result<(), String> {
    let name = param.name;
    match param.rule {
        Rule::ProjectId => {
            if !is_project_id(value) {
                return Err(format!(
                    "{name} must be 1-{PROJECT_ID_MAX} characters of ASCII letters, digits, '-', '_' or '.', \
                     starting with a letter or digit; got \"{}\"",
                    preview(value)
                ));
            }
        }
        Rule::TaskId => {
            if value.trim().is_empty() {
                return Err(format!(
                    "{name} is empty; pass the task_id that add_task returned"
                ));
            }
            if value.chars().count() > TASK_ID_MAX {
                return Err(format!(
                    "{name} is longer than {TASK_ID_MAX} characters, so no task has it"
                ));
            }
        }
        Rule::Text { blank_ok } => {
            if !blank_ok && crate::render::is_blank(value) {
                return Err(format!("{name} is empty; {}", param.description));
            }
            let chars = value.chars().count();
            if chars > TEXT_MAX {
                return Err(format!(
                    "{name} is {chars} characters long; the limit is {TEXT_MAX}"
                ));
            }
            if let Some(c) = value
                .chars()
                .find(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
            {
                return Err(format!(
                    "{name} contains the control character U+{:04X}; only tabs and line breaks are allowed",
                    u32::from(c)
                ));
            }
        }
        Rule::Kind => {
            if crate::model::Kind::parse(value).is_none() {
                return Err(format!(
                    "{name} must be one of main, cleanup, record; got \"{}\"",
                    preview(value)
                ));
            }
        }
    }
    Ok(())
}

/// The project id rule: 1-64 ASCII letters, digits, '-', '_', '.', starting with a letter or digit.
/// Ids also appear inside resource URIs, which this keeps unambiguous.
pub fn is_project_id(value: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    (1..=PROJECT_ID_MAX).contains(&value.len())
        && value.chars().all(ok_char)
        && value.starts_with(|c: char| c.is_ascii_alphanumeric())
}

/// At most 40 characters of untrusted input, for echoing inside an error sentence.
fn preview(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(40)
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect();
    if s.chars().nth(40).is_some() {
        out.push('…');
    }
    out
}

fn type_name(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// The tools/list entry of one tool. No tool declares an outputSchema: a declared schema obliges
/// structuredContent, which would displace the text in front of the model.
pub fn list_entry(def: &ToolDef) -> Json {
    let mut properties = Map::new();
    for p in def.params {
        let mut schema = json!({"type": "string", "description": p.description});
        match p.rule {
            Rule::ProjectId => {
                schema["pattern"] = json!("^[A-Za-z0-9][A-Za-z0-9._-]*$");
                schema["maxLength"] = json!(PROJECT_ID_MAX);
            }
            Rule::TaskId => schema["maxLength"] = json!(TASK_ID_MAX),
            Rule::Text { blank_ok } => {
                schema["maxLength"] = json!(TEXT_MAX);
                if !blank_ok {
                    schema["minLength"] = json!(1);
                }
            }
            Rule::Kind => schema["enum"] = json!(["main", "cleanup", "record"]),
        }
        properties.insert(p.name.into(), schema);
    }
    let required: Vec<&str> = def
        .params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    json!({
        "name": def.name,
        "title": def.title,
        "description": def.description.concat(),
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        },
        "annotations": {
            "title": def.title,
            "readOnlyHint": def.annotations.read_only,
            "destructiveHint": def.annotations.destructive,
            "idempotentHint": def.annotations.idempotent,
            "openWorldHint": false,
        },
    })
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
