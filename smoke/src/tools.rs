//! Calling a tool and reading its result's shape; what each tool should say is the caller's business.

use serde_json::{json, Value};

use crate::checks::{ensure, expect_eq};
use crate::client::Session;

/// A `tools/call` result whose shape held: only text items, at least one, `isError` a boolean,
/// and no `structuredContent` (a client like Claude Code would show the model that instead of
/// the text, so everything the model needs must be in the text).
#[derive(Debug, Clone)]
pub struct ToolResult {
    pub is_error: bool,
    pub text: String,
    pub texts: Vec<String>,
    raw: Value,
}

impl ToolResult {
    fn parse(raw: Value) -> Result<ToolResult, String> {
        let shape = || format!("unexpected tools/call result shape: {raw}");
        let texts = raw["content"]
            .as_array()
            .filter(|items| !items.is_empty())
            .ok_or_else(shape)?
            .iter()
            .map(|item| match (&item["type"], item["text"].as_str()) {
                (t, Some(text)) if *t == json!("text") => Ok(text.to_string()),
                _ => Err(shape()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let is_error = raw
            .get("isError")
            .and_then(Value::as_bool)
            .ok_or_else(shape)?;
        if raw.get("structuredContent").is_some() {
            return Err(format!("structuredContent would hide the text: {raw}"));
        }
        Ok(ToolResult {
            is_error,
            text: texts[0].clone(),
            texts,
            raw,
        })
    }

    /// The tool ran and succeeded.
    pub fn expect_ok(&self) -> Result<(), String> {
        ensure(!self.is_error, || {
            format!("expected isError false, got {}", self.raw)
        })
    }

    /// The tool ran and refused, which is the answer for bad arguments such as blank text.
    pub fn expect_tool_error(&self) -> Result<(), String> {
        ensure(self.is_error, || {
            format!("expected isError true, got {}", self.raw)
        })
    }

    /// The first text content, byte for byte.
    pub fn expect_text(&self, expected: &str) -> Result<(), String> {
        expect_eq("content[0].text", expected, self.text.as_str())
    }

    /// Every text item, byte for byte.
    pub fn expect_texts(&self, expected: &[&str]) -> Result<(), String> {
        expect_eq(
            "content texts",
            &expected.join("\n<next item>\n"),
            &self.texts.join("\n<next item>\n"),
        )
    }

    /// The id add_task reports in its text: `Added {kind} task {id} to project …`, as a model
    /// would read it.
    pub fn added_task_id(&self) -> Result<String, String> {
        self.text
            .strip_prefix("Added ")
            .and_then(|rest| rest.split_once(" task "))
            .and_then(|(_, rest)| rest.split_once(' '))
            .map(|(id, _)| id.to_string())
            .ok_or_else(|| format!("no task id in add_task's text: {:?}", self.text))
    }

    /// The id of the task an add_task call names, new (`Added {kind} task {id} …`) or already
    /// open (`… already there: task {id} in project …`).
    pub fn task_id(&self) -> Result<String, String> {
        if let Some((_, rest)) = self.text.split_once(" already there: task ") {
            return rest
                .split_once(' ')
                .map(|(id, _)| id.to_string())
                .ok_or_else(|| format!("no task id in add_task's text: {:?}", self.text));
        }
        self.added_task_id()
    }

    /// get_state's reference block (its second text item), parsed as a model would read it:
    /// `(task_id, kind, body)` from each `task_id={id} [{kind}] {body}` line.
    pub fn reference_tasks(&self) -> Result<Vec<(String, String, String)>, String> {
        let block = self
            .texts
            .get(1)
            .ok_or_else(|| format!("no reference block after the state text: {}", self.raw))?;
        Ok(block
            .lines()
            .filter_map(|line| {
                let (id, rest) = line.strip_prefix("task_id=")?.split_once(" [")?;
                let (kind, body) = rest.split_once("] ")?;
                Some((id.to_string(), kind.to_string(), body.to_string()))
            })
            .collect())
    }
}

/// Calls one tool and checks the result's shape, leaving its meaning to the caller.
pub fn call(session: &mut dyn Session, name: &str, arguments: Value) -> Result<ToolResult, String> {
    let result = session.result("tools/call", json!({"name": name, "arguments": arguments}))?;
    ToolResult::parse(result)
}
