//! The guard of a request whose credential can be taken back while it is in use: an OAuth
//! grant revoked on the Connected clients page, a project token revoked on its project's page
//! (or gone with its project). Every batch such a request sends starts with the guard's
//! statement, which fails the batch, rolled back whole, when the credential is no longer live,
//! so from that moment it reads and writes nothing, at the price of one statement more in the
//! same round trip (`Guarded`). A project token's batch also records when it was last used, to
//! within `USE_STEP_MS`.

use super::{LocalFuture, Query, Rows, Sql, Stmt, StoreError, Value};

/// Fails the batch it starts when grant `?1` is not live (revoked, or gone): the insert then
/// puts a value into `gate.grant_id`, whose constraint refuses every value.
const GRANT_GUARD: Query = Query::no_rows(
    "INSERT INTO gate (grant_id) SELECT ?1 \
     WHERE NOT EXISTS (SELECT 1 FROM oauth_grant WHERE id = ?1 AND revoked_at IS NULL)",
);
/// The same for project token `?1`, whose row must hold its hash `?2`.
const TOKEN_GUARD: Query = Query::no_rows(
    "INSERT INTO token_gate (token_id) SELECT ?1 WHERE NOT EXISTS \
     (SELECT 1 FROM project_token WHERE id = ?1 AND hash = ?2 AND revoked_at IS NULL)",
);
/// When project token `?1` was last used, moved to now (`?2`) once `USE_STEP_MS` has passed.
const TOKEN_USED: Query = Query::no_rows(
    "UPDATE project_token SET last_used_at = ?2 WHERE id = ?1 AND coalesce(last_used_at, 0) < ?2 - ?3",
);
/// How finely a project token's last use is kept: a request writes its row at most once in
/// this long, so a token in steady use costs a write every five minutes, not one a request.
pub const USE_STEP_MS: i64 = 300_000;

/// What a request's storage is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check<'a> {
    /// An OAuth grant, by its id.
    Grant(&'a str),
    /// A project token, by its id and the hash its row holds, used at `now_ms`.
    Token {
        id: &'a str,
        hash: &'a str,
        now_ms: i64,
    },
}

/// The request's storage when its credential can be taken back: each batch starts with the
/// guard (and for a project token, the record of its use). `Ctx::guarded` wraps the request's
/// storage in it, so no surface can forget it, and asks it alone (an empty batch) when the
/// request sent none.
pub struct Guarded<'a> {
    db: &'a dyn Sql,
    check: Check<'a>,
    asked: std::cell::Cell<bool>,
}

impl<'a> Guarded<'a> {
    pub fn new(db: &'a dyn Sql, check: Check<'a>) -> Self {
        Guarded {
            db,
            check,
            asked: std::cell::Cell::new(false),
        }
    }

    /// Whether a batch, and so the guard, has been sent.
    pub fn asked(&self) -> bool {
        self.asked.get()
    }
}

impl Sql for Guarded<'_> {
    fn batch(&self, stmts: Vec<Stmt>) -> LocalFuture<'_, Rows> {
        self.asked.set(true);
        let mut guarded = Vec::with_capacity(stmts.len() + 2);
        match self.check {
            Check::Grant(id) => guarded.push(Stmt::new(GRANT_GUARD, vec![id.into()])),
            Check::Token { id, hash, now_ms } => {
                guarded.push(Stmt::new(TOKEN_GUARD, vec![id.into(), hash.into()]));
                let used = vec![id.into(), Value::Int(now_ms), Value::Int(USE_STEP_MS)];
                guarded.push(Stmt::new(TOKEN_USED, used));
            }
        }
        let added = guarded.len();
        guarded.extend(stmts);
        Box::pin(async move {
            match self.db.batch(guarded).await {
                Ok(mut results) => {
                    results.drain(..added.min(results.len()));
                    Ok(results)
                }
                Err(StoreError::Backend(message)) if message.contains("grant_revoked") => {
                    Err(StoreError::Revoked)
                }
                Err(StoreError::Backend(message)) if message.contains("token_revoked") => {
                    Err(StoreError::TokenRevoked)
                }
                Err(other) => Err(other),
            }
        })
    }
}
