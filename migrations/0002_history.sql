-- handoff-mcp schema, version 2: timestamps, attribution, done_when and evidence, history, and
-- the index behind retry-safe add_task.
-- Migrations are applied once each and recorded in wrangler's ledger table, d1_migrations:
-- `wrangler d1 migrations apply` and the Worker's first request read and write the same ledger,
-- so either may go first (0001's header still describes v1's replay; applied files are never
-- edited). Only additions: v1's tables and columns keep their names and meaning.
-- Times are UTC milliseconds since the Unix epoch, from the server's clock; NULL for whatever
-- was stored before this migration. *_by columns hold the client's name as it sent it.

ALTER TABLE project ADD COLUMN created_at INTEGER;
ALTER TABLE project ADD COLUMN updated_at INTEGER;
ALTER TABLE project ADD COLUMN updated_by TEXT;

ALTER TABLE focus ADD COLUMN done_when TEXT;
ALTER TABLE focus ADD COLUMN created_at INTEGER;
ALTER TABLE focus ADD COLUMN updated_at INTEGER;
ALTER TABLE focus ADD COLUMN updated_by TEXT;

ALTER TABLE task ADD COLUMN created_at INTEGER;
ALTER TABLE task ADD COLUMN created_by TEXT;
ALTER TABLE task ADD COLUMN updated_at INTEGER;
ALTER TABLE task ADD COLUMN completed_at INTEGER;
ALTER TABLE task ADD COLUMN completed_by TEXT;
ALTER TABLE task ADD COLUMN evidence TEXT;

-- The history: append-only, one row per North Star change, focus change and task completion,
-- written in the same batch as the change. seq is the order of events. project_id has no
-- foreign key: a new project's first event is written just before the project row, in the
-- same atomic batch.
CREATE TABLE IF NOT EXISTS event (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id TEXT NOT NULL,
  at         INTEGER,
  what       TEXT NOT NULL CHECK (what IN ('north_star', 'focus', 'completed')),
  value      TEXT NOT NULL,
  note       TEXT,
  done_when  TEXT,
  task_id    TEXT,
  kind       TEXT CHECK (kind IS NULL OR kind IN ('main', 'cleanup', 'record')),
  client     TEXT NOT NULL
);

-- Serves the history resource newest first, and its count of older events.
CREATE INDEX IF NOT EXISTS event_by_project ON event (project_id, seq);

-- Serves add_task's check for an identical open task, inside the inserting statement.
CREATE INDEX IF NOT EXISTS task_open_same ON task (project_id, kind, body) WHERE status = 'open';

-- What v1 knew becomes the start of each project's history, with no time and no client.
INSERT INTO event (project_id, at, what, value, client)
  SELECT id, NULL, 'north_star', north_star, 'unknown' FROM project ORDER BY rowid;
INSERT INTO event (project_id, at, what, value, note, client)
  SELECT project_id, NULL, 'focus', statement, why, 'unknown' FROM focus ORDER BY rowid;
INSERT INTO event (project_id, at, what, value, task_id, kind, client)
  SELECT project_id, NULL, 'completed', body, id, kind, 'unknown' FROM task
  WHERE status = 'done' ORDER BY rowid;
