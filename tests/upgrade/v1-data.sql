-- v1 data for the upgrade tests (tests/wire/upgrade.rs natively, scripts/upgrade through
-- wrangler): three projects; a focus with a why, one without, one project with none; tasks of
-- every kind and status, with text that must survive byte for byte.
INSERT INTO project (id, name, north_star) VALUES
    ('alpha', 'alpha', 'Ship v1'), ('beta', 'Beta name', 'Line one
line two 🎯'),
    ('gamma', 'gamma', 'No focus yet');
INSERT INTO focus (project_id, statement, why) VALUES
    ('alpha', 'Write the store', 'everything depends on it'), ('beta', 'Only a statement', NULL);
INSERT INTO task (id, project_id, body, kind, demoted, status) VALUES
    ('a-main-open', 'alpha', 'draft the README', 'main', 0, 'open'),
    ('a-main-done', 'alpha', 'old main', 'main', 0, 'done'),
    ('a-clean-open', 'alpha', 'remove logging', 'cleanup', 1, 'open'),
    ('a-clean-done', 'alpha', 'removed the flag', 'cleanup', 1, 'done'),
    ('a-rec-open', 'alpha', 'note D1 limits', 'record', 1, 'open'),
    ('a-rec-done', 'alpha', 'noted the quota', 'record', 1, 'done'),
    ('b-rec-open', 'beta', 'tab	here "quoted"', 'record', 1, 'open'),
    ('b-clean-open', 'beta', 'second, after the record', 'cleanup', 1, 'open');
