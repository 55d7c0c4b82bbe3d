//! A tool's tools/list entry, generated from its definition: the JSON Schema of its arguments,
//! its title, description and annotations. No outputSchema: a declared schema obliges
//! structuredContent, which would displace the text in front of the model (ARCHITECTURE.md).

use serde_json::{json, Map, Value as Json};

use super::args::{Rule, TASK_ID_MAX};
use super::ToolDef;
use crate::model::{Kind, PROJECT_ID_MAX};

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
