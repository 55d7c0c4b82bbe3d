//! The shared SQLite adapter (`handoff_mcp::sqlite`) with a stopwatch: it adds up the time spent
//! inside `batch`, so the native bench can tell the core's share from the database's.

use std::cell::Cell;
use std::time::{Duration, Instant};

use handoff_mcp::store::{LocalFuture, Rows, Sql, Stmt};

pub struct Sqlite {
    inner: handoff_mcp::sqlite::Sqlite,
    /// Wall time spent inside `batch` since the last `take_time`.
    spent: Cell<Duration>,
}

impl Sqlite {
    pub fn migrated() -> Sqlite {
        Sqlite {
            inner: handoff_mcp::sqlite::Sqlite::migrated(),
            spent: Cell::new(Duration::ZERO),
        }
    }

    /// Returns the time spent in `batch` so far and starts counting again from zero.
    pub fn take_time(&self) -> Duration {
        self.spent.replace(Duration::ZERO)
    }
}

impl Sql for Sqlite {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        let start = Instant::now();
        let result = self.inner.run(&stmts);
        self.spent.set(self.spent.get() + start.elapsed());
        Box::pin(std::future::ready(result))
    }
}
