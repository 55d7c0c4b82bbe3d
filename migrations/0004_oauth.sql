-- handoff-mcp schema, version 4: OAuth grants, and the gate. Only additions: no table or column
-- changes.
-- A grant is what a person allowed one OAuth client on the consent page: what it reaches (scope:
-- 'all', 'rw:<project>' or 'ro:<project>'), made with which configured token (source: the hex
-- SHA-256 of that token, never the token), and the one refresh token it has now, stored only as
-- a hash. Access tokens and codes are sealed, not stored (src/seal.rs). A grant is made when its
-- authorization code is exchanged; the code's hash is kept with it so the code is used once.
-- Clients are not stored either: a client id is a metadata document's URL or a sealed
-- registration.

CREATE TABLE IF NOT EXISTS oauth_grant (
  id            TEXT PRIMARY KEY,
  code_hash     TEXT NOT NULL UNIQUE,
  client_id     TEXT NOT NULL,
  client_name   TEXT NOT NULL,
  scope         TEXT NOT NULL,
  source        TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  -- When the client last exchanged a code or refreshed (access tokens are checked without a
  -- read, so a use within an access token's hour is not seen).
  last_used_at  INTEGER NOT NULL,
  -- The current refresh token's generation (0, then one more at each refresh) and hash.
  generation    INTEGER NOT NULL DEFAULT 0,
  refresh_hash  TEXT NOT NULL,
  -- The refresh token before the current one, and when it was replaced: a client that lost
  -- the answer of a refresh may present it again for a short while.
  previous_hash TEXT,
  rotated_at    INTEGER,
  -- A grant unused until then ends; each refresh moves it on.
  expires_at    INTEGER NOT NULL,
  revoked_at    INTEGER,
  revoked_why   TEXT
);

-- The live grants of one configured token, counted against the cap on each exchange.
CREATE INDEX IF NOT EXISTS oauth_grant_source ON oauth_grant (source) WHERE revoked_at IS NULL;

-- Never holds a row: each column's constraint refuses every value, so a statement that inserts
-- one fails the batch it is in, which rolls back whole, on purpose. A request made with an
-- access token starts each of its batches with an insert of the grant's id when the grant is not
-- live (src/store/oauth.rs, GUARD), so a revoked grant reaches nothing from that moment; an
-- isolate's first batch starts with an insert of the newest migration's name when the ledger
-- lacks it (src/store/schema.rs, SCHEMA_GATE), so the schema is found current without a round
-- trip of its own. The constraint's name in the failure says which.
CREATE TABLE IF NOT EXISTS gate (
  grant_id TEXT CONSTRAINT grant_revoked CHECK (grant_id IS NULL),
  schema   TEXT CONSTRAINT schema_behind CHECK (schema IS NULL)
);
