//! OAuth grants in D1 (migrations/0004_oauth.sql, 0005): made when a code is exchanged, renewed
//! when a refresh token is used, listed and revoked on the human view (the guard that makes every
//! batch of a request carrying an access token fail once its grant is revoked is `guard`'s). Each
//! function is one batch. What a code or token says is checked before these run (`oauth`);
//! here only what needs the stored grant: that a code is used once, that a refresh token is the
//! current one (or the one before it, within `GRACE_MS` and `ANSWERS_MOST`), that a grant is
//! live.

use super::{each, first, int, text, Query, Sql, Stmt, StoreError, Value};
use crate::auth::scope::{Reach, WriteReach};

/// How long after a refresh the refresh token it replaced is still taken, once more: long
/// enough for a client whose answer was lost to try again, short enough that a stolen one is of
/// no use later. Used after that, it revokes the grant.
pub const GRACE_MS: i64 = 60_000;
/// How often one refresh's answer (the grant's next pair of tokens) is given at most: by the
/// rotation, and once more to the token it replaced within `GRACE_MS` (claude.ai refreshes from
/// two egress addresses; the TypeScript SDK sends two refreshes at once). The replaced token
/// presented once more than that was seen by someone else: it revokes the grant, so a second
/// holder cannot follow the client's chain of tokens by presenting each one again.
pub const ANSWERS_MOST: i64 = 2;
/// Live grants one configured token may have at once: far more than a person's clients, few
/// enough that the table stays small. Past it an exchange is refused with a sentence that says
/// to revoke some on the page.
pub const GRANTS_PER_TOKEN: i64 = 50;
/// How long a revoked or expired grant is kept (so its client is told it was revoked, not that
/// it never was) before an exchange deletes it.
pub const KEEP_ENDED_MS: i64 = 30 * 86_400_000;

/// A code's use that revoked its grant: a code used twice was seen by someone else (RFC 6749
/// §4.1.2), so the grant made with it ends.
const REVOKE_REPLAYED_CODE: Query = Query::no_rows(
    "UPDATE oauth_grant SET revoked_at = ?2, revoked_why = 'code used twice' \
     WHERE code_hash = ?1 AND revoked_at IS NULL",
);
/// Makes the grant, unless its code was used before or the token has `?12` live grants.
const INSERT_GRANT: Query = Query::no_rows(
    "INSERT INTO oauth_grant (id, code_hash, client_id, client_name, scope, source, created_at, \
     last_used_at, refresh_hash, expires_at) \
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9 \
     WHERE NOT EXISTS (SELECT 1 FROM oauth_grant WHERE code_hash = ?2) \
     AND (SELECT count(*) FROM oauth_grant WHERE source = ?6 AND revoked_at IS NULL \
     AND expires_at > ?7) < ?10",
);
/// Deletes grants that ended more than `KEEP_ENDED_MS` ago.
const PRUNE_GRANTS: Query =
    Query::no_rows("DELETE FROM oauth_grant WHERE coalesce(revoked_at, expires_at) < ?1");
/// Whether the grant was made, and whether its code had been used before.
const GRANT_MADE: Query = Query::rows(
    "SELECT (SELECT count(*) FROM oauth_grant WHERE id = ?1) AS made, \
     (SELECT count(*) FROM oauth_grant WHERE code_hash = ?2 AND id <> ?1) AS replayed",
    &["made", "replayed"],
);

/// A grant to make from an exchanged code.
pub struct NewGrant<'a> {
    pub id: &'a str,
    pub code_hash: &'a str,
    pub client_id: &'a str,
    pub client_name: &'a str,
    pub scope: &'a str,
    pub source: &'a str,
    pub refresh_hash: &'a str,
    pub now_ms: i64,
    pub expires_at: i64,
}

/// What exchanging a code came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    Made,
    /// The code was used before: nothing was made, and the grant made with it is revoked.
    Replayed,
    /// The token that made it has `GRANTS_PER_TOKEN` live grants already.
    TooMany,
}

/// Makes a grant for an exchanged code, in one batch that also revokes the grant of a code used
/// twice and deletes grants long ended.
pub async fn make_grant(db: &dyn Sql, new: &NewGrant<'_>) -> Result<Made, StoreError> {
    let results = db
        .batch(vec![
            Stmt::new(
                REVOKE_REPLAYED_CODE,
                vec![new.code_hash.into(), Value::Int(new.now_ms)],
            ),
            Stmt::new(
                INSERT_GRANT,
                vec![
                    new.id.into(),
                    new.code_hash.into(),
                    new.client_id.into(),
                    new.client_name.into(),
                    new.scope.into(),
                    new.source.into(),
                    Value::Int(new.now_ms),
                    new.refresh_hash.into(),
                    Value::Int(new.expires_at),
                    Value::Int(GRANTS_PER_TOKEN),
                ],
            ),
            Stmt::new(PRUNE_GRANTS, vec![Value::Int(new.now_ms - KEEP_ENDED_MS)]),
            Stmt::new(GRANT_MADE, vec![new.id.into(), new.code_hash.into()]),
        ])
        .await?;
    let row = results
        .get(3)
        .and_then(|rows| rows.first())
        .ok_or(StoreError::Decode("grant made"))?;
    let count = |column| int(row, column).map(|n| n.unwrap_or_default() > 0);
    Ok(match (count("made")?, count("replayed")?) {
        (true, _) => Made::Made,
        (false, true) => Made::Replayed,
        (false, false) => Made::TooMany,
    })
}

/// The parameters of a refresh's statements: `?1` the grant, `?2` the client, `?3` the presented
/// token's generation, `?4` its hash, `?5` the next token's hash, `?6` now, `?7` the grant's new
/// end, `?8` the grace; `2` is `ANSWERS_MOST` (a test holds them together). Each statement reads the grant as it stood before
/// the batch or as the one before it left it, so the order below is the rule.
///
/// First: a token of this grant that is neither its current one nor the one just replaced
/// (within the grace, its answer given fewer than twice) was used after it was replaced, so
/// someone else holds it: the grant, its whole family of tokens, ends.
const REVOKE_REPLAYED_REFRESH: Query = Query::no_rows(
    "UPDATE oauth_grant SET revoked_at = ?6, revoked_why = 'refresh token used twice' \
     WHERE id = ?1 AND client_id = ?2 AND revoked_at IS NULL \
     AND NOT (generation = ?3 AND refresh_hash = ?4) \
     AND NOT (generation = ?3 + 1 AND previous_hash = ?4 AND rotated_at > ?6 - ?8 \
     AND answers < 2)",
);
/// Then the current token moves the grant on to the next generation, whose answer is not given
/// yet (`ROTATED_ALREADY` counts this one); the grant lives on.
const ROTATE: Query = Query::no_rows(
    "UPDATE oauth_grant SET generation = ?3 + 1, previous_hash = refresh_hash, \
     refresh_hash = ?5, rotated_at = ?6, last_used_at = ?6, expires_at = ?7, answers = 0 \
     WHERE id = ?1 AND client_id = ?2 AND generation = ?3 AND refresh_hash = ?4 \
     AND revoked_at IS NULL AND expires_at > ?6",
);
/// The token just replaced finds the grant moved on to the token it is given: its answer is
/// counted, up to twice. That is every answer: after `ROTATE` in the same batch (the first), and
/// within the grace for the token presented again (a retry whose answer was lost, a refresh sent
/// twice at once). A batch made again after its answer was lost is such a presentation.
const ROTATED_ALREADY: Query = Query::no_rows(
    "UPDATE oauth_grant SET last_used_at = ?6, expires_at = ?7, answers = answers + 1 \
     WHERE id = ?1 AND client_id = ?2 AND generation = ?3 + 1 AND previous_hash = ?4 \
     AND rotated_at > ?6 - ?8 AND answers < 2 AND revoked_at IS NULL AND expires_at > ?6",
);
/// Last, whether the grant now holds the next token, for this client.
const REFRESHED: Query = Query::rows(
    "SELECT scope, client_name, (refresh_hash = ?2 AND revoked_at IS NULL) AS renewed \
     FROM oauth_grant WHERE id = ?1 AND client_id = ?3",
    &["scope", "client_name", "renewed"],
);

/// A grant renewed by a refresh token: what the new access token reaches, and for whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renewed {
    pub scope: String,
    pub client_name: String,
}

/// A refresh token presented: its grant and client, its generation and hash, and the hash of
/// the next generation's token (which is always the same text: `seal::Refresh`).
pub struct Presented<'a> {
    pub grant: &'a str,
    pub client_id: &'a str,
    pub generation: i64,
    pub hash: &'a str,
    pub next_hash: &'a str,
}

/// A refresh: when the presented token is the grant's current one, the grant moves on to the
/// next generation and lives until `expires_at`; when it is the one just replaced, within
/// `GRACE_MS`, the grant is already there and the same next token is answered again; any other
/// token of the grant revokes it. `None`: refused.
pub async fn refresh_grant(
    db: &dyn Sql,
    presented: &Presented<'_>,
    now_ms: i64,
    expires_at: i64,
) -> Result<Option<Renewed>, StoreError> {
    let params: [Value; 8] = [
        presented.grant.into(),
        presented.client_id.into(),
        Value::Int(presented.generation),
        presented.hash.into(),
        presented.next_hash.into(),
        Value::Int(now_ms),
        Value::Int(expires_at),
        Value::Int(GRACE_MS),
    ];
    let results = db
        .batch(vec![
            Stmt::new(REVOKE_REPLAYED_REFRESH, params.to_vec()),
            Stmt::new(ROTATE, params[..7].to_vec()),
            Stmt::new(ROTATED_ALREADY, params.to_vec()),
            Stmt::new(
                REFRESHED,
                vec![
                    presented.grant.into(),
                    presented.next_hash.into(),
                    presented.client_id.into(),
                ],
            ),
        ])
        .await?;
    let Some(row) = results.get(3).and_then(|rows| rows.first()) else {
        return Ok(None);
    };
    if int(row, "renewed")? != Some(1) {
        return Ok(None);
    }
    Ok(Some(Renewed {
        scope: text(row, "scope")?.to_owned(),
        client_name: text(row, "client_name")?.to_owned(),
    }))
}

/// The live grants the caller reaches, newest first (`?2` NULL: every project's and those of
/// every project; else the grants of that one project).
const LIVE_GRANTS: Query = Query::rows(
    "SELECT id, client_name, client_id, scope, source, created_at, last_used_at \
     FROM oauth_grant WHERE revoked_at IS NULL AND expires_at > ?1 \
     AND (?2 IS NULL OR scope IN ('rw:' || ?2, 'ro:' || ?2)) \
     ORDER BY created_at DESC, id LIMIT CAST(?3 AS INTEGER)",
    &[
        "id",
        "client_name",
        "client_id",
        "scope",
        "source",
        "created_at",
        "last_used_at",
    ],
);

/// How many grants the human view lists at most.
pub const GRANTS_LISTED: i64 = 100;

/// A live grant, as the human view lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantRow {
    pub id: String,
    pub client_name: String,
    pub client_id: String,
    pub scope: String,
    pub source: String,
    pub created_at: i64,
    pub last_used_at: i64,
}

/// The live grants within the caller's reach, newest first, at most `GRANTS_LISTED`.
pub async fn live_grants(
    db: &dyn Sql,
    reach: Reach<'_>,
    now_ms: i64,
) -> Result<Vec<GrantRow>, StoreError> {
    let results = db
        .batch(vec![Stmt::new(
            LIVE_GRANTS,
            vec![
                Value::Int(now_ms),
                reach.only().into(),
                Value::Int(GRANTS_LISTED),
            ],
        )])
        .await?;
    each(first(&results)?, |row| {
        let at = |column| int(row, column)?.ok_or(StoreError::Decode(column));
        Ok(GrantRow {
            id: text(row, "id")?.to_owned(),
            client_name: text(row, "client_name")?.to_owned(),
            client_id: text(row, "client_id")?.to_owned(),
            scope: text(row, "scope")?.to_owned(),
            source: text(row, "source")?.to_owned(),
            created_at: at("created_at")?,
            last_used_at: at("last_used_at")?,
        })
    })
}

/// Ends a live grant at once: from the next batch on, its access tokens reach nothing
/// (`guard::Guarded`) and its refresh token is refused. On the page (`?4` NULL), if it is within
/// the caller's write reach (`?2` NULL: every project); at its client's request (`?2` NULL), if
/// `?4` is its client.
const REVOKE_GRANT: Query = Query::no_rows(
    "UPDATE oauth_grant SET revoked_at = ?3, \
     revoked_why = CASE WHEN ?4 IS NULL THEN 'revoked on the page' ELSE 'revoked by its client' END \
     WHERE id = ?1 AND revoked_at IS NULL AND coalesce(client_id = ?4, 1) \
     AND (?2 IS NULL OR scope IN ('rw:' || ?2, 'ro:' || ?2))",
);

/// Revokes grant `id` if the caller may write what it reaches. A grant already ended, or out of
/// reach, is left as it is: the page lists neither.
pub async fn revoke_grant(
    db: &dyn Sql,
    id: &str,
    reach: WriteReach<'_>,
    now_ms: i64,
) -> Result<(), StoreError> {
    revoke(db, id, reach.only(), None, now_ms).await
}

/// Revokes grant `id` if `client_id` is its client (RFC 7009); another client's grant, or one
/// already ended, is left as it is.
pub async fn revoke_by_client(
    db: &dyn Sql,
    id: &str,
    client_id: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    revoke(db, id, None, Some(client_id), now_ms).await
}

async fn revoke(
    db: &dyn Sql,
    id: &str,
    only: Option<&str>,
    client_id: Option<&str>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let params = vec![id.into(), only.into(), Value::Int(now_ms), client_id.into()];
    db.batch(vec![Stmt::new(REVOKE_GRANT, params)])
        .await
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refresh_statements_bound_the_answers_by_answers_most() {
        let bound = format!("answers < {ANSWERS_MOST}");
        for query in [REVOKE_REPLAYED_REFRESH, ROTATED_ALREADY] {
            assert!(query.sql.contains(&bound), "{}", query.sql);
        }
    }
}
