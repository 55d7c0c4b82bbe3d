//! A tool's tools/list entry, generated from its definition: the JSON Schema of its arguments,
//! its title, description and annotations. No outputSchema: a declared schema obliges
//! structuredContent, which would displace the text in front of the model (ARCHITECTURE.md).

use std::sync::LazyLock;

use serde_json::{json, Map, Value as Json};

use super::args::{Rule, TASK_ID_MAX};
use super::{ToolDef, ALL};
use crate::model::{Kind, PROJECT_ID_MAX};

/// The tools/list bodies, built once per isolate: every tool, and the read-only ones alone (for
/// a read-only token). The same for every era, since no tool has an outputSchema. A tool with a
/// `ui` resource names it for every client: a stateless server cannot remember what a 2025
/// client announced at initialize, and a client that renders no MCP Apps ignores `_meta` (the
/// result it gets is the same).
static TOOLS: LazyLock<Json> = LazyLock::new(|| list_body(|_| true));
static READ_ONLY_TOOLS: LazyLock<Json> = LazyLock::new(|| list_body(|t| t.annotations.read_only));

fn list_body(listed: impl Fn(&ToolDef) -> bool) -> Json {
    let list: Vec<Json> = ALL
        .iter()
        .filter(|t| listed(t))
        .map(|t| list_entry(t))
        .collect();
    json!({ "tools": list })
}

/// The tools/list body of a credential: every tool, or only the read-only ones.
pub fn list(read_only: bool) -> &'static Json {
    if read_only {
        &READ_ONLY_TOOLS
    } else {
        &TOOLS
    }
}

/// The tools/list entry of one tool.
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
            Rule::Text { blank_ok, max } => {
                schema["maxLength"] = json!(max);
                if !blank_ok {
                    schema["minLength"] = json!(1);
                }
            }
            Rule::OneOf(words) => schema["enum"] = json!(words),
            Rule::Kind => {
                let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
                schema["enum"] = json!(kinds);
            }
        }
        properties.insert(p.name.into(), schema);
    }
    let required: Vec<&str> = def
        .params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    let mut entry = json!({
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
    });
    // The MCP Apps key (not the flat `ui/resourceUri`, which the extension deprecates).
    if let Some(uri) = def.ui {
        entry["_meta"] = json!({"ui": {"resourceUri": uri}});
    }
    entry
}
