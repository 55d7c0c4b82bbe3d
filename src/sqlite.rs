//! SQLite behind `store::Sql`, with D1's semantics (a batch is one transaction, foreign keys on,
//! rows decoded by their statement's column list), for the native tests, the bench and the fuzz target. Built only
//! with the `sqlite` feature, never into the Worker. No SQL of its own beyond the migrations.
//! `Faulty` is the same adapter failing where D1 can (before a batch, at one of its statements,
//! after it committed), through the D1 adapter's retry (`store::retry::once`).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::ready;

use rusqlite::types::{Value as SqlValue, ValueRef};

use crate::auth::oauth::Fetched;
use crate::auth::scope::Credential;
use crate::config::Config;
use crate::context::{Caller, Ctx};
use crate::http::{self, Headers, Response};
use crate::route::{self, Plan};
use crate::store::{self, retry, LocalFuture, Row, Rows, Sql, Stmt, StoreError, Value};

pub struct Sqlite {
    pub conn: rusqlite::Connection,
}

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

impl Sqlite {
    /// A database on `conn`, with foreign keys on as D1 has them.
    pub fn on(conn: rusqlite::Connection) -> Sqlite {
        conn.execute_batch("PRAGMA foreign_keys = ON;")
            .expect("foreign keys switch on");
        Sqlite { conn }
    }

    /// An in-memory database with the given migration texts run in order and no ledger: a
    /// database as an older Worker left it.
    pub fn from_migrations<'a>(migrations: impl IntoIterator<Item = &'a str>) -> Sqlite {
        let db = Sqlite::on(rusqlite::Connection::open_in_memory().expect("SQLite opens"));
        for sql in migrations {
            db.conn
                .execute_batch(sql)
                .unwrap_or_else(|e| panic!("migration fails: {e}"));
        }
        db
    }

    /// An in-memory database brought to the current schema the way the Worker does it, through
    /// the migration ledger (`store::ensure_schema`). The schema is built once per thread and
    /// copied page by page after that: SQLite's ALTER TABLE re-reads the whole schema each time,
    /// which would otherwise dominate a suite that starts every case from a fresh database.
    pub fn migrated() -> Sqlite {
        thread_local! {
            static TEMPLATE: Sqlite = {
                let db = Sqlite::from_migrations([]);
                block_on(store::ensure_schema(&db)).expect("the migrations apply");
                db
            };
        }
        let mut conn = rusqlite::Connection::open_in_memory().expect("SQLite opens");
        TEMPLATE.with(|template| {
            rusqlite::backup::Backup::new(&template.conn, &mut conn)
                .and_then(|backup| backup.step(-1))
                .expect("the schema copies");
        });
        Sqlite::on(conn)
    }

    /// Runs a batch synchronously: what `Sql::batch` does, for callers that time it.
    pub fn run(&self, stmts: &[Stmt]) -> Result<Vec<Vec<Row>>, StoreError> {
        self.run_failing(stmts, None)
    }

    /// `run`, but with `failing`, statement `k` fails with `error` where it would have run: the
    /// statements before it ran, and the transaction rolls back whole, as a D1 batch does.
    fn run_failing(
        &self,
        stmts: &[Stmt],
        mut failing: Option<(usize, StoreError)>,
    ) -> Result<Vec<Vec<Row>>, StoreError> {
        let tx = self.conn.unchecked_transaction().map_err(backend)?;
        let mut all = Vec::with_capacity(stmts.len());
        for (k, stmt) in stmts.iter().enumerate() {
            if let Some((_, error)) = failing.take_if(|(at, _)| *at == k) {
                return Err(error);
            }
            // Cached, as D1 keeps its prepared statements: re-parsing on every call would charge
            // the core, in the bench, for work the real database does not repeat.
            let mut prepared = tx.prepare_cached(stmt.query.sql).map_err(backend)?;
            let params = stmt.params.iter().map(|p| match p {
                Value::Int(i) => SqlValue::Integer(*i),
                Value::Text(s) => SqlValue::Text(s.clone()),
                Value::Null => SqlValue::Null,
            });
            // The statement's own columns must be the ones its `Query` lists, in order: every
            // row the Worker reads is decoded by that list.
            if prepared.column_names() != stmt.query.columns {
                return Err(StoreError::Decode(
                    "a statement's columns are not the ones its Query lists",
                ));
            }
            let mut rows = prepared
                .query(rusqlite::params_from_iter(params))
                .map_err(backend)?;
            let mut out = Vec::new();
            while let Some(row) = rows.next().map_err(backend)? {
                let cells = (0..stmt.query.columns.len())
                    .map(|i| match row.get_ref(i).map_err(backend)? {
                        ValueRef::Null => Ok(store::Cell::Null),
                        ValueRef::Integer(n) => Ok(store::Cell::Int(n)),
                        ValueRef::Text(t) => {
                            Ok(store::Cell::Text(String::from_utf8_lossy(t).into_owned()))
                        }
                        ValueRef::Real(_) => Err(StoreError::Decode("a real number")),
                        ValueRef::Blob(_) => Err(StoreError::Decode("a blob")),
                    })
                    .collect::<Result<_, _>>()?;
                out.push(Row::new(stmt.query.columns, cells)?);
            }
            all.push(out);
        }
        // A fault planned past the last statement would let the batch commit unnoticed.
        assert!(
            failing.is_none(),
            "a fault at a statement the batch does not have"
        );
        tx.commit().map_err(backend)?;
        Ok(all)
    }
}

impl Sql for Sqlite {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        let rows = self.run(&stmts);
        Box::pin(ready(rows))
    }
}

/// Where a planned fault strikes a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Before the batch: nothing runs.
    Before,
    /// At statement k: the ones before it ran, then the batch rolls back whole.
    Statement(usize),
    /// After the batch committed: its answer is lost on the way back.
    AfterCommit,
}

/// A planned fault: where it strikes, and the error the adapter reports (for D1's own failures,
/// `store::retry::classify` of the message D1 would send).
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub point: Point,
    pub error: StoreError,
}

/// SQLite failing where D1 can, for the fault tests: each attempt at a batch takes the next
/// planned fault, if any, and a batch runs through the one retry the D1 adapter runs it through.
pub struct Faulty {
    pub db: Sqlite,
    plan: RefCell<VecDeque<Option<Fault>>>,
    /// Each attempt's statement count, in order.
    attempts: RefCell<Vec<usize>>,
}

impl Faulty {
    pub fn new(db: Sqlite) -> Faulty {
        Faulty {
            db,
            plan: RefCell::new(VecDeque::new()),
            attempts: RefCell::new(Vec::new()),
        }
    }

    /// What the next attempts meet, one each, in order (`None`: that attempt runs clean);
    /// attempts after them run clean.
    pub fn plan(&self, faults: impl IntoIterator<Item = Option<Fault>>) {
        self.plan.borrow_mut().extend(faults);
    }

    /// How many statements each attempt at a batch had, in order (a retry is one more).
    pub fn attempts(&self) -> Vec<usize> {
        self.attempts.borrow().clone()
    }

    /// One attempt at the batch, meeting the next planned fault.
    fn attempt(&self, stmts: &[Stmt]) -> Rows {
        self.attempts.borrow_mut().push(stmts.len());
        let Some(Fault { point, error }) = self.plan.borrow_mut().pop_front().flatten() else {
            return self.db.run(stmts);
        };
        match point {
            Point::Before => Err(error),
            Point::Statement(k) => self.db.run_failing(stmts, Some((k, error))),
            Point::AfterCommit => self.db.run(stmts).and(Err(error)),
        }
    }
}

impl Sql for Faulty {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        Box::pin(async move { retry::once(|| ready(self.attempt(&stmts))).await })
    }
}

/// Serves one request to an MCP path (`/<token>/mcp`, `/mcp` with an Authorization header) as
/// the Worker does: plan, then the body, with the scope the plan found in place of `ctx`'s.
/// For the native tests, the bench and the fuzz target.
pub fn serve_mcp(
    config: &Config,
    method: &str,
    path: &str,
    headers: &Headers,
    body: &[u8],
    ctx: &Ctx<'_>,
) -> Response {
    let req = http::Request {
        method,
        path,
        query: None,
        headers,
        own_origin: "",
        now_ms: ctx.clock.now_ms(),
    };
    serve(&req, config, body, ctx)
}

/// The context with the credential the plan found, as the Worker builds it.
fn scoped<'a>(ctx: &Ctx<'a>, credential: Credential) -> Ctx<'a> {
    Ctx {
        caller: Caller {
            credential: credential.name().to_owned(),
            scope: credential.scope,
            grant: credential.grant,
            minted: credential.minted,
            ..ctx.caller.clone()
        },
        ..*ctx
    }
}

/// Serves one request as the Worker does (`route::plan`, then `route::serve`), for every plan but
/// the SSE ones, which need a Durable Object. A client metadata document the plan asks for is
/// looked up in `documents` (URL → what the fetch came to) instead of fetched.
pub fn serve(req: &http::Request<'_>, config: &Config, body: &[u8], ctx: &Ctx<'_>) -> Response {
    serve_fetching(req, config, body, ctx, &[]).0
}

/// `serve`, with the client metadata documents a fetch would find, and whether the response
/// refused a presented token (which the Worker counts against the client's address).
pub fn serve_fetching(
    req: &http::Request<'_>,
    config: &Config,
    body: &[u8],
    ctx: &Ctx<'_>,
    documents: &[(&str, Fetched)],
) -> (Response, bool) {
    match route::plan(req, config) {
        Plan::Respond(response) => (response, false),
        // No rate limiter natively: every failure is within the limit (the answer past it is
        // `auth::check::too_many_failures`, which its tests call).
        Plan::Denied(refusal) => (refusal, true),
        Plan::Serve {
            endpoint,
            credential,
        } => {
            let ctx = scoped(ctx, credential);
            let served = route::serve(&endpoint, req.headers, body, &ctx, config);
            (block_on(served), false)
        }
        Plan::OAuth { step, fetch } => {
            let missing = Fetched::Failed("no such document in the test");
            let fetched = fetch.map(|url| {
                documents
                    .iter()
                    .find(|(known, _)| *known == url)
                    .map_or(missing, |(_, fetched)| fetched.clone())
            });
            let served =
                route::serve_oauth(step, req, body, fetched.as_ref(), config, ctx.db, ctx.ids);
            let outcome = block_on(served);
            (outcome.response, outcome.denied)
        }
        other => panic!("{} planned as {other:?}", req.path),
    }
}

/// Runs a core future to completion over SQLite, which answers synchronously: the future must
/// be ready at the first poll. One that is still pending would wait for nothing that can ever
/// wake it, so it fails loudly instead of spinning.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => panic!("a core future waited on SQLite, which never waits"),
    }
}
