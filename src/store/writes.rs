//! The tools' writes, each one batch: a North Star set (the project made when new), the focus
//! set, a task added, a task completed; each records its history event in the same batch and
//! ends with a read of the project's 🎯 and ▶ lines as they now stand (`anchor`), so a write's
//! answer needs no second round trip. Every existence and sameness check rides in the statement
//! that writes (no read-then-write), and every batch is safe to send again.

use super::{first, int, kind, opt_text, rows_from_json, stamp, text, Change, Query, Row, Sql};
use super::{Stmt, StoreError, Value};
use crate::auth::scope::{Writable, WriteReach};
use crate::model::{Anchor, Focus, Kind, OPEN_DEFERRED_MAX};

/// The project, unless this very call created it (`?2`, `?3`: its `Change`): the retry of a
/// set_north_star whose first attempt committed finds its own project, which is still "created".
const PROJECT_EXISTS: Query = Query::rows(
    "SELECT 1 AS one FROM project WHERE id = ?1 AND NOT (created_at IS ?2 AND updated_by IS ?3)",
    &["one"],
);
/// A North Star event, unless the project already has exactly this North Star. Runs before the
/// upsert, so "already" means before this write.
const NORTH_STAR_EVENT: Query = Query::no_rows(
    "INSERT INTO event (project_id, at, what, value, client) \
     SELECT ?1, ?3, 'north_star', ?2, ?4 \
     WHERE NOT EXISTS (SELECT 1 FROM project WHERE id = ?1 AND north_star = ?2)",
);
/// Creates the project or sets its North Star. Setting the same text again still counts as set
/// now (a confirmation), though the history records no change.
const UPSERT_NORTH_STAR: Query = Query::no_rows(
    "INSERT INTO project (id, name, north_star, created_at, updated_at, updated_by) \
     VALUES (?1, ?1, ?2, ?3, ?3, ?4) \
     ON CONFLICT (id) DO UPDATE SET north_star = excluded.north_star, \
     updated_at = excluded.updated_at, updated_by = excluded.updated_by",
);
/// A focus event, if the project exists and its focus is not already exactly this one.
const FOCUS_EVENT: Query = Query::no_rows(
    "INSERT INTO event (project_id, at, what, value, note, done_when, client) \
     SELECT ?1, ?5, 'focus', ?2, ?3, ?4, ?6 \
     WHERE EXISTS (SELECT 1 FROM project WHERE id = ?1) \
     AND NOT EXISTS (SELECT 1 FROM focus WHERE project_id = ?1 AND statement = ?2 \
     AND why IS ?3 AND done_when IS ?4)",
);
const UPSERT_FOCUS: Query = Query::no_rows("INSERT INTO focus (project_id, statement, why, done_when, created_at, updated_at, updated_by) \
     SELECT ?1, ?2, ?3, ?4, ?5, ?5, ?6 WHERE EXISTS (SELECT 1 FROM project WHERE id = ?1) \
     ON CONFLICT (project_id) DO UPDATE SET statement = excluded.statement, why = excluded.why, \
     done_when = excluded.done_when, updated_at = excluded.updated_at, updated_by = excluded.updated_by");
/// add_task in one statement: inserts the task unless an open task of the project has the same
/// kind and body, and returns the id of the task that is there now with the project's anchor.
/// The id inserted is that open task's own when there is one (found through `task_open_same`),
/// so the insert then conflicts on the primary key and the upsert leaves the row as it was,
/// yet returns it: a retried or concurrent identical call cannot add a second task, and the
/// answer needs no second read. No project, no row (the SELECT finds none, nothing is written).
/// The cap on open deferred tasks (`?8`, `OPEN_DEFERRED_MAX`) works the same way: when a
/// deferred task has no identical open one and the project already holds `?8` open deferred
/// tasks, the id inserted is the `?8`-th one's (found through `task_open_deferred`), so nothing
/// is added and that task comes back; `same` (its kind and body are this call's) tells it from
/// an identical task. Main tasks are not listed by get_state and not capped (`?5` is 0).
/// The anchor rides in RETURNING as one subquery that SQLite turns into JSON rows of the anchor
/// reads' columns (as get_state's rows are), so D1 carries three cells; add_task changes
/// neither of its parts.
pub const INSERT_TASK: Query = Query::rows(
    "INSERT INTO task (id, project_id, body, kind, demoted, status, created_at, created_by, updated_at) \
     SELECT coalesce((SELECT id FROM task WHERE project_id = ?2 AND kind = ?4 AND body = ?3 \
     AND status = 'open' ORDER BY rowid LIMIT 1), \
     (SELECT id FROM task WHERE ?5 = 1 AND project_id = ?2 AND demoted = 1 AND status = 'open' \
     ORDER BY rowid LIMIT 1 OFFSET ?8 - 1), ?1), ?2, ?3, ?4, ?5, 'open', ?6, ?7, ?6 \
     WHERE EXISTS (SELECT 1 FROM project WHERE id = ?2) \
     ON CONFLICT (id) DO UPDATE SET updated_at = updated_at \
     RETURNING id, kind = ?4 AND body = ?3 AS same, \
     (SELECT json_group_array(json_array(p.north_star, f.statement, f.why, \
     f.done_when, f.updated_at, f.updated_by)) \
     FROM project p LEFT JOIN focus f ON f.project_id = p.id WHERE p.id = ?2) AS anchor",
    &["id", "same", "anchor"],
);
/// complete_task's statements hold the one project a scoped caller reaches (`?2` here, `?5` in
/// the event and the update), or NULL for all: a task of another project is then not found, in
/// the same statements that would change it.
/// Its `status` is the task's before this call. A retry whose first attempt committed finds the
/// task done and answers "already done" (with one event): a call cannot be told from another
/// one of the same client in the same millisecond, and 16 such concurrent calls must not all
/// hear "completed" (the smoke's complete_task race).
const TASK_BY_ID: Query = Query::rows(
    "SELECT project_id, kind, status FROM task WHERE id = ?1 AND (?2 IS NULL OR project_id = ?2)",
    &["project_id", "kind", "status"],
);
/// The completion's event, only if the task is still open (it runs before the update).
const COMPLETION_EVENT: Query = Query::no_rows(
    "INSERT INTO event (project_id, at, what, value, note, task_id, kind, client) \
     SELECT project_id, ?2, 'completed', body, ?3, id, kind, ?4 FROM task \
     WHERE id = ?1 AND status <> 'done' AND (?5 IS NULL OR project_id = ?5)",
);
const COMPLETE_TASK: Query = Query::no_rows(
    "UPDATE task SET status = 'done', completed_at = ?2, completed_by = ?4, \
     evidence = ?3, updated_at = ?2 \
     WHERE id = ?1 AND status <> 'done' AND (?5 IS NULL OR project_id = ?5)",
);
/// The columns of both anchor reads.
const ANCHOR_COLUMNS: &[&str] = &["north_star", "statement", "why", "done_when", "at", "by"];
/// The project's North Star and focus, read at the end of each write's batch so the reply can
/// end with the 🎯/▶ lines as they stand after the write (no extra round trip).
const LOAD_ANCHOR: Query = Query::rows(
    "SELECT p.north_star AS north_star, f.statement AS statement, f.why AS why, \
     f.done_when AS done_when, f.updated_at AS at, f.updated_by AS by \
     FROM project p LEFT JOIN focus f ON f.project_id = p.id WHERE p.id = ?1",
    ANCHOR_COLUMNS,
);
/// The same for the project a task belongs to (complete_task names only the task), within the
/// caller's project (`?2`, NULL for all).
const LOAD_ANCHOR_OF_TASK: Query = Query::rows(
    "SELECT p.north_star AS north_star, f.statement AS statement, \
     f.why AS why, f.done_when AS done_when, f.updated_at AS at, f.updated_by AS by \
     FROM project p LEFT JOIN focus f ON f.project_id = p.id \
     WHERE p.id = (SELECT project_id FROM task WHERE id = ?1 AND (?2 IS NULL OR project_id = ?2))",
    ANCHOR_COLUMNS,
);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upsert {
    Created,
    Updated,
}

/// Sets the North Star, creating the project when absent, and records the change in the
/// history. Reports which happened and the anchor after the write; the check, the event, the
/// write and the read share one atomic batch.
pub async fn set_north_star(
    db: &dyn Sql,
    project: Writable<'_>,
    text: &str,
    change: Change,
) -> Result<(Upsert, Anchor), StoreError> {
    let project_id = project.id();
    let at = Value::Int(change.at_ms);
    let results = db
        .batch(vec![
            Stmt::new(
                PROJECT_EXISTS,
                vec![project_id.into(), at.clone(), change.by.as_str().into()],
            ),
            Stmt::new(
                NORTH_STAR_EVENT,
                vec![
                    project_id.into(),
                    text.into(),
                    at.clone(),
                    change.by.as_str().into(),
                ],
            ),
            Stmt::new(
                UPSERT_NORTH_STAR,
                vec![
                    project_id.into(),
                    text.into(),
                    at,
                    change.by.as_str().into(),
                ],
            ),
            Stmt::new(LOAD_ANCHOR, vec![project_id.into()]),
        ])
        .await?;
    let existed = !first(&results)?.is_empty();
    let anchor = anchor(&results, 3)?.ok_or(StoreError::Decode("anchor after upsert"))?;
    let upsert = if existed {
        Upsert::Updated
    } else {
        Upsert::Created
    };
    Ok((upsert, anchor))
}

/// The focus a set_focus call writes.
#[derive(Debug, Clone, Copy)]
pub struct NewFocus<'a> {
    pub statement: &'a str,
    pub why: Option<&'a str>,
    pub done_when: Option<&'a str>,
}

/// Replaces the project's one focus, records a change in the history, and returns the anchor
/// after it. `None` when the project does not exist (nothing written).
pub async fn set_focus(
    db: &dyn Sql,
    project: Writable<'_>,
    focus: NewFocus<'_>,
    change: Change,
) -> Result<Option<Anchor>, StoreError> {
    let project_id = project.id();
    let params = vec![
        project_id.into(),
        focus.statement.into(),
        focus.why.into(),
        focus.done_when.into(),
        Value::Int(change.at_ms),
        change.by.as_str().into(),
    ];
    let results = db
        .batch(vec![
            Stmt::new(FOCUS_EVENT, params.clone()),
            Stmt::new(UPSERT_FOCUS, params),
            Stmt::new(LOAD_ANCHOR, vec![project_id.into()]),
        ])
        .await?;
    anchor(&results, 2)
}

/// What add_task did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// The task was stored under the id given.
    New(Anchor),
    /// An open task of the same kind and body was already there; this is its id.
    Existing(String, Anchor),
    /// The project does not exist; nothing was written.
    NoProject,
    /// The project already holds `OPEN_DEFERRED_MAX` open deferred tasks; nothing was written.
    Full,
}

/// Adds a task unless the same one is already open or the project's open deferred tasks are at
/// their cap, and returns the project's anchor.
pub async fn add_task(
    db: &dyn Sql,
    id: &str,
    project: Writable<'_>,
    body: &str,
    kind: Kind,
    change: Change,
) -> Result<Added, StoreError> {
    let project_id = project.id();
    let params = vec![
        id.into(),
        project_id.into(),
        body.into(),
        kind.as_str().into(),
        Value::Int(i64::from(kind.demoted())),
        Value::Int(change.at_ms),
        change.by.as_str().into(),
        Value::Int(OPEN_DEFERRED_MAX as i64),
    ];
    let results = db.batch(vec![Stmt::new(INSERT_TASK, params)]).await?;
    let Some(row) = first(&results)?.first() else {
        return Ok(Added::NoProject);
    };
    let anchor_rows = rows_from_json(ANCHOR_COLUMNS, text(row, "anchor")?)?;
    let anchor = anchor(&[anchor_rows], 0)?.ok_or(StoreError::Decode("anchor of the task"))?;
    let there = text(row, "id")?;
    Ok(if there == id {
        Added::New(anchor)
    } else if int(row, "same")? == Some(1) {
        Added::Existing(there.to_owned(), anchor)
    } else {
        Added::Full
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    Unknown,
    Completed {
        project_id: String,
        kind: Kind,
        anchor: Anchor,
    },
    AlreadyDone {
        project_id: String,
        kind: Kind,
        anchor: Anchor,
    },
}

/// Marks a task done with its evidence and records the completion in the history. The read of
/// the old status, the event, the update and the read of the project's anchor run in one atomic
/// batch, so of two concurrent calls exactly one sees `Completed` and one event is written (a
/// retry of the same call, with the same `Change`, sees `Completed` again and writes nothing).
/// Within a reach of one project (a scoped caller's), a task of any other project is `Unknown`
/// and untouched: each statement's WHERE holds the project.
pub async fn complete_task(
    db: &dyn Sql,
    task_id: &str,
    evidence: Option<&str>,
    change: Change,
    reach: WriteReach<'_>,
) -> Result<Completion, StoreError> {
    let only_project = reach.only();
    let params = vec![
        task_id.into(),
        Value::Int(change.at_ms),
        evidence.into(),
        change.by.as_str().into(),
        only_project.into(),
    ];
    let results = db
        .batch(vec![
            Stmt::new(TASK_BY_ID, vec![task_id.into(), only_project.into()]),
            Stmt::new(COMPLETION_EVENT, params.clone()),
            Stmt::new(COMPLETE_TASK, params),
            Stmt::new(
                LOAD_ANCHOR_OF_TASK,
                vec![task_id.into(), only_project.into()],
            ),
        ])
        .await?;
    let Some(row) = first(&results)?.first() else {
        return Ok(Completion::Unknown);
    };
    let project_id = text(row, "project_id")?.to_owned();
    let kind = kind(row)?;
    let anchor = anchor(&results, 3)?.ok_or(StoreError::Decode("anchor of the task"))?;
    Ok(if text(row, "status")? == "done" {
        Completion::AlreadyDone {
            project_id,
            kind,
            anchor,
        }
    } else {
        Completion::Completed {
            project_id,
            kind,
            anchor,
        }
    })
}

/// The anchor read by statement `index` of a batch; `None` when it found no project.
fn anchor(results: &[Vec<Row>], index: usize) -> Result<Option<Anchor>, StoreError> {
    let rows = results
        .get(index)
        .ok_or(StoreError::Decode("batch returned too few results"))?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let focus = match opt_text(row, "statement")? {
        Some(statement) => Some(Focus {
            statement: statement.to_owned(),
            why: opt_text(row, "why")?.map(str::to_owned),
            done_when: opt_text(row, "done_when")?.map(str::to_owned),
            set: stamp(row, "at", "by")?,
        }),
        None => None,
    };
    Ok(Some(Anchor {
        north_star: text(row, "north_star")?.to_owned(),
        focus,
    }))
}
