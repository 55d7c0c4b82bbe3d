//! Sharing a project: the project tokens its owner makes and revokes on its page (a row each in
//! `project_token`, migration 0007; the token itself is sealed, `seal::ProjectToken`, and its
//! row keeps only a keyed hash of it), and deleting a project with everything it holds. Each
//! function is one batch; the caps (live tokens a project holds, tokens made in an hour) ride in
//! the statement that makes one, so no read comes first. Whether a request's project token is
//! still live is `guard`'s.

use super::{each, first, int, text, Query, Sql, Stmt, StoreError, Value};
use crate::auth::scope::Writable;

/// Live tokens one project may have at once: far more than a team's people and machines, few
/// enough that its page lists them all.
pub const TOKENS_PER_PROJECT: i64 = 20;
/// Tokens one project may have made in an hour, revoked ones included: a person makes a few;
/// a script stuck in a loop is stopped here.
pub const MADE_PER_HOUR: i64 = 10;
/// How long a revoked token's row is kept (it counts toward `MADE_PER_HOUR`) before the next
/// token made for its project deletes it.
const KEEP_REVOKED_MS: i64 = 86_400_000;

/// Deletes the project's tokens revoked more than `KEEP_REVOKED_MS` ago (`?2`).
const PRUNE_TOKENS: Query =
    Query::no_rows("DELETE FROM project_token WHERE project_id = ?1 AND revoked_at < ?2");
/// Makes the token, if the project exists and is within both caps: `?6` now, `?7` live tokens
/// at most, `?8` made within the hour at most.
const INSERT_TOKEN: Query = Query::no_rows(
    "INSERT INTO project_token (id, project_id, label, scope, hash, created_at) \
     SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM project WHERE id = ?2) \
     AND (SELECT count(*) FROM project_token WHERE project_id = ?2 AND revoked_at IS NULL) < ?7 \
     AND (SELECT count(*) FROM project_token WHERE project_id = ?2 AND created_at > ?6 - 3600000) < ?8",
);
/// Whether the token was made, and what the caps stood at.
const TOKEN_MADE: Query = Query::rows(
    "SELECT (SELECT count(*) FROM project_token WHERE id = ?1) AS made, \
     (SELECT count(*) FROM project WHERE id = ?2) AS project, \
     (SELECT count(*) FROM project_token WHERE project_id = ?2 AND revoked_at IS NULL) AS live",
    &["made", "project", "live"],
);
/// The project's live tokens, oldest first.
const LIVE_TOKENS: Query = Query::rows(
    "SELECT id, label, scope, created_at, last_used_at FROM project_token \
     WHERE project_id = ?1 AND revoked_at IS NULL ORDER BY created_at, id",
    &["id", "label", "scope", "created_at", "last_used_at"],
);
/// Revokes token `?1` of project `?2` at `?3`, if it is live.
const REVOKE_TOKEN: Query = Query::no_rows(
    "UPDATE project_token SET revoked_at = ?3 \
     WHERE id = ?1 AND project_id = ?2 AND revoked_at IS NULL",
);

/// A token to make: its row's id, the project, its label and scope (`Scope`'s wire form), the
/// keyed hash of the sealed token, and now.
pub struct NewToken<'a> {
    pub id: &'a str,
    pub label: &'a str,
    pub scope: &'a str,
    pub hash: &'a str,
    pub now_ms: i64,
}

/// What making a token came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    Made,
    /// The project does not exist.
    NoProject,
    /// The project has `TOKENS_PER_PROJECT` live tokens already.
    Full,
    /// The project had `MADE_PER_HOUR` tokens made within the hour.
    TooMany,
}

/// Makes a project token's row, within the caps, in one batch that also deletes the project's
/// tokens revoked long ago.
pub async fn make(
    db: &dyn Sql,
    project: Writable<'_>,
    new: &NewToken<'_>,
) -> Result<Made, StoreError> {
    let project_id = project.id();
    let results = db
        .batch(vec![
            Stmt::new(
                PRUNE_TOKENS,
                vec![project_id.into(), Value::Int(new.now_ms - KEEP_REVOKED_MS)],
            ),
            Stmt::new(
                INSERT_TOKEN,
                vec![
                    new.id.into(),
                    project_id.into(),
                    new.label.into(),
                    new.scope.into(),
                    new.hash.into(),
                    Value::Int(new.now_ms),
                    Value::Int(TOKENS_PER_PROJECT),
                    Value::Int(MADE_PER_HOUR),
                ],
            ),
            Stmt::new(TOKEN_MADE, vec![new.id.into(), project_id.into()]),
        ])
        .await?;
    let row = results
        .get(2)
        .and_then(|rows| rows.first())
        .ok_or(StoreError::Decode("token made"))?;
    let count = |column| int(row, column).map(Option::unwrap_or_default);
    Ok(match (count("made")?, count("project")?, count("live")?) {
        (1, _, _) => Made::Made,
        (_, 0, _) => Made::NoProject,
        (_, _, live) if live >= TOKENS_PER_PROJECT => Made::Full,
        _ => Made::TooMany,
    })
}

/// A live project token as its project's page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub id: String,
    pub label: String,
    /// `Scope`'s wire form: `rw:<project>` or `ro:<project>`.
    pub scope: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}

/// The project's live tokens, oldest first.
pub async fn live(db: &dyn Sql, project: Writable<'_>) -> Result<Vec<TokenRow>, StoreError> {
    let results = db
        .batch(vec![Stmt::new(LIVE_TOKENS, vec![project.id().into()])])
        .await?;
    each(first(&results)?, |row| {
        Ok(TokenRow {
            id: text(row, "id")?.to_owned(),
            label: text(row, "label")?.to_owned(),
            scope: text(row, "scope")?.to_owned(),
            created_at: int(row, "created_at")?.unwrap_or_default(),
            last_used_at: int(row, "last_used_at")?,
        })
    })
}

/// Revokes one of the project's tokens now: every request made with it is refused from then
/// on (`guard`). A token already revoked, or of another project, changes nothing.
pub async fn revoke(
    db: &dyn Sql,
    project: Writable<'_>,
    token: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    let params = vec![token.into(), project.id().into(), Value::Int(now_ms)];
    db.batch(vec![Stmt::new(REVOKE_TOKEN, params)]).await?;
    Ok(())
}

/// Whether the project was there to delete, read first in the batch that deletes it.
const PROJECT_THERE: Query = Query::rows(
    "SELECT count(*) AS there FROM project WHERE id = ?1",
    &["there"],
);
/// The statements that delete a project, in the order its rows depend on each other: the search
/// indexes' entries of its events and tasks first (an external-content index is told the values
/// it indexed), then its events, tasks, focus and tokens, its OAuth grants revoked (a grant of
/// one project would reach a new project of the same id), and the project last.
const DELETE_PROJECT: [Query; 8] = [
    Query::no_rows(
        "INSERT INTO event_text (event_text, rowid, value, note, done_when) \
         SELECT 'delete', seq, value, note, done_when FROM event WHERE project_id = ?1",
    ),
    Query::no_rows(
        "INSERT INTO task_text (task_text, rowid, body, evidence) \
         SELECT 'delete', rowid, body, evidence FROM task WHERE project_id = ?1",
    ),
    Query::no_rows("DELETE FROM event WHERE project_id = ?1"),
    Query::no_rows("DELETE FROM task WHERE project_id = ?1"),
    Query::no_rows("DELETE FROM focus WHERE project_id = ?1"),
    Query::no_rows("DELETE FROM project_token WHERE project_id = ?1"),
    Query::no_rows(
        "UPDATE oauth_grant SET revoked_at = ?2, revoked_why = 'project deleted' \
         WHERE scope IN ('rw:' || ?1, 'ro:' || ?1) AND revoked_at IS NULL",
    ),
    Query::no_rows("DELETE FROM project WHERE id = ?1"),
];

/// Deletes the project and everything it holds, in one atomic batch: its rows, its tokens, and
/// the OAuth grants of it alone (revoked). `false` when there was no such project.
pub async fn delete_project(
    db: &dyn Sql,
    project: Writable<'_>,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let id = project.id();
    let mut stmts = vec![Stmt::new(PROJECT_THERE, vec![id.into()])];
    for query in DELETE_PROJECT {
        // Only the grants' statement takes the time.
        let params = match query.sql.contains("?2") {
            true => vec![id.into(), Value::Int(now_ms)],
            false => vec![id.into()],
        };
        stmts.push(Stmt::new(query, params));
    }
    let results = db.batch(stmts).await?;
    let there = first(&results)?
        .first()
        .ok_or(StoreError::Decode("project there"))?;
    Ok(int(there, "there")? == Some(1))
}
