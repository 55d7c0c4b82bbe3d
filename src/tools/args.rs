//! Tool arguments: each parameter's rule, checking `arguments` against a tool's parameters, and
//! typed access to the checked values. A refusal is a sentence for the model naming the
//! argument, the rule and what was received. No storage and no wire envelope here.

use super::ToolDef;
use crate::json_read::Node;
use crate::model::{self, Kind, PROJECT_ID_MAX};
use crate::render::{self, preview};

/// Longest task id accepted (ours are 36-character UUIDs).
pub const TASK_ID_MAX: usize = 64;
/// Longest stored text (north star, focus statement, why, done-when, evidence), in characters.
/// With `BODY_MAX` and `model::OPEN_DEFERRED_MAX` it keeps get_state within
/// `render::STATE_BUDGET` (docs/http.md, "Input rules").
pub const TEXT_MAX: usize = 1000;
/// Longest task body, in characters: get_state shows each open deferred task's body twice (the
/// list and the reference block), up to `model::OPEN_DEFERRED_MAX` of them.
pub const BODY_MAX: usize = 250;

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
    /// Text up to `max` characters (`TEXT_MAX` or `BODY_MAX`); `blank_ok` lets an optional text
    /// be empty (= absent).
    Text { blank_ok: bool, max: usize },
    /// One of main, cleanup, record.
    Kind,
    /// Exactly one of these words.
    OneOf(&'static [&'static str]),
}

/// The `project_id` parameter every project tool takes.
pub const PROJECT_ID: Param = Param {
    name: "project_id",
    description: "The project's id, e.g. \"handoff-mcp\".",
    rule: Rule::ProjectId,
    required: true,
};

/// Checked arguments of one tool: every present value is a string that passed its rule. Read
/// them through the tool's own `Param` constants, so a misspelt name does not compile, and a
/// parameter of another tool is a loud bug, never an empty string.
pub struct Args {
    tool: &'static ToolDef,
    values: Vec<(&'static str, String)>,
}

impl Args {
    /// A required argument (present after `check`).
    pub fn get(&self, param: &Param) -> &str {
        assert!(
            param.required,
            "{} is optional: read it with opt",
            param.name
        );
        self.value(param).unwrap_or_default()
    }

    /// An optional argument; blank counts as absent.
    pub fn opt(&self, param: &Param) -> Option<&str> {
        self.value(param).filter(|s| !render::is_blank(s))
    }

    /// The project the call names, if its tool takes one (every tool but complete_task).
    pub fn project_id(&self) -> Option<&str> {
        let param = self
            .tool
            .params
            .iter()
            .find(|p| matches!(p.rule, Rule::ProjectId))?;
        self.value(param)
    }

    /// kind, already checked against `Rule::Kind`.
    pub fn kind(&self, param: &Param) -> Kind {
        Kind::parse(self.get(param)).expect("checked by Rule::Kind")
    }

    fn value(&self, param: &Param) -> Option<&str> {
        assert!(
            self.tool.params.iter().any(|p| p.name == param.name),
            "{} is not an argument of {}",
            param.name,
            self.tool.name
        );
        self.values
            .iter()
            .find(|(name, _)| *name == param.name)
            .map(|(_, value)| value.as_str())
    }
}

/// Checks `arguments` against the tool's parameters.
pub fn check(def: &'static ToolDef, arguments: Option<&Node>) -> Result<Args, String> {
    let names = || {
        def.params
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let given = match arguments {
        None | Some(Node::Null) => &[][..],
        Some(Node::Object(members)) => members.as_slice(),
        Some(other) => {
            return Err(format!(
                "arguments must be an object with {}, got {}",
                names(),
                type_name(other)
            ))
        }
    };
    if let Some((unknown, _)) = given
        .iter()
        .find(|(k, _)| def.params.iter().all(|p| p.name != k))
    {
        return Err(format!(
            "unknown argument \"{}\"; {} takes only: {}",
            preview(unknown),
            def.name,
            names()
        ));
    }
    let mut values = Vec::with_capacity(def.params.len());
    for param in def.params {
        // A name given twice reads as its last value, as everywhere in a request (json_read.rs).
        let value = given.iter().rev().find(|(k, _)| k == param.name);
        match value.map(|(_, v)| v) {
            None | Some(Node::Null) if param.required => {
                return Err(format!(
                    "missing required argument \"{}\": {}",
                    param.name, param.description
                ))
            }
            None | Some(Node::Null) => {}
            Some(Node::String(s)) => {
                check_rule(param, s)?;
                values.push((param.name, s.as_ref().to_owned()));
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
    Ok(Args { tool: def, values })
}

fn check_rule(param: &Param, value: &str) -> Result<(), String> {
    let name = param.name;
    match param.rule {
        Rule::ProjectId => {
            if !model::is_project_id(value) {
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
        Rule::Text { blank_ok, max } => {
            if !blank_ok && render::is_blank(value) {
                return Err(format!("{name} is empty; {}", param.description));
            }
            let chars = value.chars().count();
            if chars > max {
                return Err(format!(
                    "{name} is {chars} characters long; the limit is {max}"
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
        Rule::OneOf(words) => {
            if !words.contains(&value) {
                return Err(format!(
                    "{name} must be one of {}; got \"{}\"",
                    words.join(", "),
                    preview(value)
                ));
            }
        }
        Rule::Kind => {
            if Kind::parse(value).is_none() {
                return Err(format!(
                    "{name} must be one of main, cleanup, record; got \"{}\"",
                    preview(value)
                ));
            }
        }
    }
    Ok(())
}

fn type_name(v: &Node) -> &'static str {
    match v {
        Node::Null => "null",
        Node::Bool(_) => "a boolean",
        Node::Number(_) => "a number",
        Node::String(_) => "a string",
        Node::Array(_) => "an array",
        Node::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools;

    #[test]
    fn reading_another_tool_s_argument_is_a_bug_not_an_empty_string() {
        let get_state = tools::find("get_state").unwrap();
        let set_north_star = tools::find("set_north_star").unwrap();
        let text = json!({"project_id": "p"}).to_string();
        let args = check(get_state, Some(&Node::parse(text.as_bytes()).unwrap())).unwrap();
        let read = std::panic::catch_unwind(|| args.get(&set_north_star.params[1]).to_owned());
        let payload = read.expect_err("reading another tool's argument panics");
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or(payload.downcast_ref::<&str>().copied());
        assert_eq!(message, Some("text is not an argument of get_state"));
    }

    #[test]
    fn typed_reads() {
        let add = tools::find("add_task").unwrap();
        let text = json!({"project_id": "p", "body": "b", "kind": "record"}).to_string();
        let args = check(add, Some(&Node::parse(text.as_bytes()).unwrap())).unwrap();
        assert_eq!(args.get(&PROJECT_ID), "p");
        assert_eq!(args.kind(&add.params[2]), Kind::Record);
    }
}
