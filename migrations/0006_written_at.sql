-- handoff-mcp schema, version 6: a project's newest task write in one index step (state.txt's x-handoff-written-at).
CREATE INDEX IF NOT EXISTS task_written ON task (project_id, updated_at);
