//! In-memory SQLite behind `handoff_mcp::store::Sql`, loaded from the server's own migrations,
//! with D1's semantics (a batch is one transaction). It also adds up the time spent inside
//! `batch`, so the native bench can tell the core's share from the database's. No SQL of its own.

use std::cell::Cell;
use std::time::{Duration, Instant};

use handoff_mcp::store::{Row, Sql, Stmt, StoreError, Value, MIGRATIONS};
use rusqlite::types::ValueRef;
use serde_json::{json, Map, Value as Json};

pub struct Sqlite {
    conn: rusqlite::Connection,
    /// Wall time spent inside `batch` since the last `take_time`.
    spent: Cell<Duration>,
}

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

impl Sqlite {
    pub fn migrated() -> Sqlite {
        let conn = rusqlite::Connection::open_in_memory().expect("in-memory SQLite opens");
        conn.execute_batch("PRAGMA foreign_keys = ON;")
            .expect("foreign keys switch on");
        for (name, sql) in MIGRATIONS {
            conn.execute_batch(sql)
                .unwrap_or_else(|e| panic!("migration {name}: {e}"));
        }
        Sqlite {
            conn,
            spent: Cell::new(Duration::ZERO),
        }
    }

    /// Returns the time spent in `batch` so far and starts counting again from zero.
    pub fn take_time(&self) -> Duration {
        self.spent.replace(Duration::ZERO)
    }

    fn run(&self, stmts: &[Stmt]) -> Result<Vec<Vec<Row>>, StoreError> {
        let tx = self.conn.unchecked_transaction().map_err(backend)?;
        let mut all = Vec::with_capacity(stmts.len());
        for stmt in stmts {
            // Cached statements, because D1 keeps its prepared statements too; re-parsing the SQL
            // on every call would charge the core for work the real database does not repeat.
            let mut prepared = tx.prepare_cached(stmt.sql).map_err(backend)?;
            let params = stmt.params.iter().map(|p| match p {
                Value::Int(i) => rusqlite::types::Value::Integer(*i),
                Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
                Value::Null => rusqlite::types::Value::Null,
            });
            let names: Vec<String> = prepared
                .column_names()
                .iter()
                .map(|s| s.to_string())
                .collect();
            let mut rows = prepared
                .query(rusqlite::params_from_iter(params))
                .map_err(backend)?;
            let mut out = Vec::new();
            while let Some(row) = rows.next().map_err(backend)? {
                let mut map = Map::new();
                for (i, name) in names.iter().enumerate() {
                    let value = match row.get_ref(i).map_err(backend)? {
                        ValueRef::Null => Json::Null,
                        ValueRef::Integer(n) => json!(n),
                        ValueRef::Real(f) => json!(f),
                        ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                        ValueRef::Blob(_) => {
                            return Err(StoreError::Backend("the app stores no blobs".into()))
                        }
                    };
                    map.insert(name.clone(), value);
                }
                out.push(map);
            }
            all.push(out);
        }
        tx.commit().map_err(backend)?;
        Ok(all)
    }
}

impl Sql for Sqlite {
    async fn batch(&self, stmts: Vec<Stmt>) -> Result<Vec<Vec<Row>>, StoreError> {
        let start = Instant::now();
        let result = self.run(&stmts);
        self.spent.set(self.spent.get() + start.elapsed());
        result
    }
}
