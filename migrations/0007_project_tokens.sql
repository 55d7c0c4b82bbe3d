-- handoff-mcp schema, version 7: tokens of one project, made and revoked by the owner on the
-- project's page (src/store/tokens.rs). A token is sealed (src/seal.rs, `hpt`): what it reaches
-- and its label are in it, so a request needs no read to know them; its row says it is live,
-- and keeps only a keyed hash of it (the token itself is shown once and stored nowhere).
CREATE TABLE IF NOT EXISTS project_token (
  id           TEXT PRIMARY KEY,
  project_id   TEXT NOT NULL,
  label        TEXT NOT NULL,
  scope        TEXT NOT NULL,
  hash         TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at   INTEGER
);

-- A project's tokens, for its page and for the caps counted when one is made.
CREATE INDEX IF NOT EXISTS project_token_by_project ON project_token (project_id, created_at);

-- Never holds a row, as gate (0004): a request made with a project token starts each batch with
-- an insert here when the token's row is not live (src/store/guard.rs, TOKEN_GUARD), which fails
-- the batch, rolled back whole, by the constraint's name.
CREATE TABLE IF NOT EXISTS token_gate (
  token_id TEXT CONSTRAINT token_revoked CHECK (token_id IS NULL)
);
