//! The shared SQLite adapter (`handoff_mcp::sqlite`) with a stopwatch: it adds up the time spent
//! inside `batch`, so the native bench can tell the core's share from the database's. It can
//! also keep every batch it ran, so the statements the core sends can be sent elsewhere
//! (`statement`).

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use handoff_mcp::store::{LocalFuture, Rows, Sql, Stmt};

pub struct Sqlite {
    inner: handoff_mcp::sqlite::Sqlite,
    /// Wall time spent inside `batch` since the last `take_time`.
    spent: Cell<Duration>,
    /// Every batch run since `record` was called, in order; `None` while not recording.
    recorded: RefCell<Option<Vec<Vec<Stmt>>>>,
}

impl Sqlite {
    pub fn migrated() -> Sqlite {
        Sqlite {
            inner: handoff_mcp::sqlite::Sqlite::migrated(),
            spent: Cell::new(Duration::ZERO),
            recorded: RefCell::new(None),
        }
    }

    /// Keeps every batch run from now on, for `take_recorded`.
    pub fn record(&self) {
        self.recorded.replace(Some(Vec::new()));
    }

    /// The batches run since `record` (or since the last call), in order; recording goes on.
    pub fn take_recorded(&self) -> Vec<Vec<Stmt>> {
        self.recorded
            .borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Returns the time spent in `batch` so far and starts counting again from zero.
    pub fn take_time(&self) -> Duration {
        self.spent.replace(Duration::ZERO)
    }
}

impl Sql for Sqlite {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        if let Some(all) = self.recorded.borrow_mut().as_mut() {
            all.push(stmts.clone());
        }
        let start = Instant::now();
        let result = self.inner.run(&stmts);
        self.spent.set(self.spent.get() + start.elapsed());
        Box::pin(std::future::ready(result))
    }
}
