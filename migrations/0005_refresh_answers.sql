-- handoff-mcp schema, version 5: how often a grant's current refresh token has been handed out.
-- A refresh rotates the grant's token and answers with the next one; the token it replaced may be
-- presented again for a short while (a retry whose answer was lost, claude.ai's two egress
-- addresses, an SDK's two refreshes at once) and gets the same answer, but only while this count
-- is below its bound (src/store/oauth.rs, ANSWERS_MOST): one presentation more ends the grant,
-- so a second holder of a token cannot follow the client's chain of tokens for long unseen.
-- Existing grants start at 0: their next rotation counts from there.
ALTER TABLE oauth_grant ADD COLUMN answers INTEGER NOT NULL DEFAULT 0;
