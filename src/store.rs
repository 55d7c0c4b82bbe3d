//! Storage: the `Sql` trait the core reaches D1 through, and every SQL string of the app, typed.
//! Each public function here is exactly one `Sql::batch` call, i.e. one D1 round trip.
//! Must not hold: connection handles, `worker::*` types, or any BEGIN/COMMIT/PRAGMA (a batch is
//! the atomic unit on D1). Parameters are positional (`?1..?N`) so SQLite and D1 read them alike.

use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;

use serde_json::{Map, Value as Json};

use crate::model::{Anchor, Deferred, Focus, Kind, State};

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

/// One statement with its parameters.
#[derive(Debug, Clone)]
pub struct Stmt {
    pub sql: &'static str,
    pub params: Vec<Value>,
}

impl Stmt {
    fn new(sql: &'static str, params: Vec<Value>) -> Self {
        Stmt { sql, params }
    }
}

/// A result row as D1 returns it: column name to JSON value (TEXT is a string, INTEGER a number).
pub type Row = Map<String, Json>;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused or failed. The text is for logs only, never for clients.
    #[error("database error: {0}")]
    Backend(String),
    /// A row did not have the shape the query promises.
    #[error("unexpected row shape: {0}")]
    Decode(&'static str),
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

/// The migration files, in order. They are the only schema.
pub const MIGRATIONS: &[(&str, &str)] =
    &[("0001_init.sql", include_str!("../migrations/0001_init.sql"))];

static SCHEMA: LazyLock<Vec<String>> = LazyLock::new(|| {
    MIGRATIONS
        .iter()
        .flat_map(|(_, sql)| split_sql(sql))
        .collect()
});

/// Splits a migration into statements: `--` comments dropped, split on `;`. The migrations
/// contain no string literal holding `--` or `;`, which a test checks.
pub fn split_sql(src: &str) -> Vec<String> {
    let without_comments: String = src
        .lines()
        .map(|line| line.split_once("--").map_or(line, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n");
    without_comments
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Creates the schema if it is missing (every statement is IF NOT EXISTS). The Worker calls this
/// once per isolate, so a fresh database needs no manual step.
pub async fn ensure_schema(db: &dyn Sql) -> Result<(), StoreError> {
    let stmts = SCHEMA
        .iter()
        .map(|sql| Stmt::new(sql.as_str(), Vec::new()))
        .collect();
    db.batch(stmts).await.map(drop)
}

const PROJECT_EXISTS: &str = "SELECT 1 AS one FROM project WHERE id = ?1";
const UPSERT_NORTH_STAR: &str = "INSERT INTO project (id, name, north_star) VALUES (?1, ?1, ?2) \
     ON CONFLICT (id) DO UPDATE SET north_star = excluded.north_star";
const UPSERT_FOCUS: &str = "INSERT INTO focus (project_id, statement, why) \
     SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM project WHERE id = ?1) \
     ON CONFLICT (project_id) DO UPDATE SET statement = excluded.statement, why = excluded.why \
     RETURNING project_id";
const INSERT_TASK: &str = "INSERT INTO task (id, project_id, body, kind, demoted, status) \
     SELECT ?1, ?2, ?3, ?4, ?5, 'open' WHERE EXISTS (SELECT 1 FROM project WHERE id = ?2) \
     RETURNING id";
const TASK_BY_ID: &str = "SELECT project_id, kind, status FROM task WHERE id = ?1";
const COMPLETE_TASK: &str = "UPDATE task SET status = 'done' WHERE id = ?1 AND status <> 'done'";
/// Everything get_state shows, in one statement: part 0 is the project, part 1 its focus, part 2
/// its open deferred tasks in insertion order. The task arm matches the partial index
/// `task_open_deferred` term for term, so SQLite reads only open deferred rows.
pub const LOAD_STATE: &str = "\
SELECT 0 AS part, 0 AS seq, north_star AS a, NULL AS b, NULL AS c FROM project WHERE id = ?1 \
UNION ALL SELECT 1, 0, statement, why, NULL FROM focus WHERE project_id = ?1 \
UNION ALL SELECT 2, rowid, id, kind, body FROM task \
WHERE project_id = ?1 AND demoted = 1 AND status = 'open' \
ORDER BY part, seq";
/// The project's North Star and focus, read at the end of each write's batch so the reply can
/// end with the 🎯/▶ lines as they stand after the write (no extra round trip).
const LOAD_ANCHOR: &str =
    "SELECT p.north_star AS north_star, f.statement AS statement, f.why AS why \
     FROM project p LEFT JOIN focus f ON f.project_id = p.id WHERE p.id = ?1";
/// The same for the project a task belongs to (complete_task names only the task).
const LOAD_ANCHOR_OF_TASK: &str = "SELECT p.north_star AS north_star, f.statement AS statement, \
     f.why AS why FROM project p LEFT JOIN focus f ON f.project_id = p.id \
     WHERE p.id = (SELECT project_id FROM task WHERE id = ?1)";
const PROJECT_IDS: &str = "SELECT id FROM project WHERE id > ?1 ORDER BY id LIMIT ?2";
/// A page of projects for the web list, in one statement: each project's North Star, focus and
/// open deferred counts. The counts are correlated subqueries over the partial index
/// `task_open_deferred`, so they read only open deferred rows.
pub const PROJECT_SUMMARIES: &str = "\
SELECT p.id AS id, p.north_star AS north_star, f.statement AS statement, \
(SELECT count(*) FROM task t WHERE t.project_id = p.id AND t.demoted = 1 AND t.status = 'open' \
AND t.kind = 'cleanup') AS cleanup, \
(SELECT count(*) FROM task t WHERE t.project_id = p.id AND t.demoted = 1 AND t.status = 'open' \
AND t.kind = 'record') AS record \
FROM project p LEFT JOIN focus f ON f.project_id = p.id WHERE p.id > ?1 ORDER BY p.id LIMIT ?2";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upsert {
    Created,
    Updated,
}

/// Sets the North Star, creating the project when absent. Reports which happened and the anchor
/// after the write; the check, the write and the read share one atomic batch.
pub async fn set_north_star(
    db: &dyn Sql,
    project_id: &str,
    text: &str,
) -> Result<(Upsert, Anchor), StoreError> {
    let results = db
        .batch(vec![
            Stmt::new(PROJECT_EXISTS, vec![project_id.into()]),
            Stmt::new(UPSERT_NORTH_STAR, vec![project_id.into(), text.into()]),
            Stmt::new(LOAD_ANCHOR, vec![project_id.into()]),
        ])
        .await?;
    let existed = !first(&results)?.is_empty();
    let anchor = anchor(&results, 2)?.ok_or(StoreError::Decode("anchor after upsert"))?;
    let upsert = if existed {
        Upsert::Updated
    } else {
        Upsert::Created
    };
    Ok((upsert, anchor))
}

/// Replaces the project's one focus and returns the anchor after it. `None` when the project
/// does not exist (nothing written).
pub async fn set_focus(
    db: &dyn Sql,
    project_id: &str,
    statement: &str,
    why: Option<&str>,
) -> Result<Option<Anchor>, StoreError> {
    let results = db
        .batch(vec![
            Stmt::new(
                UPSERT_FOCUS,
                vec![project_id.into(), statement.into(), why.into()],
            ),
            Stmt::new(LOAD_ANCHOR, vec![project_id.into()]),
        ])
        .await?;
    anchor(&results, 1)
}

/// Adds a task and returns the project's anchor. `None` when the project does not exist
/// (nothing written).
pub async fn add_task(
    db: &dyn Sql,
    id: &str,
    project_id: &str,
    body: &str,
    kind: Kind,
) -> Result<Option<Anchor>, StoreError> {
    let params = vec![
        id.into(),
        project_id.into(),
        body.into(),
        kind.as_str().into(),
        Value::Int(i64::from(kind.demoted())),
    ];
    let results = db
        .batch(vec![
            Stmt::new(INSERT_TASK, params),
            Stmt::new(LOAD_ANCHOR, vec![project_id.into()]),
        ])
        .await?;
    if first(&results)?.is_empty() {
        return Ok(None);
    }
    anchor(&results, 1)
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

/// Marks a task done. The read of the old status, the update and the read of the project's
/// anchor run in one atomic batch, so of two concurrent calls exactly one sees `Completed`.
pub async fn complete_task(db: &dyn Sql, task_id: &str) -> Result<Completion, StoreError> {
    let results = db
        .batch(vec![
            Stmt::new(TASK_BY_ID, vec![task_id.into()]),
            Stmt::new(COMPLETE_TASK, vec![task_id.into()]),
            Stmt::new(LOAD_ANCHOR_OF_TASK, vec![task_id.into()]),
        ])
        .await?;
    let Some(row) = first(&results)?.first() else {
        return Ok(Completion::Unknown);
    };
    let project_id = text(row, "project_id")?.to_owned();
    let kind = kind(row)?;
    let anchor = anchor(&results, 2)?.ok_or(StoreError::Decode("anchor of the task"))?;
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
        }),
        None => None,
    };
    Ok(Some(Anchor {
        north_star: text(row, "north_star")?.to_owned(),
        focus,
    }))
}

/// Reads everything get_state shows, in one statement. `None` when the project does not exist.
pub async fn load_state(db: &dyn Sql, project_id: &str) -> Result<Option<State>, StoreError> {
    let results = db
        .batch(vec![Stmt::new(LOAD_STATE, vec![project_id.into()])])
        .await?;
    let (mut north_star, mut focus, mut deferred) = (None, None, Vec::new());
    for row in first(&results)? {
        // D1 hands numbers over as JavaScript doubles, SQLite as integers: read either.
        match row.get("part").and_then(Json::as_f64).map(|p| p as i64) {
            Some(0) => north_star = Some(text(row, "a")?.to_owned()),
            Some(1) => {
                focus = Some(Focus {
                    statement: text(row, "a")?.to_owned(),
                    why: opt_text(row, "b")?.map(str::to_owned),
                });
            }
            Some(2) => deferred.push(Deferred {
                id: text(row, "a")?.to_owned(),
                kind: Kind::parse(text(row, "b")?).ok_or(StoreError::Decode("kind"))?,
                body: text(row, "c")?.to_owned(),
            }),
            _ => return Err(StoreError::Decode("part")),
        }
    }
    Ok(north_star.map(|north_star| State {
        project_id: project_id.to_owned(),
        north_star,
        focus,
        deferred,
    }))
}

/// Up to `limit` project ids in id order, after `after` (exclusive).
pub async fn project_ids(
    db: &dyn Sql,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<String>, StoreError> {
    let results = projects_after(db, PROJECT_IDS, after, limit).await?;
    first(&results)?
        .iter()
        .map(|row| text(row, "id").map(str::to_owned))
        .collect()
}

/// One project as the web list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub id: String,
    pub north_star: String,
    /// The focus statement, if set_focus was ever called.
    pub focus: Option<String>,
    /// Open deferred tasks of each kind.
    pub cleanup: u64,
    pub record: u64,
}

/// Up to `limit` project summaries in id order, after `after` (exclusive), in one statement.
pub async fn project_summaries(
    db: &dyn Sql,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<Summary>, StoreError> {
    let results = projects_after(db, PROJECT_SUMMARIES, after, limit).await?;
    first(&results)?
        .iter()
        .map(|row| {
            Ok(Summary {
                id: text(row, "id")?.to_owned(),
                north_star: text(row, "north_star")?.to_owned(),
                focus: opt_text(row, "statement")?.map(str::to_owned),
                cleanup: count(row, "cleanup")?,
                record: count(row, "record")?,
            })
        })
        .collect()
}

/// Runs one of the paged project queries: `?1` is the id to continue after, `?2` the page size.
async fn projects_after(
    db: &dyn Sql,
    sql: &'static str,
    after: Option<&str>,
    limit: usize,
) -> Rows {
    let limit = Value::Int(i64::try_from(limit).unwrap_or(i64::MAX));
    db.batch(vec![Stmt::new(
        sql,
        vec![after.unwrap_or("").into(), limit],
    )])
    .await
}

fn first(results: &[Vec<Row>]) -> Result<&Vec<Row>, StoreError> {
    results
        .first()
        .ok_or(StoreError::Decode("batch returned no result"))
}

fn text<'a>(row: &'a Row, column: &'static str) -> Result<&'a str, StoreError> {
    row.get(column)
        .and_then(Json::as_str)
        .ok_or(StoreError::Decode(column))
}

fn opt_text<'a>(row: &'a Row, column: &'static str) -> Result<Option<&'a str>, StoreError> {
    match row.get(column) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(_) => Err(StoreError::Decode(column)),
    }
}

/// A count column: D1 hands numbers over as JavaScript doubles, SQLite as integers.
fn count(row: &Row, column: &'static str) -> Result<u64, StoreError> {
    row.get(column)
        .and_then(Json::as_f64)
        .filter(|n| *n >= 0.0 && n.fract() == 0.0)
        .map(|n| n as u64)
        .ok_or(StoreError::Decode(column))
}

fn kind(row: &Row) -> Result<Kind, StoreError> {
    Kind::parse(text(row, "kind")?).ok_or(StoreError::Decode("kind"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_split_into_statements_without_comments() {
        let stmts = split_sql(MIGRATIONS[0].1);
        assert_eq!(stmts.len(), 4);
        assert!(stmts.iter().all(|s| !s.contains("--")));
        assert!(stmts[0].starts_with("CREATE TABLE IF NOT EXISTS project"));
        assert!(stmts[3].starts_with("CREATE INDEX IF NOT EXISTS task_open_deferred"));
    }
}
