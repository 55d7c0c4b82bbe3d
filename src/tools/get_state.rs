//! get_state: the project's North Star, focus and open deferred tasks, as the contract text.

use serde_json::json;

use super::{Annotations, Args, Outcome, Param, Rule, ToolDef};
use crate::render;
use crate::store::{self, Sql, StoreError};

pub const DEF: ToolDef = ToolDef {
    name: "get_state",
    title: "Get project state",
    description: &[
        "Returns where a project stands, in a fixed format: its North Star (🎯), the one focus to \
         work on now (▶ 本丸), and the deferred cleanup/record tasks (後処理) that wait until the \
         North Star is reached. Call it at the start of every chat with the project's id. Its \
         structured content also gives each deferred task's id for complete_task. ",
        render::DESCRIPTION_TAIL,
    ],
    params: &[Param {
        name: "project_id",
        description: "The project's id, e.g. \"handoff-mcp\".",
        rule: Rule::ProjectId,
        required: true,
    }],
    annotations: Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
    },
    output_schema: r#"{"type":"object","properties":{
        "project_id":{"type":"string"},
        "north_star":{"type":"string"},
        "focus":{"anyOf":[{"type":"null"},{"type":"object","properties":{
            "statement":{"type":"string"},"why":{"type":["string","null"]}},"required":["statement","why"]}]},
        "deferred":{"type":"array","items":{"type":"object","properties":{
            "id":{"type":"string"},"kind":{"type":"string","enum":["cleanup","record"]},"body":{"type":"string"}},
            "required":["id","kind","body"]}}},
        "required":["project_id","north_star","focus","deferred"]}"#,
};

pub async fn run(args: &Args, db: &impl Sql) -> Result<Outcome, StoreError> {
    let project_id = args.get("project_id");
    let Some(state) = store::load_state(db, project_id).await? else {
        return Ok(Outcome::error(format!(
            "No project \"{project_id}\" yet. Call set_north_star with this project_id to create it."
        )));
    };
    let structured = json!({
        "project_id": state.project_id,
        "north_star": state.north_star,
        "focus": state.focus.as_ref().map(|f| json!({"statement": f.statement, "why": f.why})),
        "deferred": state.deferred.iter()
            .map(|t| json!({"id": t.id, "kind": t.kind.as_str(), "body": t.body}))
            .collect::<Vec<_>>(),
    });
    Ok(Outcome::ok(render::render(&state), structured))
}
