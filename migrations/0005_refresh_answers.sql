-- handoff-mcp schema, version 5: how often a grant's current refresh pair was answered (store/oauth.rs, ANSWERS_MOST).
ALTER TABLE oauth_grant ADD COLUMN answers INTEGER NOT NULL DEFAULT 0;
