//! The D1 adapter: `store::Sql` over a `worker::D1Database`. D1 errors become `StoreError`
//! here, so no `worker::Error` (a JsValue) travels into the core.

use wasm_bindgen::JsValue;
use worker::D1Database;

use crate::store::{LocalFuture, Row, Rows, Sql, Stmt, StoreError, Value};

pub struct D1Store(pub D1Database);

fn backend(e: worker::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

impl Sql for D1Store {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        Box::pin(self.run(stmts))
    }
}

impl D1Store {
    async fn run(&self, stmts: Vec<Stmt>) -> Rows {
        let mut prepared = Vec::with_capacity(stmts.len());
        for stmt in &stmts {
            let params: Vec<JsValue> = stmt
                .params
                .iter()
                .map(|p| match p {
                    Value::Int(i) => JsValue::from_f64(*i as f64),
                    Value::Text(s) => JsValue::from_str(s),
                    Value::Null => JsValue::null(),
                })
                .collect();
            prepared.push(self.0.prepare(stmt.sql).bind(&params).map_err(backend)?);
        }
        // One statement needs no batch wrapper; either way it is one round trip.
        let results = match prepared.len() {
            1 => vec![prepared[0].all().await.map_err(backend)?],
            _ => self.0.batch(prepared).await.map_err(backend)?,
        };
        results
            .iter()
            .map(|r| r.results::<Row>().map_err(backend))
            .collect()
    }
}
