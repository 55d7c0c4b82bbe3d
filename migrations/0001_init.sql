-- handoff-mcp schema, version 1.
-- The only definition of the schema: wrangler applies it to D1 (`wrangler d1 migrations apply`),
-- the Worker replays it once per isolate so a fresh database works without a manual step, and the
-- native tests load it into SQLite. Every statement is therefore idempotent (IF NOT EXISTS).

-- One row per project. name defaults to the id; north_star is never empty (checked by the tool too).
CREATE TABLE IF NOT EXISTS project (
  id         TEXT PRIMARY KEY NOT NULL,
  name       TEXT NOT NULL,
  north_star TEXT NOT NULL CHECK (length(trim(north_star)) > 0)
);

-- At most one focus per project (UNIQUE + one UPSERT statement); created by the first set_focus.
CREATE TABLE IF NOT EXISTS focus (
  project_id TEXT NOT NULL UNIQUE REFERENCES project(id),
  statement  TEXT NOT NULL,
  why        TEXT
);

-- Tasks. Insertion order (rowid) is the display order. cleanup and record tasks are demoted
-- (deferred until the North Star is reached); main tasks are stored but not listed.
CREATE TABLE IF NOT EXISTS task (
  id         TEXT PRIMARY KEY NOT NULL,
  project_id TEXT NOT NULL REFERENCES project(id),
  body       TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('main', 'cleanup', 'record')),
  demoted    INTEGER NOT NULL CHECK (demoted = (kind <> 'main')),
  status     TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done'))
);

-- Serves get_state's deferred list: only open demoted rows are indexed, so completed and main
-- tasks add nothing to its cost however many there are.
CREATE INDEX IF NOT EXISTS task_open_deferred ON task (project_id) WHERE demoted = 1 AND status = 'open';
