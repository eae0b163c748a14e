-- Counters for the whole appliance (issue 33): the API's and SMTP submission's bad keys and
-- /metrics' bad tokens per client address, the console's failed sign-ins per address and per
-- email, and the MX listener's messages per address, each in a fixed window that ends at `window_end`. Kept here
-- rather than in each process, so that N processes (or replicas) on one database allow a guesser
-- what one would: alternating between them gains nothing. `holder` names the counter and its key
-- (`api:198.51.100.7`, `signin-email:ops@acme.example`, `mx:203.0.113.9`). `next_lookup_at`: when a throttled API
-- client may next have an unknown token looked up (src/http/auth-failures.ts).
-- UNLOGGED like rate_windows: no WAL flush on a failure's commit (a crash merely resets the windows).
-- Rows whose window has ended are deleted a few at a time by the statement that counts
-- (src/db/counter-windows.ts), so the table holds about the holders of the last window.
CREATE UNLOGGED TABLE counter_windows (
  holder                  text PRIMARY KEY,
  window_end              timestamptz NOT NULL,
  count                   integer NOT NULL,
  next_lookup_at          timestamptz NOT NULL
);
CREATE INDEX counter_windows_end ON counter_windows (window_end);
