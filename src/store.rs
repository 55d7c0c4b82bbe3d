//! Storage: the `Sql` trait the core reaches D1 through, and every SQL string of the app, typed.
//! Each public function here is exactly one `Sql::batch` call, i.e. one D1 round trip.
//! Must not hold: connection handles, `worker::*` types, or any BEGIN/COMMIT/PRAGMA (a batch is
//! the atomic unit on D1). Parameters are positional (`?1..?N`) so SQLite and D1 read them alike.

use std::fmt::Write;
use std::future::Future;
use std::pin::Pin;

use crate::json_write;

mod export;
pub mod guard;
pub mod oauth;
mod reads;
pub mod retry;
mod rows;
mod schema;
mod search;
pub mod tokens;
mod writes;

pub use export::{import, load_export, Imported, EXPORT_EVENTS, EXPORT_TASKS};
pub use reads::{
    first_project_ids, load_history, load_state, project_ids, project_summaries, Summary,
    HISTORY_LIMIT, LOAD_HISTORY, LOAD_STATE, PROJECT_SUMMARIES,
};
use rows::{each, first, int, kind, opt_text, stamp, text};
pub use rows::{from_json as rows_from_json, Cell, Row};
pub use schema::{ensure_schema, split_sql, Gated, MIGRATIONS};
pub use search::{search, Search, SEARCH_INDEXED, SEARCH_SHORT, TRIGRAM};
pub use writes::{
    add_task, complete_task, set_focus, set_north_star, Added, Completion, NewFocus, Upsert,
    INSERT_TASK,
};

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
