//! The schema: the migration files (the only schema), wrangler's ledger of which are applied
//! (`ensure_schema`), and the gate that lets an isolate's first batch find out whether the schema
//! is current without a round trip of its own (`Gated`). One batch per migration applied; none
//! at all once the schema is known to be current.
//!
//! The gate, as a request meets it: until an isolate has seen one batch succeed, its batches
//! carry one statement more (`SCHEMA_GATE`), which fails the batch, rolled back whole, when the
//! ledger lacks the newest migration or the gate table is missing; the schema is then brought up
//! through the ledger and the batch made again. After the first batch that succeeds the isolate
//! never looks again. A failure of D1 itself is that request's failure, and the next request
//! tries again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::LazyLock;

use super::{each, text, LocalFuture, Query, Rows, Sql, Stmt, StoreError};

/// The migration files, in order, by the names wrangler records them under, each as its SQL
/// without `--` comments (`migration!`). They are the only schema; a test checks this list
/// against migrations/.
pub const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init.sql", migration!("0001_init.sql")),
    ("0002_history.sql", migration!("0002_history.sql")),
    ("0003_search.sql", migration!("0003_search.sql")),
    ("0004_oauth.sql", migration!("0004_oauth.sql")),
    (
        "0005_refresh_answers.sql",
        migration!("0005_refresh_answers.sql"),
    ),
    ("0006_written_at.sql", migration!("0006_written_at.sql")),
    (
        "0007_project_tokens.sql",
        migration!("0007_project_tokens.sql"),
    ),
];

/// A file of migrations/ as the Worker carries it: its SQL with every `--` comment and blank
/// line taken out when the crate is compiled (`uncommented`). The comments are more than half
/// of the files' bytes, and the Worker never reads them: 2,171 bytes of the gzip bundle
macro_rules! migration {
    ($name:literal) => {{
        const FILE: &[u8] = include_bytes!(concat!("../../migrations/", $name));
        const LEN: usize = uncommented(FILE, &mut []);
        const SQL: [u8; LEN] = {
            let mut sql = [0; LEN];
            uncommented(FILE, &mut sql);
            sql
        };
        match core::str::from_utf8(&SQL) {
            Ok(sql) => sql,
            Err(_) => panic!("a migration is not UTF-8"),
        }
    }};
}
use migration;

/// Copies `file` into `out` less its comments (from `--` to the line's end) and the space
/// before them, line by line, each kept line ending in a line break, and leaves out a line
/// with nothing else; returns the length of the whole (what `out` must hold: called with an
/// empty `out` first). No migration holds `--` inside a string literal (a test checks).
pub const fn uncommented(file: &[u8], out: &mut [u8]) -> usize {
    let (mut at, mut len) = (0, 0);
    while at < file.len() {
        let mut end = at;
        while end < file.len() && file[end] != b'\n' {
            end += 1;
        }
        let mut code = at;
        while code < end && !(file[code] == b'-' && code + 1 < end && file[code + 1] == b'-') {
            code += 1;
        }
        while code > at && matches!(file[code - 1], b' ' | b'\t' | b'\r') {
            code -= 1;
        }
        if code > at {
            let mut i = at;
            while i <= code {
                if len < out.len() {
                    out[len] = if i == code { b'\n' } else { file[i] };
                }
                len += 1;
                i += 1;
            }
        }
        at = end + 1;
    }
    len
}

/// Each migration's statements, split once per isolate.
static SCHEMA: LazyLock<Vec<Vec<String>>> =
    LazyLock::new(|| MIGRATIONS.iter().map(|(_, sql)| split_sql(sql)).collect());

/// Splits a migration into statements: `--` comments dropped, split on `;`, except inside a
/// trigger's `BEGIN … END`, whose statements end in `;` too: a `CREATE TRIGGER` runs on to the
/// piece that is `END`. The migrations contain no string literal holding `--` or `;`, which a
/// test checks.
pub fn split_sql(src: &str) -> Vec<String> {
    let without_comments: String = src
        .lines()
        .map(|line| line.split_once("--").map_or(line, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n");
    let mut statements: Vec<String> = Vec::new();
    let mut in_trigger = false;
    for piece in without_comments
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        match statements.last_mut() {
            Some(trigger) if in_trigger => {
                trigger.push_str(";\n");
                trigger.push_str(piece);
                in_trigger = piece != "END";
            }
            _ => {
                in_trigger = piece.starts_with("CREATE TRIGGER");
                statements.push(piece.to_owned());
            }
        }
    }
    statements
}

/// wrangler's migration ledger, created exactly as `wrangler d1 migrations apply` creates it, so
/// either side can go first.
const CREATE_LEDGER: Query = Query::no_rows(
    "CREATE TABLE IF NOT EXISTS d1_migrations(
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT UNIQUE,
		applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)",
);
const APPLIED_MIGRATIONS: Query =
    Query::rows("SELECT name FROM d1_migrations ORDER BY id", &["name"]);
const RECORD_MIGRATION: Query = Query::no_rows("INSERT INTO d1_migrations (name) VALUES (?1)");

/// Brings the database to the current schema through the ledger wrangler keeps: reads which
/// migrations are applied, then applies each missing one in its own atomic batch that first
/// records it. The record comes first so that of two appliers racing, the loser fails on the
/// ledger's UNIQUE name before any ALTER runs, and its batch rolls back whole; it then reads the
/// ledger again and finds the work done. Returns how many migrations it applied. The Worker
/// calls this on an isolate's first request and never again once it succeeds.
pub async fn ensure_schema(db: &dyn Sql) -> Result<usize, StoreError> {
    let mut applied_here = 0;
    let mut retried = false;
    'read: loop {
        let results = db
            .batch(vec![
                Stmt::new(CREATE_LEDGER, Vec::new()),
                Stmt::new(APPLIED_MIGRATIONS, Vec::new()),
            ])
            .await?;
        let ledger = results.get(1).ok_or(StoreError::Decode("ledger"))?;
        let applied = each(ledger, |row| text(row, "name"))?;
        for ((name, _), statements) in MIGRATIONS.iter().zip(SCHEMA.iter()) {
            if applied.contains(name) {
                continue;
            }
            let mut stmts = vec![Stmt::new(RECORD_MIGRATION, vec![(*name).into()])];
            stmts.extend(
                statements
                    .iter()
                    .map(|sql| Stmt::new(Query::no_rows(sql), Vec::new())),
            );
            match db.batch(stmts).await {
                Ok(_) => applied_here += 1,
                // Someone else may have applied it meanwhile: look again, once.
                Err(_) if !retried => {
                    retried = true;
                    continue 'read;
                }
                Err(e) => return Err(e),
            }
        }
        return Ok(applied_here);
    }
}

/// Fails the batch it starts unless the ledger lists the newest migration (`?1`): the insert then
/// puts a value into `gate.schema`, whose constraint refuses every value. Where the gate table
/// itself is missing (a database from before migration 0004), the statement fails as well.
const SCHEMA_GATE: Query = Query::no_rows(
    "INSERT INTO gate (schema) SELECT ?1 \
     WHERE NOT EXISTS (SELECT 1 FROM d1_migrations WHERE name = ?1)",
);

/// Whether a failed first batch failed at the gate: a schema behind, or older than the gate.
fn behind(message: &str) -> bool {
    message.contains("schema_behind") || message.contains("no such table")
}

/// An isolate's storage: until one batch has found the schema current, each batch starts with
/// `SCHEMA_GATE`, so the first request learns that the schema is current inside its own batch,
/// where reading the ledger first cost a round trip of its own (and a table missing there had
/// cost two). When the gate fails, the batch rolled back whole and wrote nothing: the schema is
/// brought up through the ledger (`ensure_schema`) and the batch is made again. After that the
/// isolate never looks again. `current` is the isolate's own flag.
pub struct Gated<'a> {
    pub db: &'a dyn Sql,
    pub current: &'a AtomicBool,
}

impl Sql for Gated<'_> {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        Box::pin(async move {
            if self.current.load(Ordering::Relaxed) {
                return self.db.batch(stmts).await;
            }
            let newest = MIGRATIONS[MIGRATIONS.len() - 1].0;
            let mut gated = Vec::with_capacity(stmts.len() + 1);
            gated.push(Stmt::new(SCHEMA_GATE, vec![newest.into()]));
            gated.extend(stmts.iter().cloned());
            match self.db.batch(gated).await {
                Ok(mut results) => {
                    self.current.store(true, Ordering::Relaxed);
                    results.remove(0);
                    Ok(results)
                }
                Err(StoreError::Backend(message)) if behind(&message) => {
                    ensure_schema(self.db).await?;
                    self.current.store(true, Ordering::Relaxed);
                    self.db.batch(stmts).await
                }
                Err(other) => Err(other),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// A database whose ledger always reads empty and whose every migration batch fails: a
    /// migration that can never apply (not a lost race). After `give_up_after` batches, reads
    /// fail too, so a loop that retried without end still stops.
    struct NeverMigrates {
        batches: Cell<usize>,
        give_up_after: usize,
    }

    impl Sql for NeverMigrates {
        fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
            self.batches.set(self.batches.get() + 1);
            let rows = match (stmts[0].query, self.batches.get() > self.give_up_after) {
                (CREATE_LEDGER, false) => Ok(vec![Vec::new(), Vec::new()]),
                _ => Err(StoreError::Backend("no such table: project".into())),
            };
            Box::pin(std::future::ready(rows))
        }
    }

    /// A failing migration is looked at again once (another applier may have won the race),
    /// then its error is the answer: read, apply, read, apply, and no more.
    #[test]
    fn a_migration_that_keeps_failing_is_retried_once_then_reported() {
        let db = NeverMigrates {
            batches: Cell::new(0),
            give_up_after: 10,
        };
        let outcome = crate::sqlite::block_on(ensure_schema(&db));
        assert!(
            matches!(&outcome, Err(StoreError::Backend(e)) if e == "no such table: project"),
            "{outcome:?}"
        );
        assert_eq!(db.batches.get(), 4);
    }

    /// A database whose every batch fails with the same error, counting the batches.
    struct Refusing {
        batches: Cell<usize>,
        message: &'static str,
    }

    impl Sql for Refusing {
        fn batch(&self, _: Vec<Stmt>) -> LocalFuture<'_, Rows> {
            self.batches.set(self.batches.get() + 1);
            let refused = Err(StoreError::Backend(self.message.into()));
            Box::pin(std::future::ready(refused))
        }
    }

    /// Only a failure at the gate brings the schema up: any other failure of an isolate's first
    /// batch is that batch's answer, and the next batch is gated again.
    #[test]
    fn a_first_batch_that_fails_for_another_reason_is_that_failure() {
        let db = Refusing {
            batches: Cell::new(0),
            message: "D1_ERROR: UNIQUE constraint failed: task.id: SQLITE_CONSTRAINT",
        };
        let current = AtomicBool::new(false);
        let gated = Gated {
            db: &db,
            current: &current,
        };
        let outcome = crate::sqlite::block_on(gated.batch(Vec::new()));
        assert_eq!(outcome, Err(StoreError::Backend(db.message.into())));
        assert_eq!(db.batches.get(), 1);
        assert!(!current.load(Ordering::Relaxed));
        for message in [
            "D1_ERROR: no such table: gate: SQLITE_ERROR",
            "D1_ERROR: CHECK constraint failed: schema_behind: SQLITE_CONSTRAINT",
        ] {
            assert!(behind(message), "{message}");
        }
        assert!(!behind("D1_ERROR: CHECK constraint failed: grant_revoked"));
    }
}
