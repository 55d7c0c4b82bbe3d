//! Calling a tool and reading its result's shape; what each tool should say is the caller's business.

use serde_json::{json, Value};

use crate::checks::{ensure, expect_eq};
use crate::client::Session;

/// A `tools/call` result whose shape held: text content first, `isError` a boolean.
#[derive(Debug, Clone)]
pub struct ToolResult {
    pub is_error: bool,
    pub text: String,
    structured: Option<Value>,
    raw: Value,
}

impl ToolResult {
    fn parse(raw: Value) -> Result<ToolResult, String> {
        let first = &raw["content"][0];
        let shape = || format!("unexpected tools/call result shape: {raw}");
        if first["type"] != json!("text") {
            return Err(shape());
        }
        let text = first["text"].as_str().ok_or_else(shape)?.to_string();
        let is_error = raw
            .get("isError")
            .and_then(Value::as_bool)
            .ok_or_else(shape)?;
        let structured = raw.get("structuredContent").cloned();
        Ok(ToolResult {
            is_error,
            text,
            structured,
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

    /// A string field of `structuredContent`, such as the id add_task hands back.
    pub fn structured_str(&self, field: &str) -> Result<String, String> {
        self.structured
            .as_ref()
            .and_then(|structured| structured.get(field))
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("no string structuredContent.{field} in {}", self.raw))
    }
}

/// Calls one tool and checks the result's shape, leaving its meaning to the caller.
pub fn call(session: &mut dyn Session, name: &str, arguments: Value) -> Result<ToolResult, String> {
    let result = session.result("tools/call", json!({"name": name, "arguments": arguments}))?;
    ToolResult::parse(result)
}
