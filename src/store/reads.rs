//! The reads: get_state's one statement (`load_state`), a project's history (`load_history`),
//! and the lists of projects a credential reaches (`project_ids`, `first_project_ids`,
//! `project_summaries`), each one batch of one statement.

use super::{each, first, int, opt_text, rows_from_json, stamp, text, Query, Sql, Stmt};
use super::{Rows, StoreError, Value};
use crate::auth::scope::{Reach, Readable};
use crate::model::{Deferred, Event, EventKind, Focus, History, Kind, State};

/// get_state's one statement: everything it shows, as rows of seven cells (part 0 is the
/// project with the time of its newest write of any kind, part 1 its focus, part 2 its oldest
/// `?2` open deferred tasks with who added each, `seq` their insertion order, part 3 the count
/// of all its open deferred tasks in `seq`), aggregated by SQLite into one JSON array of arrays
/// of cells, so D1 carries one text cell instead of a value per cell; no part 0 when there is
/// no project. The task arms match the partial index `task_open_deferred` term for term, so
/// SQLite reads only open deferred rows. The newest write is the newer of the North Star's time
/// (a confirmation included) and the newest task write (an add or a completion, main tasks
/// included: one step of `task_written`); the focus's own time, which a confirmation moves, is
/// part 1's. The limit
/// (`OPEN_DEFERRED_MAX`, a test holds the two equal) bounds the one value D1 carries (D1 refuses
/// one over 2,000,000 bytes) however many tasks a project stored before the cap existed. It is
/// written into the text, not bound: SQLite reads a bound LIMIT's value while it plans, so every
/// new binding of it throws the prepared statement away and the next call prepares it again
/// (`sqlite3ExprIsInteger` marks the variable; `sqlite3_bind_*` of a marked variable expires
/// the statement). Bound, it cost get_state about 60 % of its instructions natively. A limit
/// that varies is bound as `CAST(?n AS INTEGER)`, which SQLite does not read while it plans
/// (tidy holds every statement to one of the two). The core puts the rows in order itself: the order an
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
WHERE project_id = ?1 AND demoted = 1 AND status = 'open' ORDER BY rowid LIMIT 30) \
UNION ALL SELECT 3, count(*), NULL, NULL, NULL, NULL, NULL FROM task \
WHERE project_id = ?1 AND demoted = 1 AND status = 'open')",
    &["rows"],
);
/// The cells of each row inside get_state's JSON.
const STATE_COLUMNS: &[&str] = &["part", "seq", "a", "b", "c", "d", "e"];
/// Most events the history shows.
pub const HISTORY_LIMIT: usize = 50;
/// A project's history in one statement: part 0 says the project exists, part 1 is its newest
/// events newest first (`HISTORY_LIMIT`, written into the text as `LOAD_STATE`'s limit is), part
/// 2 the count of all its events. Served by `event_by_project`.
pub const LOAD_HISTORY: Query = Query::rows(
    "\
SELECT 0 AS part, 0 AS seq, NULL AS at, NULL AS what, NULL AS value, NULL AS note, NULL AS done_when, \
NULL AS kind, NULL AS client FROM project WHERE id = ?1 \
UNION ALL SELECT * FROM (SELECT 1, seq, at, what, value, note, done_when, kind, client FROM event \
WHERE project_id = ?1 ORDER BY seq DESC LIMIT 50) \
UNION ALL SELECT 2, count(*), NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM event WHERE project_id = ?1 \
ORDER BY part, seq DESC",
    &["part", "seq", "at", "what", "value", "note", "done_when", "kind", "client"],
);
/// A page of project ids; `?3` keeps only that one (a scoped caller's), NULL keeps all.
const PROJECT_IDS: Query = Query::rows(
    "SELECT id FROM project WHERE id > ?1 AND (?3 IS NULL OR id = ?3) \
     ORDER BY id LIMIT CAST(?2 AS INTEGER)",
    &["id"],
);
/// The first `?1` project ids and how many there are in all; `?2` keeps only that one.
const FIRST_PROJECT_IDS: Query = Query::rows(
    "SELECT id, count(*) OVER () AS total FROM project WHERE (?2 IS NULL OR id = ?2) \
     ORDER BY id LIMIT CAST(?1 AS INTEGER)",
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
ORDER BY coalesce(last_at, -1) DESC, id LIMIT CAST(?2 AS INTEGER)",
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

/// Reads everything get_state shows, in one statement. `None` when the project does not exist.
pub async fn load_state(db: &dyn Sql, project: Readable<'_>) -> Result<Option<State>, StoreError> {
    let project_id = project.id();
    let results = db
        .batch(vec![Stmt::new(LOAD_STATE, vec![project_id.into()])])
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
        .batch(vec![Stmt::new(LOAD_HISTORY, vec![project_id.into()])])
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Cell, LocalFuture, Row};

    /// A database whose get_state statement answers with the given JSON text, as SQLite's
    /// aggregate would build it.
    struct StateJson(&'static str);

    impl Sql for StateJson {
        fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
            assert_eq!(stmts[0].query, LOAD_STATE);
            let row = Row::new(LOAD_STATE.columns, vec![Cell::Text(self.0.to_owned())]);
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
}
