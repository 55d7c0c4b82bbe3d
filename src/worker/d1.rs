//! The D1 adapter: `store::Sql` over a `worker::D1Database`. D1 errors become `StoreError`
//! here, sorted by their text (`store::retry::classify`: passing, overloaded or refused), so no
//! `worker::Error` or `JsValue` travels into the core. A round trip that failed in passing is
//! made once more, the same statements with the same parameters (`store::retry::once`), and
//! only the answer that stays is decoded.
//!
//! A statement alone is bound and run in one call into `d1.js`, its parameters one JSON text
//! (`Stmt::params_json`), and read with `raw()`, each row an array, so D1's client builds no
//! object per row and carries no column names. Its one row (what each tool's statement returns) is
//! read cell by cell; more rows cross as one JSON text (the runtime's own `JSON.stringify`),
//! decoded by the core (`store::rows_from_json`) into cells in the order of the statement's
//! columns: a handful of crossings per statement, where converting the result objects value by
//! value (serde-wasm-bindgen, as `D1Result::results` does) made several per column of every row.
//! A batch's results are objects, their keys checked against the columns. A statement of a batch
//! that returns no rows is not read at all. docs/benchmarks-history.md has the profiles that
//! measured it.

use std::cell::RefCell;

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use worker::js_sys::{Array, JsString, Promise, JSON};
use worker::worker_sys::types::{
    D1Database as D1DatabaseSys, D1PreparedStatement, D1Result as D1ResultSys,
};
use worker::D1Database;

use super::drive::settle;
use crate::store::{self, retry, Cell, LocalFuture, Row, Rows, Sql, Stmt, StoreError, Value};

/// The isolate's D1 binding (`worker::database` looks it up once).
pub struct D1Store(pub &'static D1Database);

thread_local! {
    /// Every statement prepared once per isolate, by the address of its SQL (all of it is
    /// `'static`): preparing hands the SQL text to JavaScript, hundreds of bytes to decode each
    /// time, while `bind` returns a new statement and leaves the prepared one as it was. Sound
    /// because the binding they came from is the isolate's one. A list, not a map: the app has
    /// a few dozen statements, and a hasher would cost bundle size for nothing.
    static PREPARED: RefCell<Vec<(*const u8, D1PreparedStatement)>> = const { RefCell::new(Vec::new()) };
}

/// A failure inside D1 or its binding, classified by its text (which the operator's log keeps):
/// the error's message and, for D1's own errors, their cause. D1 documents its errors by their
/// message (developers.cloudflare.com/d1/observability/debug-d1/); older runtimes put the
/// detail in the cause, hence both.
fn backend(e: JsValue) -> StoreError {
    let text = match e.dyn_ref::<worker::js_sys::Error>() {
        Some(error) => {
            let message = String::from(error.message());
            match error.cause().dyn_ref::<worker::js_sys::Error>() {
                Some(cause) => format!("{message}: {}", String::from(cause.message())),
                None => message,
            }
        }
        None => format!("{e:?}"),
    };
    retry::classify(text)
}

#[wasm_bindgen(module = "/src/worker/d1.js")]
extern "C" {
    /// `statement.bind(...JSON.parse(params)).raw()`.
    #[wasm_bindgen(js_name = bindAndRaw, catch)]
    fn bind_and_raw(statement: &D1PreparedStatement, params: &str) -> Result<Promise, JsValue>;
}

impl Sql for D1Store {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        Box::pin(async move {
            let answer = retry::once(|| self.round_trip(&stmts)).await?;
            decode(answer, &stmts)
        })
    }
}

impl D1Store {
    fn sys(&self) -> &D1DatabaseSys {
        self.0.as_ref().unchecked_ref()
    }

    /// The isolate's prepared statement for `sql`, prepared on first use.
    fn prepared(&self, sql: &'static str) -> Result<D1PreparedStatement, StoreError> {
        let key = sql.as_ptr();
        let cached = PREPARED.with_borrow(|cache| {
            cache
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, statement)| statement.clone())
        });
        if let Some(statement) = cached {
            return Ok(statement);
        }
        let statement = self.sys().prepare(sql).map_err(backend)?;
        PREPARED.with_borrow_mut(|cache| cache.push((key, statement.clone())));
        Ok(statement)
    }

    /// One attempt at the batch, one round trip: the statements bound and sent, and D1's answer
    /// as it came (a statement alone's `raw()` rows, or a batch's results), decoded once it is
    /// the answer that stays (`decode`).
    async fn round_trip(&self, stmts: &[Stmt]) -> Result<JsValue, StoreError> {
        // One statement needs no batch wrapper; either way it is one round trip.
        let sent = if let [stmt] = stmts {
            bind_and_raw(&self.prepared(stmt.query.sql)?, &stmt.params_json())
        } else {
            let mut prepared = Vec::with_capacity(stmts.len());
            for stmt in stmts {
                let params: Array = stmt
                    .params
                    .iter()
                    .map(|p| match p {
                        Value::Int(i) => JsValue::from_f64(*i as f64),
                        Value::Text(s) => JsValue::from_str(s),
                        Value::Null => JsValue::null(),
                    })
                    .collect();
                prepared.push(
                    self.prepared(stmt.query.sql)?
                        .bind(params)
                        .map_err(backend)?,
                );
            }
            let statements: Array = prepared.into_iter().collect();
            self.sys().batch(statements)
        };
        settle(sent.map_err(backend)?).await.map_err(backend)
    }
}

/// D1's answer to the statements of `round_trip` as their rows.
fn decode(answer: JsValue, stmts: &[Stmt]) -> Rows {
    if let [stmt] = stmts {
        let raw: Array = answer.unchecked_into();
        return Ok(vec![match raw.length() {
            0 => Vec::new(),
            1 => vec![row_by_cell(&raw.get(0), stmt.query.columns)?],
            _ => rows(&raw, stmt.query.columns)?,
        }]);
    }
    // Loops, not `map` and `collect` into a `Result`: fewer bytes of wasm (store::each's note).
    let mut all = Vec::with_capacity(stmts.len());
    for (result, stmt) in answer.unchecked_into::<Array>().iter().zip(stmts) {
        all.push(match stmt.query.columns {
            [] => Vec::new(),
            columns => match result.unchecked_ref::<D1ResultSys>().results() {
                Ok(Some(results)) => rows(&results, columns)?,
                Ok(None) => Vec::new(),
                Err(e) => return Err(backend(e)),
            },
        });
    }
    Ok(all)
}

/// One statement's rows, as one JSON text decoded by the core. D1 hands over TEXT as strings,
/// INTEGER as numbers and NULL as null, which JSON carries exactly (the app's integers stay
/// within ±2^53). Never inlined, so a CPU profile (scripts/profile) shows this conversion as a
/// frame of its own.
#[inline(never)]
fn rows(results: &JsValue, columns: &'static [&'static str]) -> Result<Vec<Row>, StoreError> {
    let text: JsString = JSON::stringify(results).map_err(backend)?;
    store::rows_from_json(columns, &String::from(text))
}

/// A statement's one row, read cell by cell: what every tool's statement returns (get_state's is
/// one JSON text, add_task's an id and one). A few crossings per cell cost less than escaping the
/// row into JSON text and unescaping it again; the JSON path is for rows by the dozen.
#[inline(never)]
fn row_by_cell(raw: &JsValue, columns: &'static [&'static str]) -> Result<Row, StoreError> {
    // Not an array (never, from `raw`): its length reads as 0 and the row is refused.
    let raw: &Array = raw.unchecked_ref();
    let mut cells = Vec::with_capacity(raw.length() as usize);
    for i in 0..raw.length() {
        let cell = raw.get(i);
        cells.push(if let Some(text) = cell.as_string() {
            Cell::Text(text)
        } else if let Some(n) = cell.as_f64() {
            // Exactly the integers JSON would have carried: within ±2^53, no fraction.
            match n as i64 {
                i if i as f64 == n && i.unsigned_abs() <= 1 << 53 => Cell::Int(i),
                _ => return Err(StoreError::Decode("a number that is not an integer")),
            }
        } else if cell.is_null() {
            Cell::Null
        } else {
            return Err(StoreError::Decode(
                "a cell that is not text, a number or NULL",
            ));
        });
    }
    Row::new(columns, cells)
}
