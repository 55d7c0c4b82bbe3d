//! The search statements: what was decided and done, found through the trigram indexes of
//! migrations/0003_search.sql (`event_text`, `task_text`), in one statement per call. The
//! query's quoting for FTS5 is here too, so the user's text is only ever a phrase, never FTS5
//! syntax. No rendering here.

use super::{first, int, opt_text, text, Query, Sql, Stmt, StoreError, Value};
use crate::auth::scope::Reach;
use crate::model::{Hit, Hits, Kind, Record};

/// The fewest characters the trigram index can find; a shorter query is matched with LIKE.
pub const TRIGRAM: usize = 3;

/// Both search statements but for how a row is matched. The hits come newest first (a record
/// of unknown time last), a task at the time it was completed, or added while it is open;
/// `total` counts every match before the limit. `?2` keeps one project (NULL: all), `?3` one
/// kind of record (`north_star`, `focus`, or a task kind; NULL: all), `?4` is the limit (cast, so that SQLite
/// does not plan the statement again at each call: `LOAD_STATE` says why).
macro_rules! search_sql {
    ($event_match:literal, $task_match:literal) => {
        concat!(
            "SELECT at, project_id, what, kind, task_id, a, b, c, client, count(*) OVER () AS total \
             FROM (SELECT e.at AS at, e.project_id AS project_id, e.what AS what, NULL AS kind, \
             NULL AS task_id, e.value AS a, e.note AS b, e.done_when AS c, e.client AS client, \
             0 AS part, e.seq AS seq ",
            $event_match,
            " AND e.what <> 'completed' AND (?2 IS NULL OR e.project_id = ?2) \
             AND (?3 IS NULL OR e.what = ?3) \
             UNION ALL SELECT CASE t.status WHEN 'done' THEN t.completed_at ELSE t.created_at END, \
             t.project_id, t.status, t.kind, t.id, t.body, t.evidence, NULL, \
             coalesce(CASE t.status WHEN 'done' THEN t.completed_by ELSE t.created_by END, 'unknown'), \
             1, t.rowid ",
            $task_match,
            " AND (?2 IS NULL OR t.project_id = ?2) AND (?3 IS NULL OR t.kind = ?3)) \
             ORDER BY at DESC NULLS LAST, part DESC, seq DESC LIMIT CAST(?4 AS INTEGER)"
        )
    };
}

const SEARCH_COLUMNS: &[&str] = &[
    "at",
    "project_id",
    "what",
    "kind",
    "task_id",
    "a",
    "b",
    "c",
    "client",
    "total",
];

/// A query of three characters or more: `?1` is an FTS5 phrase (`phrase`), which the trigram
/// index finds wherever it occurs, in any column, case folded.
pub const SEARCH_INDEXED: Query = Query::rows(
    search_sql!(
        "FROM event_text JOIN event e ON e.seq = event_text.rowid WHERE event_text MATCH ?1",
        "FROM task_text JOIN task t ON t.rowid = task_text.rowid WHERE task_text MATCH ?1"
    ),
    SEARCH_COLUMNS,
);

/// A query shorter than a trigram, which the index cannot find: `?1` is a LIKE pattern
/// (`like_pattern`) tried on every indexed column of the same rows, a scan. The pattern is
/// cast: SQLite reads a bound LIKE pattern while it plans (for an index a prefix could use;
/// this one starts with `%`, so none can), and would plan the statement again at every call.
pub const SEARCH_SHORT: Query = Query::rows(
    search_sql!(
        "FROM event e WHERE (e.value LIKE CAST(?1 AS TEXT) ESCAPE '\\' OR e.note LIKE CAST(?1 AS TEXT) ESCAPE '\\' \
         OR e.done_when LIKE CAST(?1 AS TEXT) ESCAPE '\\')",
        "FROM task t WHERE (t.body LIKE CAST(?1 AS TEXT) ESCAPE '\\' OR t.evidence LIKE CAST(?1 AS TEXT) ESCAPE '\\')"
    ),
    SEARCH_COLUMNS,
);

/// The query as one FTS5 phrase: in double quotes, each double quote doubled, so nothing the
/// user typed (`AND`, `*`, `:`, `(`, `NEAR`) is read as FTS5 syntax.
pub fn phrase(query: &str) -> String {
    format!("\"{}\"", query.replace('"', "\"\""))
}

/// The query as a LIKE pattern that matches it anywhere: `%`, `_` and the escape character
/// itself are escaped, so they match only themselves.
pub fn like_pattern(query: &str) -> String {
    let mut out = String::with_capacity(query.len() + 2);
    out.push('%');
    for c in query.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// What to search for and where.
#[derive(Debug, Clone, Copy)]
pub struct Search<'a> {
    pub query: &'a str,
    /// Where to search: the projects the caller reaches, or the one asked for.
    pub reach: Reach<'a>,
    /// `north_star`, `focus`, or a task kind; `None` for every kind of record.
    pub kind: Option<&'a str>,
    pub limit: usize,
}

/// The newest `limit` records that match, in one statement: through the index for a query of
/// `TRIGRAM` characters or more, else with LIKE.
pub async fn search(db: &dyn Sql, search: Search<'_>) -> Result<Hits, StoreError> {
    let (query, pattern) = match search.query.chars().count() >= TRIGRAM {
        true => (SEARCH_INDEXED, phrase(search.query)),
        false => (SEARCH_SHORT, like_pattern(search.query)),
    };
    let params = vec![
        Value::Text(pattern),
        search.reach.only().into(),
        search.kind.into(),
        Value::Int(i64::try_from(search.limit).unwrap_or(i64::MAX)),
    ];
    let results = db.batch(vec![Stmt::new(query, params)]).await?;
    let rows = first(&results)?;
    let mut hits = Vec::with_capacity(rows.len());
    let mut total = 0;
    for row in rows {
        total = int(row, "total")?.unwrap_or(0);
        let record = match (text(row, "what")?, opt_text(row, "kind")?) {
            ("north_star", None) => Record::NorthStar,
            ("focus", None) => Record::Focus,
            (status @ ("open" | "done"), Some(kind)) => Record::Task {
                kind: Kind::parse(kind).ok_or(StoreError::Decode("kind"))?,
                id: text(row, "task_id")?.to_owned(),
                done: status == "done",
            },
            _ => return Err(StoreError::Decode("what")),
        };
        hits.push(Hit {
            at_ms: int(row, "at")?,
            project_id: text(row, "project_id")?.to_owned(),
            record,
            text: text(row, "a")?.to_owned(),
            note: opt_text(row, "b")?.map(str::to_owned),
            done_when: opt_text(row, "c")?.map(str::to_owned),
            by: text(row, "client")?.to_owned(),
        });
    }
    Ok(Hits {
        hits,
        total: u64::try_from(total).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_one_phrase_whatever_it_holds() {
        assert_eq!(phrase("redis"), "\"redis\"");
        assert_eq!(phrase("a \"b\" OR c*"), "\"a \"\"b\"\" OR c*\"");
        assert_eq!(phrase("\""), "\"\"\"\"");
    }

    #[test]
    fn a_like_pattern_matches_only_the_characters_typed() {
        assert_eq!(like_pattern("移行"), "%移行%");
        assert_eq!(like_pattern("5%"), "%5\\%%");
        assert_eq!(like_pattern("a_\\"), "%a\\_\\\\%");
    }
}
