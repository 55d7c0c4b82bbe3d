//! Schema upgrades through the migration ledger: a v1 database built from
//! migrations/0001_init.sql as it stands, filled with every shape of v1 data, comes through
//! the Worker's upgrade intact, whatever the ledger held before and whoever upgraded first.
//! (`wrangler d1 migrations apply` on the same files runs in scripts/upgrade against real D1.)

use std::cell::Cell;

use handoff_mcp::sqlite::{block_on, Sqlite};
use handoff_mcp::store::{self, LocalFuture, Rows, Sql, Stmt};
use serde_json::json;

use crate::support::{self, Server};

const V1: &str = include_str!("../../migrations/0001_init.sql");

/// v1 data: every shape of it (see the file).
const V1_DATA: &str = include_str!("../upgrade/v1-data.sql");

/// Every v1 column of every v1 table, in rowid order: what must read back exactly.
fn v1_rows(db: &Sqlite) -> String {
    let mut out = String::new();
    for (table, columns) in [
        ("project", "id, name, north_star"),
        ("focus", "project_id, statement, why"),
        ("task", "id, project_id, body, kind, demoted, status"),
    ] {
        let mut stmt = db
            .conn
            .prepare(&format!("SELECT {columns} FROM {table} ORDER BY rowid"))
            .unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                Ok((0..n)
                    .map(|i| format!("{:?}", r.get::<_, rusqlite::types::Value>(i).unwrap()))
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .unwrap();
        for row in rows {
            out.push_str(&format!("{table}: {}\n", row.unwrap()));
        }
    }
    out
}

fn ledger(db: &Sqlite) -> Vec<String> {
    let mut stmt = db
        .conn
        .prepare("SELECT name FROM d1_migrations ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn count(db: &Sqlite, sql: &str) -> i64 {
    db.conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// A v1 database as the v1 Worker left it (its tables, no ledger), or as wrangler left it
/// (the ledger naming 0001, exactly as `wrangler d1 migrations apply` writes it).
fn v1(with_wrangler_ledger: bool) -> Sqlite {
    let db = Sqlite::from_migrations([V1]);
    db.conn.execute_batch(V1_DATA).unwrap();
    if with_wrangler_ledger {
        db.conn
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS d1_migrations(
                    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE,
                    applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL);
                 INSERT INTO d1_migrations (name) VALUES ('0001_init.sql');",
            )
            .unwrap();
    }
    db
}

fn names() -> Vec<String> {
    store::MIGRATIONS
        .iter()
        .map(|(n, _)| (*n).to_owned())
        .collect()
}

/// The checks every upgraded copy of the v1 data must pass.
fn assert_upgraded(db: Sqlite, before: &str) {
    assert_eq!(v1_rows(&db), before, "v1 rows changed");
    assert_eq!(ledger(&db), names());
    // The history starts with what v1 knew, once: 3 North Stars, 2 focuses, 3 completions.
    assert_eq!(count(&db, "SELECT count(*) FROM event"), 8);
    let s = Server::on(support::Sqlite::wrap(db));
    assert_eq!(
        s.state_texts("alpha"),
        [
            "🎯 NORTH STAR: Ship v1\n▶ 本丸（今やる1つ）: Write the store（理由: everything depends on it）\n\
             — 以下は後処理（北極星達成後・今は着手しない）—\n  [cleanup] remove logging\n  [record] note D1 limits",
            "\nReference data, not a to-do list: when the North Star and the focus were set, and the \
             task_id of each open deferred task, for complete_task once that task is really done.\n\
             north_star: set before the server kept times by unknown\n\
             focus: set before the server kept times by unknown\n\
             The focus is older than the server's timestamps (the limit is 7 days): confirm it \
             (set_focus with the same statement) or replace it before working on it.\n\
             task_id=a-clean-open [cleanup] remove logging\ntask_id=a-rec-open [record] note D1 limits",
        ]
    );
    assert!(s.state_text("beta").ends_with(
        "Only a statement\n— 以下は後処理（北極星達成後・今は着手しない）—\n  [record] tab here \"quoted\"\n  [cleanup] second, after the record"
    ));
    assert!(s.state_texts("gamma")[1].contains("\nfocus: not set yet\n"));
    assert_eq!(
        s.read("handoff://projects/alpha/history"),
        "History, newest first (times UTC):\n\
         (time unknown)  record task completed: noted the quota — by unknown\n\
         (time unknown)  cleanup task completed: removed the flag — by unknown\n\
         (time unknown)  main task completed: old main — by unknown\n\
         (time unknown)  focus set: Write the store — why: everything depends on it — by unknown\n\
         (time unknown)  north star set: Ship v1 — by unknown"
    );
    // And the upgraded database takes v2 writes.
    s.ok(
        "complete_task",
        json!({"task_id": "a-clean-open", "evidence": "PR #1"}),
    );
    assert!(s
        .read("handoff://projects/alpha/history")
        .contains("\n2026-12-01 08:00  cleanup task completed: remove logging — evidence: PR #1 — by owner (wire-test/0)\n"));
}

#[test]
fn a_v1_database_of_the_old_worker_upgrades_on_the_first_request() {
    let db = v1(false);
    let before = v1_rows(&db);
    // No ledger: 0001 (all IF NOT EXISTS, so a no-op on these tables) is recorded, then 0002,
    // 0003, 0004, 0005, 0006 and 0007.
    assert_eq!(block_on(store::ensure_schema(&db)).unwrap(), 7);
    assert_eq!(block_on(store::ensure_schema(&db)).unwrap(), 0);
    assert_upgraded(db, &before);
}

#[test]
fn a_v1_database_wrangler_migrated_upgrades_on_the_first_request() {
    let db = v1(true);
    let before = v1_rows(&db);
    assert_eq!(block_on(store::ensure_schema(&db)).unwrap(), 6);
    assert_upgraded(db, &before);
}

#[test]
fn a_worker_finds_the_schema_current_when_wrangler_went_first() {
    // wrangler's way: each file, then its ledger row, in one batch.
    let db = v1(true);
    let before = v1_rows(&db);
    for (name, _) in &store::MIGRATIONS[1..] {
        wrangler_applies(&db, name);
    }
    assert_eq!(block_on(store::ensure_schema(&db)).unwrap(), 0);
    assert_upgraded(db, &before);
}

/// What `wrangler d1 migrations apply` does with one file: its text, then its ledger row, in
/// one transaction.
fn wrangler_applies(db: &Sqlite, name: &str) {
    let (_, sql) = store::MIGRATIONS.iter().find(|(n, _)| *n == name).unwrap();
    db.conn
        .execute_batch(&format!(
            "BEGIN; {sql}\nINSERT INTO d1_migrations (name) values ('{name}'); COMMIT;"
        ))
        .unwrap();
}

/// A database the v2 Worker kept (0001 and 0002, with v1's rows and a history written by the
/// v2 tools) finds all of it through the search once 0003 is applied, exactly as a database
/// that had the index from the start.
#[test]
fn a_database_at_0002_finds_what_it_held_once_upgraded() {
    let db = v1(true);
    wrangler_applies(&db, "0002_history.sql");
    let old = Server::on(support::Sqlite::wrap(db));
    crate::search::seed(&old);
    assert_eq!(block_on(store::ensure_schema(&old.db)).unwrap(), 5);
    let fresh = Server::new();
    crate::search::seed(&fresh);
    for query in ["redis", "ログイン画面", "移行", "Cargo"] {
        let found = crate::search::search(&old, json!({"query": query}));
        assert_eq!(
            found,
            crate::search::search(&fresh, json!({"query": query}))
        );
        assert!(!found.starts_with("No record"), "{query}");
    }
    // v1's rows, which have no time, come last, with the client unknown.
    assert_eq!(
        crate::search::search(&old, json!({"query": "logging"})),
        "Records, not tasks to do: what was decided and done that matches \"logging\", newest \
         first (times UTC). get_state says what to do now.\n\
         (time unknown)  alpha  cleanup task open, task_id=a-clean-open: remove logging — by unknown\n\
         1 record matches."
    );
    assert!(
        crate::search::search(&old, json!({"query": "quota"})).contains(
            "\n(time unknown)  alpha  record task completed: noted the quota — by unknown\n"
        )
    );
    assert!(crate::search::search(&old, json!({"query": "everything depends"})).contains(
        "\n(time unknown)  alpha  focus set: Write the store — why: everything depends on it — by unknown\n"
    ));
}

/// An adapter that lets another upgrader finish just after this one read the ledger, as a
/// second isolate (or `wrangler d1 migrations apply`) would.
struct Raced<'a> {
    inner: &'a Sqlite,
    other: &'a Sqlite,
    batches: Cell<usize>,
}

impl Sql for Raced<'_> {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        self.batches.set(self.batches.get() + 1);
        if self.batches.get() == 2 {
            block_on(store::ensure_schema(self.other)).unwrap();
        }
        self.inner.batch(stmts)
    }
}

#[test]
fn a_worker_that_read_an_old_ledger_while_another_upgraded_neither_fails_nor_redoes() {
    let dir = std::env::temp_dir().join(format!("handoff-upgrade-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("v1.sqlite");
    let _ = std::fs::remove_file(&path);
    {
        let seed = Sqlite::on(rusqlite::Connection::open(&path).unwrap());
        seed.conn.execute_batch(V1).unwrap();
        seed.conn.execute_batch(V1_DATA).unwrap();
    }
    let open = || Sqlite::on(rusqlite::Connection::open(&path).unwrap());
    let (mine, theirs) = (open(), open());
    let before = v1_rows(&mine);
    let raced = Raced {
        inner: &mine,
        other: &theirs,
        batches: Cell::new(0),
    };
    // Mine read "nothing applied"; theirs then applied both; my first apply fails on the ledger,
    // rolls back whole, and a second read finds the work done.
    assert_eq!(block_on(store::ensure_schema(&raced)).unwrap(), 0);
    assert!(raced.batches.get() >= 3);
    assert_upgraded(mine, &before);
    drop(theirs);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Counts each batch's statements on the way to SQLite.
struct Counting<'a> {
    db: &'a Sqlite,
    statements: std::cell::RefCell<Vec<usize>>,
}

impl Sql for Counting<'_> {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        self.statements.borrow_mut().push(stmts.len());
        self.db.batch(stmts)
    }
}

fn first_ids(db: &dyn Sql) -> Vec<String> {
    let reach = handoff_mcp::auth::scope::Scope::All;
    block_on(store::project_ids(db, None, 10, reach.reach())).unwrap()
}

/// An isolate finds the schema current inside its first batch: one statement more, no round
/// trip of its own, and nothing more after that.
#[test]
fn a_current_schema_is_found_in_the_first_batch_itself() {
    let db = Sqlite::migrated();
    db.conn
        .execute_batch("INSERT INTO project (id, name, north_star) VALUES ('p', 'p', 'n')")
        .unwrap();
    let counting = Counting {
        db: &db,
        statements: Default::default(),
    };
    let current = std::sync::atomic::AtomicBool::new(false);
    let gated = store::Gated {
        db: &counting,
        current: &current,
    };
    assert_eq!(first_ids(&gated), ["p"]);
    assert_eq!(first_ids(&gated), ["p"]);
    assert_eq!(*counting.statements.borrow(), [2, 1]);
    assert_eq!(count(&db, "SELECT count(*) FROM gate"), 0);
}

/// A database behind (a v1 one, older than the gate; or one whose ledger lacks the newest
/// migration) fails the first batch at the gate, with nothing written; the schema is brought up
/// and the batch made again, and its answer is the current schema's.
#[test]
fn a_schema_behind_is_brought_up_by_the_first_batch_that_finds_it() {
    for behind in ["v1", "ledger"] {
        let db = match behind {
            "v1" => v1(false),
            _ => {
                let db = Sqlite::migrated();
                db.conn
                    .execute_batch(
                        "INSERT INTO project (id, name, north_star) VALUES ('alpha', 'alpha', 'n');
                         DROP INDEX project_token_by_project;
                         DROP TABLE project_token;
                         DROP TABLE token_gate;
                         DELETE FROM d1_migrations WHERE name = '0007_project_tokens.sql'",
                    )
                    .unwrap();
                db
            }
        };
        let counting = Counting {
            db: &db,
            statements: Default::default(),
        };
        let current = std::sync::atomic::AtomicBool::new(false);
        let gated = store::Gated {
            db: &counting,
            current: &current,
        };
        let ids = first_ids(&gated);
        assert!(ids.contains(&"alpha".to_owned()), "{behind}: {ids:?}");
        assert_eq!(ledger(&db), names(), "{behind}");
        assert!(current.load(std::sync::atomic::Ordering::Relaxed));
        let made = counting.statements.borrow().len();
        first_ids(&gated);
        assert_eq!(counting.statements.borrow().len(), made + 1, "{behind}");
        assert_eq!(*counting.statements.borrow().last().unwrap(), 1, "{behind}");
    }
}
