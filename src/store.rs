//! Storage: the `Sql` trait the core reaches D1 through, and every SQL string of the app, typed.
//! Each public function here is exactly one `Sql::batch` call, i.e. one D1 round trip.
//! Must not hold: connection handles, `worker::*` types, or any BEGIN/COMMIT/PRAGMA (a batch is
//! the atomic unit on D1). Parameters are positional (`?1..?N`) so SQLite and D1 read them alike.

use std::fmt::Write;
use std::future::Future;
use std::pin::Pin;

use crate::auth::scope::{Reach, Readable, Writable, WriteReach};
use crate::json_write;
use crate::model::{
    Anchor, Deferred, Event, EventKind, Focus, History, Kind, Stamp, State, OPEN_DEFERRED_MAX,
};

mod export;
pub mod guard;
pub mod oauth;
pub mod retry;
mod rows;
mod schema;
mod search;
pub mod tokens;

pub use export::{import, load_export, Imported, EXPORT_EVENTS, EXPORT_TASKS};
pub use rows::{from_json as rows_from_json, Cell, Row};
pub use schema::{ensure_schema, split_sql, Gated, MIGRATIONS};
pub use search::{search, Search, SEARCH_INDEXED, SEARCH_SHORT, TRIGRAM};

/// A bound parameter. Text and small integers are all the app stores.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Text(String),
    Null,
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_owned())
    }
}

impl From<Option<&str>> for Value {
    fn from(s: Option<&str>) -> Self {
        s.map_or(Value::Null, Value::from)
    }
}

/// One statement of the app: its SQL and the columns of its rows, in order (none for one that
/// returns no rows). The SQLite adapter checks the list against the statement's own, so a list
/// that drifts from its SQL fails the native tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query {
    pub sql: &'static str,
    pub columns: &'static [&'static str],
}

impl Query {
    const fn rows(sql: &'static str, columns: &'static [&'static str]) -> Query {
        Query { sql, columns }
    }

    const fn no_rows(sql: &'static str) -> Query {
        Query { sql, columns: &[] }
    }
}

/// One statement with its parameters.
#[derive(Debug, Clone)]
pub struct Stmt {
    pub query: Query,
    pub params: Vec<Value>,
}

impl Stmt {
    fn new(query: Query, params: Vec<Value>) -> Self {
        Stmt { query, params }
    }

    /// The parameters as one JSON array, for an adapter that hands them to JavaScript in one
    /// piece (the D1 adapter's `JSON.parse`): integers as numbers (exact within ±2^53, the
    /// app's range), text as strings, NULL as null.
    pub fn params_json(&self) -> String {
        let mut out = String::with_capacity(16);
        out.push('[');
        for (i, param) in self.params.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match param {
                Value::Int(n) => {
                    let _ = write!(out, "{n}");
                }
                Value::Text(s) => json_write::push_string(&mut out, s),
                Value::Null => out.push_str("null"),
            }
        }
        out.push(']');
        out
    }
}

/// Why a batch failed, as far as the adapter can tell (`retry::classify` sorts D1's messages).
/// The texts are for logs only, never for clients; what a client is told is `Error`'s.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// The database failed in passing (a lost connection, a restart): whether the batch
    /// committed is unknown. Retried once (`retry::once`).
    #[error("database failed in passing: {0}")]
    Transient(String),
    /// The database is overloaded: it passes, but is not retried at once (a retry adds load).
    /// Whether the batch committed is unknown.
    #[error("database overloaded: {0}")]
    Overloaded(String),
    /// The database refused the batch, which rolled back whole: nothing was written.
    #[error("database error: {0}")]
    Backend(String),
    /// A row did not have the shape the query promises.
    #[error("unexpected row shape: {0}")]
    Decode(&'static str),
    /// The request's OAuth grant is not live: its batch was refused whole and wrote nothing
    /// (`guard::Guarded`).
    #[error("the request's OAuth grant is revoked")]
    Revoked,
    /// The request's project token is not live (revoked, or gone with its project): its batch
    /// was refused whole and wrote nothing (`guard::Guarded`).
    #[error("the request's project token is revoked")]
    TokenRevoked,
}

/// A future the core awaits without knowing its type (the Worker's are not Send).
pub type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// What one batch returns: each statement's rows, in order.
pub type Rows = Result<Vec<Vec<Row>>, StoreError>;

/// The storage port. D1 implements it in the Worker, rusqlite in the tests. Used as `&dyn Sql`
/// inside the request context, hence the boxed future.
pub trait Sql {
    /// Runs the statements in order as one atomic unit (one D1 batch, one round trip) and
    /// returns each statement's rows.
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows>;
}

/// A write's moment and author: the server clock and who made it (`Caller::attribution`).
#[derive(Debug, Clone)]
pub struct Change {
    pub at_ms: i64,
    pub by: String,
}

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
/// get_state's one statement: everything it shows, as rows of seven cells (part 0 is the
/// project with the time of its newest write of any kind, part 1 its focus, part 2 its oldest
/// `?2` open deferred tasks with who added each, `seq` their insertion order, part 3 the count
/// of all its open deferred tasks in `seq`), aggregated by SQLite into one JSON array of arrays
/// of cells, so D1 carries one text cell instead of a value per cell; no part 0 when there is
/// no project. The task arms match the partial index `task_open_deferred` term for term, so
/// SQLite reads only open deferred rows. The newest write is the newer of the North Star's time
/// (a confirmation included) and the newest task write (an add or a completion, main tasks
/// included: one step of `task_written`); the focus's own time, which a confirmation moves, is
/// part 1's. `?2`
/// bounds the one value D1 carries (D1 refuses one over 2,000,000 bytes) however many tasks a
/// project stored before the cap existed. The core puts the rows in order itself: the order an
/// aggregate sees its rows in is not SQL's promise.
pub const LOAD_STATE: Query = Query::rows(
    "\
SELECT json_group_array(json_array(part, seq, a, b, c, d, e)) AS rows FROM ( \
SELECT 0 AS part, 0 AS seq, north_star AS a, updated_by AS b, NULL AS c, updated_at AS d, \
max(coalesce(updated_at, 0), \
coalesce((SELECT max(updated_at) FROM task WHERE project_id = ?1), 0)) AS e \
FROM project WHERE id = ?1 \
UNION ALL SELECT 1, 0, statement, updated_by, why, updated_at, done_when FROM focus WHERE project_id = ?1 \
UNION ALL SELECT * FROM (SELECT 2, rowid, id, kind, body, created_by, NULL FROM task \
WHERE project_id = ?1 AND demoted = 1 AND status = 'open' ORDER BY rowid LIMIT ?2) \
UNION ALL SELECT 3, count(*), NULL, NULL, NULL, NULL, NULL FROM task \
WHERE project_id = ?1 AND demoted = 1 AND status = 'open')",
    &["rows"],
);
/// The cells of each row inside get_state's JSON.
const STATE_COLUMNS: &[&str] = &["part", "seq", "a", "b", "c", "d", "e"];
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
/// Most events the history shows.
pub const HISTORY_LIMIT: usize = 50;
/// A project's history in one statement: part 0 says the project exists, part 1 is its newest
/// events newest first, part 2 the count of all its events. Served by `event_by_project`.
pub const LOAD_HISTORY: Query = Query::rows(
    "\
SELECT 0 AS part, 0 AS seq, NULL AS at, NULL AS what, NULL AS value, NULL AS note, NULL AS done_when, \
NULL AS kind, NULL AS client FROM project WHERE id = ?1 \
UNION ALL SELECT * FROM (SELECT 1, seq, at, what, value, note, done_when, kind, client FROM event \
WHERE project_id = ?1 ORDER BY seq DESC LIMIT ?2) \
UNION ALL SELECT 2, count(*), NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM event WHERE project_id = ?1 \
ORDER BY part, seq DESC",
    &["part", "seq", "at", "what", "value", "note", "done_when", "kind", "client"],
);
/// A page of project ids; `?3` keeps only that one (a scoped caller's), NULL keeps all.
const PROJECT_IDS: Query = Query::rows(
    "SELECT id FROM project WHERE id > ?1 AND (?3 IS NULL OR id = ?3) \
     ORDER BY id LIMIT ?2",
    &["id"],
);
/// The first `?1` project ids and how many there are in all; `?2` keeps only that one.
const FIRST_PROJECT_IDS: Query = Query::rows(
    "SELECT id, count(*) OVER () AS total FROM project WHERE (?2 IS NULL OR id = ?2) \
     ORDER BY id LIMIT ?1",
    &["id", "total"],
);
/// A page of projects for the web list, in one statement: each project's North Star, focus (and
/// when it was set), open deferred counts and newest history time, newest first; `?1` is the
/// project the page continues after (its place in that order, `c`), `?2` the page size, `?3`
/// keeps only that project, as in `PROJECT_IDS`. The counts are correlated subqueries that
/// SQLite serves from a partial index of open tasks, so done tasks cost nothing, and the newest
/// time reads the project's events through `event_by_project`.
pub const PROJECT_SUMMARIES: Query = Query::rows(
    "\
WITH s AS MATERIALIZED (SELECT p.id AS id, p.north_star AS north_star, f.statement AS statement, \
f.updated_at AS focus_at, \
(SELECT count(*) FROM task t WHERE t.project_id = p.id AND t.demoted = 1 AND t.status = 'open' \
AND t.kind = 'cleanup') AS cleanup, \
(SELECT count(*) FROM task t WHERE t.project_id = p.id AND t.demoted = 1 AND t.status = 'open' \
AND t.kind = 'record') AS record, \
(SELECT max(e.at) FROM event e WHERE e.project_id = p.id) AS last_at \
FROM project p LEFT JOIN focus f ON f.project_id = p.id WHERE ?3 IS NULL OR p.id = ?3), \
c AS (SELECT coalesce(last_at, -1) AS l FROM s WHERE id = ?1) \
SELECT id, north_star, statement, focus_at, cleanup, record, last_at FROM s LEFT JOIN c \
WHERE c.l IS NULL OR coalesce(last_at, -1) < c.l OR (coalesce(last_at, -1) = c.l AND id > ?1) \
ORDER BY coalesce(last_at, -1) DESC, id LIMIT ?2",
    &[
        "id",
        "north_star",
        "statement",
        "focus_at",
        "cleanup",
        "record",
        "last_at",
    ],
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

/// Reads everything get_state shows, in one statement. `None` when the project does not exist.
pub async fn load_state(db: &dyn Sql, project: Readable<'_>) -> Result<Option<State>, StoreError> {
    let project_id = project.id();
    let limit = Value::Int(OPEN_DEFERRED_MAX as i64);
    let results = db
        .batch(vec![Stmt::new(LOAD_STATE, vec![project_id.into(), limit])])
        .await?;
    let json = first(&results)?
        .first()
        .ok_or(StoreError::Decode("state"))
        .and_then(|row| text(row, "rows"))?;
    let (mut north_star, mut focus, mut deferred, mut open) = (None, None, Vec::new(), 0);
    for row in &rows_from_json(STATE_COLUMNS, json)? {
        match int(row, "part")? {
            Some(0) => {
                let written = int(row, "e")?.unwrap_or_default();
                north_star = Some((text(row, "a")?.to_owned(), stamp(row, "d", "b")?, written));
            }
            Some(1) => {
                focus = Some(Focus {
                    statement: text(row, "a")?.to_owned(),
                    why: opt_text(row, "c")?.map(str::to_owned),
                    done_when: opt_text(row, "e")?.map(str::to_owned),
                    set: stamp(row, "d", "b")?,
                });
            }
            Some(2) => {
                let seq = int(row, "seq")?.ok_or(StoreError::Decode("seq"))?;
                let task = Deferred {
                    id: text(row, "a")?.to_owned(),
                    kind: Kind::parse(text(row, "b")?).ok_or(StoreError::Decode("kind"))?,
                    body: text(row, "c")?.to_owned(),
                    by: opt_text(row, "d")?.map(str::to_owned),
                };
                // In insertion order, whatever order the aggregate saw the rows in (stable, were
                // two to share a `seq`). They come in that order in practice (the index is read
                // in rowid order), so this is a push; a general sort would add 2 KB of wasm.
                let at = deferred.partition_point(|(earlier, _)| *earlier <= seq);
                deferred.insert(at, (seq, task));
            }
            Some(3) => open = int(row, "seq")?.ok_or(StoreError::Decode("seq"))?,
            _ => return Err(StoreError::Decode("part")),
        }
    }
    let deferred: Vec<Deferred> = deferred.into_iter().map(|(_, task)| task).collect();
    let unlisted = u64::try_from(open)
        .unwrap_or(0)
        .saturating_sub(deferred.len() as u64);
    Ok(north_star.map(|(north_star, north_star_set, written)| {
        let focus_at = focus.as_ref().and_then(|f: &Focus| f.set.at_ms);
        State {
            project_id: project_id.to_owned(),
            north_star,
            north_star_set,
            written_at: written.max(focus_at.unwrap_or_default()),
            focus,
            deferred,
            unlisted,
        }
    }))
}

/// Reads a project's history, newest first, in one statement. `None` when the project does
/// not exist.
pub async fn load_history(
    db: &dyn Sql,
    project: Readable<'_>,
) -> Result<Option<History>, StoreError> {
    let project_id = project.id();
    let results = db
        .batch(vec![Stmt::new(
            LOAD_HISTORY,
            vec![project_id.into(), Value::Int(HISTORY_LIMIT as i64)],
        )])
        .await?;
    let (mut exists, mut events, mut total) = (false, Vec::new(), 0);
    for row in first(&results)? {
        match int(row, "part")? {
            Some(0) => exists = true,
            Some(1) => {
                let what = match (text(row, "what")?, opt_text(row, "kind")?) {
                    ("north_star", _) => EventKind::NorthStar,
                    ("focus", _) => EventKind::Focus,
                    ("completed", Some(kind)) => {
                        EventKind::Completed(Kind::parse(kind).ok_or(StoreError::Decode("kind"))?)
                    }
                    _ => return Err(StoreError::Decode("what")),
                };
                events.push(Event {
                    at_ms: int(row, "at")?,
                    what,
                    value: text(row, "value")?.to_owned(),
                    note: opt_text(row, "note")?.map(str::to_owned),
                    done_when: opt_text(row, "done_when")?.map(str::to_owned),
                    client: text(row, "client")?.to_owned(),
                });
            }
            Some(2) => total = int(row, "seq")?.unwrap_or(0),
            _ => return Err(StoreError::Decode("part")),
        }
    }
    let older = u64::try_from(total)
        .unwrap_or(0)
        .saturating_sub(events.len() as u64);
    Ok(exists.then(|| History {
        project_id: project_id.to_owned(),
        events,
        older,
    }))
}

/// Up to `limit` project ids in id order, after `after` (exclusive), within the caller's reach
/// (one project at most, for a scoped caller).
pub async fn project_ids(
    db: &dyn Sql,
    after: Option<&str>,
    limit: usize,
    reach: Reach<'_>,
) -> Result<Vec<String>, StoreError> {
    let results = projects_after(db, PROJECT_IDS, after, limit, reach).await?;
    each(first(&results)?, |row| text(row, "id").map(str::to_owned))
}

/// The first `limit` project ids the caller reaches, in id order, and how many it reaches in
/// all: what a tool error names when a call must say which project it means.
pub async fn first_project_ids(
    db: &dyn Sql,
    limit: usize,
    reach: Reach<'_>,
) -> Result<(Vec<String>, i64), StoreError> {
    let stmt = Stmt::new(
        FIRST_PROJECT_IDS,
        vec![Value::Int(limit as i64), reach.only().into()],
    );
    let results = db.batch(vec![stmt]).await?;
    let rows = first(&results)?;
    let total = match rows.first() {
        Some(row) => int(row, "total")?.unwrap_or_default(),
        None => 0,
    };
    let ids = each(rows, |row| text(row, "id").map(str::to_owned))?;
    Ok((ids, total))
}

/// One project as the web list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub id: String,
    pub north_star: String,
    /// The focus statement, if set_focus was ever called.
    pub focus: Option<String>,
    /// When the focus was last set (UTC ms); `None` before timestamps were kept.
    pub focus_set_ms: Option<i64>,
    /// Open deferred tasks of each kind.
    pub cleanup: i64,
    pub record: i64,
    /// When its history last changed (UTC ms); `None` before timestamps were kept.
    pub last_ms: Option<i64>,
}

/// Up to `limit` project summaries, newest change first (then by id), after the project `after`
/// (exclusive; one not in the list starts it again), in one statement.
pub async fn project_summaries(
    db: &dyn Sql,
    after: Option<&str>,
    limit: usize,
    reach: Reach<'_>,
) -> Result<Vec<Summary>, StoreError> {
    let results = projects_after(db, PROJECT_SUMMARIES, after, limit, reach).await?;
    let mut summaries = Vec::new();
    for row in first(&results)? {
        let count = |column| int(row, column)?.ok_or(StoreError::Decode(column));
        summaries.push(Summary {
            id: text(row, "id")?.to_owned(),
            north_star: text(row, "north_star")?.to_owned(),
            focus: opt_text(row, "statement")?.map(str::to_owned),
            focus_set_ms: int(row, "focus_at")?,
            cleanup: count("cleanup")?,
            record: count("record")?,
            last_ms: int(row, "last_at")?,
        });
    }
    Ok(summaries)
}

/// Runs one of the paged project queries: `?1` is the id to continue after, `?2` the page size,
/// `?3` the one project to keep (NULL: all).
async fn projects_after(
    db: &dyn Sql,
    query: Query,
    after: Option<&str>,
    limit: usize,
    reach: Reach<'_>,
) -> Rows {
    let limit = Value::Int(i64::try_from(limit).unwrap_or(i64::MAX));
    db.batch(vec![Stmt::new(
        query,
        vec![after.unwrap_or("").into(), limit, reach.only().into()],
    )])
    .await
}

/// An integer column; `None` for NULL.
fn int(row: &Row, column: &'static str) -> Result<Option<i64>, StoreError> {
    match row.get(column) {
        Some(Cell::Null) => Ok(None),
        Some(Cell::Int(n)) => Ok(Some(*n)),
        _ => Err(StoreError::Decode(column)),
    }
}

/// A stamp from a time column and a client column.
fn stamp(row: &Row, at: &'static str, by: &'static str) -> Result<Stamp, StoreError> {
    Ok(Stamp {
        at_ms: int(row, at)?,
        by: opt_text(row, by)?.unwrap_or("unknown").to_owned(),
    })
}

/// Each row decoded by `decode`, or the first row's failure: a loop, which the Worker carries in
/// fewer bytes than `map` and `collect` into a `Result` (132 bytes gzip for one of them).
fn each<'a, T>(
    rows: &'a [Row],
    mut decode: impl FnMut(&'a Row) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(decode(row)?);
    }
    Ok(out)
}

fn first(results: &[Vec<Row>]) -> Result<&Vec<Row>, StoreError> {
    results
        .first()
        .ok_or(StoreError::Decode("batch returned no result"))
}

fn text<'a>(row: &'a Row, column: &'static str) -> Result<&'a str, StoreError> {
    match row.get(column) {
        Some(Cell::Text(s)) => Ok(s),
        _ => Err(StoreError::Decode(column)),
    }
}

fn opt_text<'a>(row: &'a Row, column: &'static str) -> Result<Option<&'a str>, StoreError> {
    match row.get(column) {
        Some(Cell::Null) => Ok(None),
        Some(Cell::Text(s)) => Ok(Some(s)),
        _ => Err(StoreError::Decode(column)),
    }
}

fn kind(row: &Row) -> Result<Kind, StoreError> {
    Kind::parse(text(row, "kind")?).ok_or(StoreError::Decode("kind"))
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn params_cross_as_the_json_array_of_their_values() {
        let text = "a \"quote\", a \\ and a line\n\u{1} 日本語";
        let stmt = Stmt::new(
            LOAD_STATE,
            vec![
                Value::Text(text.into()),
                Value::Int(-(1 << 53)),
                Value::Int(42),
                Value::Null,
                Value::Text(String::new()),
            ],
        );
        let parsed: serde_json::Value = serde_json::from_str(&stmt.params_json()).unwrap();
        assert_eq!(
            parsed,
            serde_json::json!([text, -(1i64 << 53), 42, null, ""])
        );
        assert_eq!(Stmt::new(LOAD_STATE, Vec::new()).params_json(), "[]");
        assert_eq!(
            Stmt::new(LOAD_STATE, vec![Value::Int(1), Value::Int(2)]).params_json(),
            "[1,2]"
        );
    }

    /// A database whose get_state statement answers with the given JSON text, as SQLite's
    /// aggregate would build it.
    struct StateJson(&'static str);

    impl Sql for StateJson {
        fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
            assert_eq!(stmts[0].query, LOAD_STATE);
            let row = Row::new(
                LOAD_STATE.columns,
                vec![super::Cell::Text(self.0.to_owned())],
            );
            Box::pin(std::future::ready(row.map(|row| vec![vec![row]])))
        }
    }

    fn state_of(json: &'static str) -> Result<Option<State>, StoreError> {
        let project = crate::auth::scope::Scope::All.readable("p").unwrap();
        crate::sqlite::block_on(load_state(&StateJson(json), project))
    }

    /// The open deferred tasks come in insertion order (`seq`) whatever order the aggregate
    /// gathered the rows in, and the parts in any order.
    #[test]
    fn get_state_orders_the_rows_it_is_given() {
        let state = state_of(
            r#"[[2,9,"t9","record","nine",null,null],[1,0,"focus","bob",null,5,null],
                [2,3,"t3","cleanup","three",null,null],[0,0,"star","ann",null,7,null]]"#,
        )
        .unwrap()
        .unwrap();
        let ids: Vec<&str> = state.deferred.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["t3", "t9"]);
        assert_eq!(state.north_star, "star");
        assert_eq!(state.focus.unwrap().statement, "focus");
        // Rows that share a `seq` keep the order they came in.
        let state = state_of(
            r#"[[0,0,"star","ann",null,7,null],[2,4,"second","record","b",null,null],
                [2,4,"third","record","c",null,null],[2,1,"first","record","a",null,null]]"#,
        )
        .unwrap()
        .unwrap();
        let ids: Vec<&str> = state.deferred.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["first", "second", "third"]);
    }

    /// Part 3 counts every open deferred task; those it counts beyond the listed ones are
    /// `unlisted` (none when the count is the list's length, or missing).
    #[test]
    fn get_state_counts_what_it_does_not_list() {
        let listed = r#"[2,1,"t1","record","a",null,null],[2,2,"t2","cleanup","b",null,null]"#;
        for (count, unlisted) in [
            ("", 0),
            (",[3,2,null,null,null,null,null]", 0),
            (",[3,7,null,null,null,null,null]", 5),
        ] {
            let json = format!(r#"[[0,0,"star","ann",null,7,null],{listed}{count}]"#);
            let state = state_of(Box::leak(json.into_boxed_str())).unwrap().unwrap();
            assert_eq!(
                (state.deferred.len(), state.unlisted),
                (2, unlisted),
                "{count}"
            );
        }
    }

    /// No project: SQLite's aggregate over no rows is `[]`. A row of another shape, or a part
    /// the statement never makes, is an error, not a guess.
    #[test]
    fn get_state_refuses_rows_it_does_not_know() {
        assert!(state_of("[]").unwrap().is_none());
        for bad in [
            r#"[[0,0,"star","ann",null,7]]"#,
            r#"[[4,0,"star","ann",null,7,null]]"#,
            r#"[[0,0,"star","ann",null,7,null],[3,null,null,null,null,null,null]]"#,
            r#"[[2,null,"t","record","b",null,null]]"#,
            r#"[[2,1,"t","bogus","b",null,null]]"#,
            "not json",
        ] {
            assert!(matches!(state_of(bad), Err(StoreError::Decode(_))), "{bad}");
        }
    }

    #[test]
    fn migrations_split_into_statements_without_comments() {
        let stmts = split_sql(MIGRATIONS[0].1);
        assert_eq!(stmts.len(), 4);
        assert!(stmts.iter().all(|s| !s.contains("--")));
        assert!(stmts[0].starts_with("CREATE TABLE IF NOT EXISTS project"));
        assert!(stmts[3].starts_with("CREATE INDEX IF NOT EXISTS task_open_deferred"));
        let v2 = split_sql(MIGRATIONS[1].1);
        assert!(v2.iter().all(|s| !s.contains("--") && !s.is_empty()));
        assert_eq!(
            v2.iter().filter(|s| s.starts_with("ALTER TABLE")).count(),
            13
        );
    }

    /// `MIGRATIONS` and migrations/ can never disagree: same files, same order, the same text
    /// less its comments.
    #[test]
    fn the_migration_list_is_the_migrations_folder() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
        let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sql"))
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        files.sort();
        let listed: Vec<(String, String)> = MIGRATIONS
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect();
        let uncommented: Vec<(String, String)> = files
            .into_iter()
            .map(|(name, text)| {
                let kept: Vec<String> = text
                    .lines()
                    .map(|line| {
                        line.split_once("--")
                            .map_or(line, |(code, _)| code)
                            .trim_end()
                    })
                    .filter(|line| !line.is_empty())
                    .map(|line| format!("{line}\n"))
                    .collect();
                (name, kept.concat())
            })
            .collect();
        assert_eq!(listed, uncommented);
        // And what is left is the files' every statement, as a splitter of the whole file reads
        // it, white space aside.
        let words = |sql: &str| -> Vec<String> {
            let statements = split_sql(sql);
            statements
                .iter()
                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect()
        };
        for (name, text) in MIGRATIONS {
            let file = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
            assert_eq!(words(text), words(&file), "{name}");
        }
    }
}
