//! The D1 adapter: `store::Sql` over the isolate's D1 binding. D1 errors become `StoreError`
//! here, so no `worker::Error` or `JsValue` travels into the core.
//!
//! A batch crosses into JavaScript once and comes back once (`boundary.js`, `run`): the
//! statements and their parameters go as one JSON text, and the rows return as one JSON text
//! (the runtime's own `JSON.stringify`), parsed by serde_json into the core's `Row`s. Binding
//! each parameter, reading each result and converting the result objects value by value
//! (serde-wasm-bindgen, as `D1Result::results` does) made several crossings per parameter and
//! per column of every row. BENCHMARKS.md has the profile that measured it.

use std::cell::RefCell;

use serde_json::Value as Json;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use worker::js_sys::Promise;
use worker::D1Database;

use super::drive::settle;
use crate::store::{LocalFuture, Rows, Sql, Stmt, StoreError, Value};

#[wasm_bindgen(module = "/src/worker/boundary.js")]
extern "C" {
    /// Prepares `sql` on the binding and returns the index `run` knows it by.
    #[wasm_bindgen(catch)]
    fn prepare(db: &JsValue, sql: &str) -> Result<u32, JsValue>;
    /// Runs `[[index, param, …], …]` as one round trip; resolves to `[[row, …], …]` as text.
    #[wasm_bindgen(catch)]
    fn run(db: &JsValue, spec: &str) -> Result<Promise, JsValue>;
}

/// The isolate's D1 binding (`worker::database` looks it up once).
pub struct D1Store(pub &'static D1Database);

thread_local! {
    /// Every statement prepared once per isolate, by the address of its SQL (all of it is
    /// `'static`), with the index `boundary.js` keeps it under. Sound because the binding they
    /// came from is the isolate's one. A list, not a map: the app has a few dozen statements,
    /// and a hasher would cost bundle size for nothing.
    static PREPARED: RefCell<Vec<(*const u8, u32)>> = const { RefCell::new(Vec::new()) };
}

/// A failure inside D1 or its binding, as text for the operator's log: the error's message and,
/// for D1's own errors, their cause.
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
    StoreError::Backend(text)
}

impl Sql for D1Store {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        Box::pin(self.run(stmts))
    }
}

impl D1Store {
    fn binding(&self) -> &JsValue {
        self.0.as_ref()
    }

    /// The index of the isolate's prepared statement for `sql`, prepared on first use.
    fn prepared(&self, sql: &'static str) -> Result<u32, StoreError> {
        let key = sql.as_ptr();
        let cached = PREPARED.with_borrow(|cache| {
            cache
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, index)| *index)
        });
        if let Some(index) = cached {
            return Ok(index);
        }
        let index = prepare(self.binding(), sql).map_err(backend)?;
        PREPARED.with_borrow_mut(|cache| cache.push((key, index)));
        Ok(index)
    }

    async fn run(&self, stmts: Vec<Stmt>) -> Rows {
        let count = stmts.len();
        let mut spec = Vec::with_capacity(count);
        for stmt in stmts {
            let mut entry = Vec::with_capacity(stmt.params.len() + 1);
            entry.push(Json::from(self.prepared(stmt.sql)?));
            entry.extend(stmt.params.into_iter().map(|p| match p {
                Value::Int(i) => Json::from(i),
                Value::Text(s) => Json::String(s),
                Value::Null => Json::Null,
            }));
            spec.push(Json::Array(entry));
        }
        let spec = Json::Array(spec).to_string();
        let text = settle(run(self.binding(), &spec).map_err(backend)?)
            .await
            .map_err(backend)?;
        let text = text
            .as_string()
            .ok_or(StoreError::Decode("D1 rows are not a JSON text"))?;
        rows(&text, count)
    }
}

/// Each statement's rows from the JSON text `run` resolved to. D1 hands over TEXT as strings,
/// INTEGER as numbers and NULL as null, which JSON carries exactly (the app's integers stay
/// within ±2^53). Never inlined, so a CPU profile (scripts/profile) shows this conversion as a
/// frame of its own.
#[inline(never)]
fn rows(text: &str, count: usize) -> Rows {
    // Parsed as a `Json` from bytes, the very instantiation that parses request bodies, so the
    // bundle carries one JSON parser, not two.
    let all: Json = serde_json::from_slice(text.as_bytes())
        .map_err(|_| StoreError::Decode("D1 rows as JSON"))?;
    let Json::Array(all) = all else {
        return Err(StoreError::Decode("D1 rows are not an array"));
    };
    if all.len() != count {
        return Err(StoreError::Decode("D1 results do not match the statements"));
    }
    all.into_iter()
        .map(|rows| match rows {
            Json::Array(rows) => rows
                .into_iter()
                .map(|row| match row {
                    Json::Object(row) => Ok(row),
                    _ => Err(StoreError::Decode("a D1 row is not an object")),
                })
                .collect(),
            _ => Err(StoreError::Decode("a D1 result is not an array of rows")),
        })
        .collect()
}
