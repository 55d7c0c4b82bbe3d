//! A whole project out and in: the export's read (four statements, one batch) and the
//! import's write (one atomic batch that a project or task id already taken fails whole, so
//! nothing is written), then, only after such a failure, the read that says which id it was.
//! The rows travel into the import as JSON arrays, one statement per table whatever their
//! number. No document format here (export.rs has it).

use serde_json::json;

use super::{each, first, int, kind, opt_text, text, Query, Row, Sql, Stmt, StoreError, Value};
use crate::auth::scope::{Readable, Writable};
use crate::json_write;
use crate::model::{
    Event, EventKind, Export, ExportEvent, ExportFocus, ExportProject, ExportTask, Kind,
};

const EXPORT_PROJECT: Query = Query::rows(
    "SELECT id, north_star, created_at, updated_at, updated_by FROM project WHERE id = ?1",
    &["id", "north_star", "created_at", "updated_at", "updated_by"],
);
const EXPORT_FOCUS: Query = Query::rows(
    "SELECT statement, why, done_when, created_at, updated_at, updated_by FROM focus \
     WHERE project_id = ?1",
    &[
        "statement",
        "why",
        "done_when",
        "created_at",
        "updated_at",
        "updated_by",
    ],
);
/// Every task of the project in insertion order: a scan of the task table in rowid order. An
/// index on project_id alone would serve it, but SQLite, which has no statistics here, then
/// prefers it to `task_open_deferred` for get_state, whose cost would grow with done tasks.
pub const EXPORT_TASKS: Query = Query::rows(
    "SELECT id, body, kind, status, created_at, created_by, updated_at, completed_at, \
     completed_by, evidence FROM task WHERE project_id = ?1 ORDER BY rowid",
    &[
        "id",
        "body",
        "kind",
        "status",
        "created_at",
        "created_by",
        "updated_at",
        "completed_at",
        "completed_by",
        "evidence",
    ],
);
/// The whole history oldest first, served by `event_by_project`.
pub const EXPORT_EVENTS: Query = Query::rows(
    "SELECT at, what, value, note, done_when, task_id, kind, client FROM event \
     WHERE project_id = ?1 ORDER BY seq",
    &[
        "at",
        "what",
        "value",
        "note",
        "done_when",
        "task_id",
        "kind",
        "client",
    ],
);

/// Reads everything a project holds in one batch. `None` when it does not exist.
pub async fn load_export(
    db: &dyn Sql,
    project: Readable<'_>,
) -> Result<Option<Export>, StoreError> {
    let project_id = project.id();
    let stmt = |query| Stmt::new(query, vec![project_id.into()]);
    let results = db
        .batch(vec![
            stmt(EXPORT_PROJECT),
            stmt(EXPORT_FOCUS),
            stmt(EXPORT_TASKS),
            stmt(EXPORT_EVENTS),
        ])
        .await?;
    let part = |i: usize| results.get(i).ok_or(StoreError::Decode("export"));
    let Some(row) = first(&results)?.first() else {
        return Ok(None);
    };
    let project = ExportProject {
        id: text(row, "id")?.to_owned(),
        north_star: text(row, "north_star")?.to_owned(),
        created_at: int(row, "created_at")?,
        updated_at: int(row, "updated_at")?,
        updated_by: owned(opt_text(row, "updated_by")?),
    };
    let focus = match part(1)?.first() {
        Some(row) => Some(ExportFocus {
            statement: text(row, "statement")?.to_owned(),
            why: owned(opt_text(row, "why")?),
            done_when: owned(opt_text(row, "done_when")?),
            created_at: int(row, "created_at")?,
            updated_at: int(row, "updated_at")?,
            updated_by: owned(opt_text(row, "updated_by")?),
        }),
        None => None,
    };
    let tasks = each(part(2)?, |row| {
        Ok(ExportTask {
            id: text(row, "id")?.to_owned(),
            body: text(row, "body")?.to_owned(),
            kind: kind(row)?,
            done: text(row, "status")? == "done",
            created_at: int(row, "created_at")?,
            created_by: owned(opt_text(row, "created_by")?),
            updated_at: int(row, "updated_at")?,
            completed_at: int(row, "completed_at")?,
            completed_by: owned(opt_text(row, "completed_by")?),
            evidence: owned(opt_text(row, "evidence")?),
        })
    })?;
    let history = each(part(3)?, event)?;
    Ok(Some(Export {
        project,
        focus,
        tasks,
        history,
    }))
}

fn owned(text: Option<&str>) -> Option<String> {
    text.map(str::to_owned)
}

fn event(row: &Row) -> Result<ExportEvent, StoreError> {
    let what = match (text(row, "what")?, opt_text(row, "kind")?) {
        ("north_star", _) => EventKind::NorthStar,
        ("focus", _) => EventKind::Focus,
        ("completed", Some(k)) => {
            EventKind::Completed(Kind::parse(k).ok_or(StoreError::Decode("kind"))?)
        }
        _ => return Err(StoreError::Decode("what")),
    };
    Ok(ExportEvent {
        event: Event {
            at_ms: int(row, "at")?,
            what,
            value: text(row, "value")?.to_owned(),
            note: owned(opt_text(row, "note")?),
            done_when: owned(opt_text(row, "done_when")?),
            client: text(row, "client")?.to_owned(),
        },
        task_id: owned(opt_text(row, "task_id")?),
    })
}

/// The project row; a project of that id already there fails it, and with it the batch.
const IMPORT_PROJECT: Query = Query::no_rows(
    "INSERT INTO project (id, name, north_star, created_at, updated_at, updated_by) \
     VALUES (?1, ?1, ?2, ?3, ?4, ?5)",
);
const IMPORT_FOCUS: Query = Query::no_rows(
    "INSERT INTO focus (project_id, statement, why, done_when, created_at, updated_at, updated_by) \
     SELECT ?1, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 \
     FROM json_each(?2)",
);
/// Every task from one JSON array of arrays, in its order (so rowid order is the document's);
/// an id already taken fails the batch.
const IMPORT_TASKS: Query = Query::no_rows(
    "INSERT INTO task (id, project_id, body, kind, demoted, status, created_at, created_by, \
     updated_at, completed_at, completed_by, evidence) \
     SELECT value ->> 0, ?1, value ->> 1, value ->> 2, value ->> 2 <> 'main', value ->> 3, \
     value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9 \
     FROM json_each(?2) ORDER BY key",
);
const IMPORT_EVENTS: Query = Query::no_rows(
    "INSERT INTO event (project_id, at, what, value, note, done_when, task_id, kind, client) \
     SELECT ?1, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, \
     value ->> 6, value ->> 7 FROM json_each(?2) ORDER BY key",
);
/// After a failed import: the project id, if a project has it, and one task id of the
/// document (`?2`, a JSON array of ids) that a task already has.
const IMPORT_CONFLICT: Query = Query::rows(
    "SELECT 'project' AS what, id FROM project WHERE id = ?1 \
     UNION ALL SELECT * FROM (SELECT 'task', id FROM task \
     WHERE id IN (SELECT value FROM json_each(?2)) LIMIT 1)",
    &["what", "id"],
);

/// What an import came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Imported {
    Written,
    /// A project of that id exists; nothing was written.
    ProjectExists,
    /// A task of another project (or of this server's past) has this id; nothing was written.
    TaskTaken(String),
}

/// Writes a whole project in one atomic batch, ids and times as they are. A project or a
/// task id already taken fails the batch whole; a second, read-only statement then says which.
/// The project is written under `into`'s id (the document's own, which the caller's scope was
/// asked about).
pub async fn import(
    db: &dyn Sql,
    into: Writable<'_>,
    export: &Export,
) -> Result<Imported, StoreError> {
    let p = &export.project;
    let id = || Value::from(into.id());
    let int = |n: Option<i64>| n.map_or(Value::Null, Value::Int);
    let focus = export.focus.iter().map(|f| {
        json!([
            f.statement,
            f.why,
            f.done_when,
            f.created_at,
            f.updated_at,
            f.updated_by
        ])
    });
    let tasks = export.tasks.iter().map(|t| {
        json!([
            t.id,
            t.body,
            t.kind.as_str(),
            if t.done { "done" } else { "open" },
            t.created_at,
            t.created_by,
            t.updated_at,
            t.completed_at,
            t.completed_by,
            t.evidence
        ])
    });
    let events = export.history.iter().map(|e| {
        let (what, kind) = what(e.event.what);
        json!([
            e.event.at_ms,
            what,
            e.event.value,
            e.event.note,
            e.event.done_when,
            e.task_id,
            kind,
            e.event.client
        ])
    });
    let written = db
        .batch(vec![
            Stmt::new(
                IMPORT_PROJECT,
                vec![
                    id(),
                    p.north_star.as_str().into(),
                    int(p.created_at),
                    int(p.updated_at),
                    p.updated_by.as_deref().into(),
                ],
            ),
            Stmt::new(IMPORT_FOCUS, vec![id(), array(focus)]),
            Stmt::new(IMPORT_TASKS, vec![id(), array(tasks)]),
            Stmt::new(IMPORT_EVENTS, vec![id(), array(events)]),
        ])
        .await;
    let Err(failure) = written else {
        return Ok(Imported::Written);
    };
    let ids = export.tasks.iter().map(|t| json!(t.id));
    let conflict = db
        .batch(vec![Stmt::new(IMPORT_CONFLICT, vec![id(), array(ids)])])
        .await?;
    let rows = first(&conflict)?;
    let mut taken = None;
    for row in rows {
        match text(row, "what")? {
            "project" => return Ok(Imported::ProjectExists),
            _ => taken = Some(text(row, "id")?.to_owned()),
        }
    }
    taken.map(Imported::TaskTaken).ok_or(failure)
}

/// Rows as one JSON text parameter, an array of them.
fn array(rows: impl Iterator<Item = serde_json::Value>) -> Value {
    Value::Text(json_write::to_text(&serde_json::Value::Array(
        rows.collect(),
    )))
}

/// An event's `what` and `kind` columns.
fn what(what: EventKind) -> (&'static str, Option<&'static str>) {
    match what {
        EventKind::NorthStar => ("north_star", None),
        EventKind::Focus => ("focus", None),
        EventKind::Completed(kind) => ("completed", Some(kind.as_str())),
    }
}
