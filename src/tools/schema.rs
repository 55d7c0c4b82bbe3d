//! A tool's tools/list entry, generated from its definition: the JSON Schema of its arguments,
//! its title, description and annotations. No outputSchema: a declared schema obliges
//! structuredContent, which would displace the text in front of the model
//! (docs/tools.md, "What the model sees").

use std::sync::LazyLock;

use serde_json::{json, Map, Value as Json};

use super::args::{Rule, TASK_ID_MAX};
use super::{ToolDef, ALL};
use crate::model::{Kind, PROJECT_ID_MAX};
use crate::protocol::version::{self, Era};
use crate::protocol::{self, Cache};

/// The tools/list bodies, built once per isolate: every tool, or the read-only ones alone (for a
/// read-only credential), each for a credential of every project or of one (whose `project_id`
/// may be left out). The same for every era, since no tool has an outputSchema. A tool with a
/// `ui` resource names it for every client: a stateless server cannot remember what a 2025
/// client announced at initialize, and a client that renders no MCP Apps ignores `_meta` (the
/// result it gets is the same).
static TOOLS: LazyLock<Json> = LazyLock::new(|| list_body(false, false));
static READ_ONLY_TOOLS: LazyLock<Json> = LazyLock::new(|| list_body(true, false));
static ONE_PROJECT_TOOLS: LazyLock<Json> = LazyLock::new(|| list_body(false, true));
static ONE_PROJECT_READ_ONLY_TOOLS: LazyLock<Json> = LazyLock::new(|| list_body(true, true));

fn list_body(read_only: bool, one_project: bool) -> Json {
    let list: Vec<Json> = ALL
        .iter()
        .filter(|t| !read_only || t.annotations.read_only)
        .map(|t| list_entry(t, one_project))
        .collect();
    json!({ "tools": list })
}

/// The tools/list body of a credential: every tool, or only the read-only ones; with
/// `one_project`, `project_id` is optional.
pub fn list(read_only: bool, one_project: bool) -> &'static Json {
    match (read_only, one_project) {
        (false, false) => &TOOLS,
        (true, false) => &READ_ONLY_TOOLS,
        (false, true) => &ONE_PROJECT_TOOLS,
        (true, true) => &ONE_PROJECT_READ_ONLY_TOOLS,
    }
}

/// The same four bodies in the 2026-07-28 revision's envelope (`protocol::envelope`), built once
/// per isolate too, so a tools/list copies no tree of JSON values: it is written as it stands.
static ENVELOPED: LazyLock<[Json; 4]> = LazyLock::new(|| {
    [(false, false), (true, false), (false, true), (true, true)].map(|(read_only, one)| {
        let body = list(read_only, one).clone();
        protocol::envelope(body, Era::Stateless, Some(Cache::PerScope))
    })
});

/// The whole tools/list result of a credential in `era`: the body, in its envelope where the era
/// has one.
pub fn result(era: Era, read_only: bool, one_project: bool) -> &'static Json {
    if !version::has_result_type(era) {
        return list(read_only, one_project);
    }
    &ENVELOPED[usize::from(read_only) + 2 * usize::from(one_project)]
}

/// How `project_id` is described to a credential that reaches one project, where it is optional.
pub const ONE_PROJECT_ID: &str = "The project's id. Optional: this connection reaches one \
    project, which it means when left out.";

/// The tools/list entry of one tool; with `one_project`, its `project_id` is optional.
pub fn list_entry(def: &ToolDef, one_project: bool) -> Json {
    let mut properties = Map::new();
    for p in def.params {
        let project_id = matches!(p.rule, Rule::ProjectId);
        let description = match one_project && project_id {
            true => ONE_PROJECT_ID,
            false => p.description,
        };
        let mut schema = json!({"type": "string", "description": description});
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
        .filter(|p| p.required && !(one_project && matches!(p.rule, Rule::ProjectId)))
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
    if def.always_load {
        entry["_meta"]["anthropic/alwaysLoad"] = json!(true);
    }
    entry
}
