-- handoff-mcp schema, version 3: a full-text index of what was decided and done, for the
-- search tool and the pages' search box. Only additions: no table or column changes.
-- Two FTS5 indexes with the trigram tokenizer, which finds any run of three or more characters
-- and so works for Japanese, written without spaces between words, as for English. Both are
-- external-content tables: the text stays in event and task, the index holds only trigrams, and
-- a hit is joined back to its row by rowid (event's seq, task's rowid).
-- Indexed: every event (the search shows the North Star and focus ones: statement, why, done
-- when; a completion is shown through its task) and every task (body, evidence). Each index holds
-- every row of its table, so FTS5's own 'integrity-check' and 'rebuild' hold for it.
-- The triggers keep the index in the same transaction as the write that changes it, so each
-- tool's batch stays as it is; the last two statements index what the database held before.

CREATE VIRTUAL TABLE IF NOT EXISTS event_text USING fts5(
  value, note, done_when, content='event', content_rowid='seq', tokenize='trigram'
);

CREATE VIRTUAL TABLE IF NOT EXISTS task_text USING fts5(
  body, evidence, content='task', tokenize='trigram'
);

-- Events are append-only, so an insert is all the index ever follows.
CREATE TRIGGER IF NOT EXISTS event_text_insert AFTER INSERT ON event BEGIN
  INSERT INTO event_text (rowid, value, note, done_when)
    VALUES (new.seq, new.value, new.note, new.done_when);
END;

CREATE TRIGGER IF NOT EXISTS task_text_insert AFTER INSERT ON task BEGIN
  INSERT INTO task_text (rowid, body, evidence) VALUES (new.rowid, new.body, new.evidence);
END;

-- complete_task sets the evidence: the old entry is taken out with the values it was indexed
-- under (an external-content index needs them), and the new one put in.
CREATE TRIGGER IF NOT EXISTS task_text_update AFTER UPDATE OF body, evidence ON task BEGIN
  INSERT INTO task_text (task_text, rowid, body, evidence)
    VALUES ('delete', old.rowid, old.body, old.evidence);
  INSERT INTO task_text (rowid, body, evidence) VALUES (new.rowid, new.body, new.evidence);
END;

INSERT INTO event_text (event_text) VALUES ('rebuild');
INSERT INTO task_text (task_text) VALUES ('rebuild');
