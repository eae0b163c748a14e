-- The console's sign-in sessions (issue 28). The id is 32 random bytes the browser holds in an
-- HttpOnly cookie; only its SHA-256 is stored, so a copy of the database signs no one in. Kept in
-- PostgreSQL (not in a process) so that every replica honours a sign-out at once. A session acts
-- as one of its account's keys (active_key_id); deleting the row ends it (sign-out, password
-- change, suspension), and a session idle past HERALD_CONSOLE_SESSION_IDLE_HOURS is refused and
-- swept at the next sign-in.
CREATE TABLE console_sessions (
  id_hash        bytea PRIMARY KEY,
  account_id     text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  active_key_id  text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  csrf_token     text NOT NULL,
  created_at     timestamptz NOT NULL,
  last_seen_at   timestamptz NOT NULL
);
CREATE INDEX console_sessions_account ON console_sessions (account_id);
CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);
