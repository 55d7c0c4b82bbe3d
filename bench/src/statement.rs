//! The statement floors: bench/floor-worker running, as its one D1 query, the very statement
//! handoff-mcp sends for get_state or for add_task, on a database that holds what handoff-mcp's
//! holds. A tool's throughput and CPU divided by its own statement's floor leave out what the
//! data costs D1 (a write's transaction and index updates, a read's rows) and keep what the
//! Worker adds around it: reading the MCP request, the boundary, rendering and the reply.
//!
//! The statements are not written here: the core runs in-process over SQLite (as in `native`)
//! while its adapter keeps every batch, and what it sent is what the floor is given, so the
//! floor follows any change to a statement or to the schema. Its database gets the same state
//! by the same batches, posted by `load::seed_floor`, with the migrations applied by wrangler as
//! for handoff-mcp's own. Nothing here sends a request: the load client imports this module,
//! never the other way round.

use std::sync::OnceLock;

use handoff_mcp::store::Stmt;

use crate::native;
use crate::workload::{self, NUMBER};

/// The project the floor's add_task statement adds to, created by `load::seed_floor`. One for
/// the whole run: the statement's cost does not grow with its project's tasks (its lookup of an
/// identical open task is an index seek, and its anchor reads no task).
pub const ADD_PROJECT: &str = "bench-add-floor";

/// The floor's paths: one statement bound and run with `raw()`, or a batch.
pub const STATEMENT_PATH: &str = "/statement";
pub const BATCH_PATH: &str = "/batch";

/// What the core sent, as bodies for the floor's paths.
pub struct Captured {
    /// The batches that give the floor's database the bench's state, in order, each a JSON
    /// array of `{"sql", "params"}`.
    pub seed: Vec<String>,
    /// get_state's one statement, `{"sql", "params"}`.
    pub state: String,
    /// add_task's one statement, with `workload::NUMBER` where the task's id and its body take
    /// the request's number, so every request inserts a new task as handoff-mcp's do.
    pub add: String,
}

/// The statements, captured once per run.
pub fn captured() -> Result<&'static Captured, String> {
    static CAPTURED: OnceLock<Result<Captured, String>> = OnceLock::new();
    CAPTURED.get_or_init(capture).as_ref().map_err(Clone::clone)
}

fn capture() -> Result<Captured, String> {
    let server = native::Server::new();
    server.db.record();
    native::seed(&server, workload::STATE_PROJECT)?;
    server.call(&workload::set_north_star(ADD_PROJECT))?;
    let seed = server.db.take_recorded();

    server.call(&workload::get_state(workload::STATE_PROJECT))?;
    let state = alone(server.db.take_recorded(), "get_state")?;

    let reply = server.call(&workload::add_task(ADD_PROJECT, "main", workload::ADD_BODY))?;
    let add = alone(server.db.take_recorded(), "add_task")?;
    let id = workload::task_id(&reply).ok_or("add_task returned no task id")?;
    // The core's ids are 00000000-0000-4000-8000-…; these differ from every one of them.
    let numbered_id = format!("00000000-0000-4000-9000-{NUMBER}");
    let add = statement_json(&add).replace(&json_string(&id), &json_string(&numbered_id));
    if !add.contains(&numbered_id) || add.matches(NUMBER).count() != 2 {
        return Err(format!(
            "add_task's statement does not carry its id and body where expected: {add}"
        ));
    }
    Ok(Captured {
        seed: seed.iter().map(|batch| batch_json(batch)).collect(),
        state: statement_json(&state),
        add,
    })
}

/// The one statement of a tool call that made one batch of one statement.
fn alone(mut batches: Vec<Vec<Stmt>>, tool: &str) -> Result<Stmt, String> {
    match (batches.len(), batches.first().map(Vec::len)) {
        (1, Some(1)) => Ok(batches.remove(0).remove(0)),
        _ => Err(format!(
            "{tool} sent {} batches of {:?} statements; its floor needs one statement",
            batches.len(),
            batches.iter().map(Vec::len).collect::<Vec<_>>()
        )),
    }
}

fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// `{"sql":…,"params":[…]}`, the parameters as the Worker's D1 adapter hands them to JavaScript.
fn statement_json(stmt: &Stmt) -> String {
    format!(
        "{{\"sql\":{},\"params\":{}}}",
        json_string(stmt.query.sql),
        stmt.params_json()
    )
}

fn batch_json(batch: &[Stmt]) -> String {
    let all: Vec<String> = batch.iter().map(statement_json).collect();
    format!("[{}]", all.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captured_statements_are_the_tools_own() {
        let captured = captured().unwrap();
        let state: serde_json::Value = serde_json::from_str(&captured.state).unwrap();
        assert_eq!(state["sql"], handoff_mcp::store::LOAD_STATE.sql);
        assert_eq!(
            state["params"],
            serde_json::json!([workload::STATE_PROJECT])
        );
        let add: serde_json::Value =
            serde_json::from_str(&workload::numbered(&captured.add, 7)).unwrap();
        assert_eq!(add["sql"], handoff_mcp::store::INSERT_TASK.sql);
        assert_eq!(add["params"][0], "00000000-0000-4000-9000-7");
        assert_eq!(add["params"][1], ADD_PROJECT);
        assert_eq!(add["params"][2], workload::numbered(workload::ADD_BODY, 7));
        // The seed creates both projects, through the tools' own write batches.
        let seed = captured.seed.join("\n");
        assert!(seed.contains(ADD_PROJECT) && seed.contains(workload::STATE_PROJECT));
        for batch in &captured.seed {
            let parsed: serde_json::Value = serde_json::from_str(batch).unwrap();
            assert!(parsed.as_array().is_some_and(|all| !all.is_empty()));
        }
    }
}
