-- What the console's overview, admin queue and admin inbound views read (issue 28), each by an
-- index so that a read stays cheap however much mail the appliance holds.

-- GET /v1/client/stats counts an account's delivery outcomes per hour or day. The attempts had no
-- account: counting them meant joining every attempt of the period to its delivery (a million
-- primary-key probes for an account that sent a million messages in 30 days). The outcome writer
-- (src/mta/queue/DeliveryQueue.ts completeMany) now writes the account with the attempt, and the
-- covering index answers "this account's outcomes in this period" by an index-only range scan.
-- Rows from before this migration get their account once, here.
ALTER TABLE delivery_attempts ADD COLUMN account_id text;
UPDATE delivery_attempts a SET account_id = d.account_id FROM deliveries d WHERE d.id = a.delivery_id;
CREATE INDEX delivery_attempts_account_at ON delivery_attempts (account_id, at) INCLUDE (outcome);

-- GET /v1/admin/queue: deferrals in the last hour by destination. Partial: only deferrals, a
-- small share of the attempts, so the outcome writer pays for it only when the far side defers.
CREATE INDEX delivery_attempts_deferred_at ON delivery_attempts (at) WHERE outcome = 'deferred';

-- GET /v1/client/stats: an account's bounces and complaints (SMTP-time and DSN bounces alike, every
-- origin) from the outbox. Partial: the two events among the many the outbox holds.
CREATE INDEX events_account_outcomes ON events (account_id, created_at) INCLUDE (event)
  WHERE event IN ('email.bounced', 'email.complained');

-- GET /v1/admin/inbound: inbound reports newest first, all of them or only the refused ones (a
-- report that changed nothing because of who sent it — `refusal` — or that the parsers could not
-- read, parked as `failed` with its `error`).
CREATE INDEX inbound_received ON inbound_messages (received_at DESC, id DESC);
CREATE INDEX inbound_refused_received ON inbound_messages (received_at DESC, id DESC)
  WHERE refusal IS NOT NULL OR state = 'failed';

-- GET /v1/client/stats's rollup (src/transactional/stats/rollup.ts): the range scans above cost
-- seconds over a month at a million deliveries (bench/stats.ts), so each settled hour of an
-- account is counted once, the first time a stats read needs it, and kept here; a read then scans
-- only the hours not settled yet. Rows for hours with nothing in them are not written: the fold's
-- watermark says which hours are counted. Kept 31 days (the longest period is 30).
CREATE TABLE account_activity_hours (
  account_id              text NOT NULL,
  hour                    timestamptz NOT NULL,
  sent                    integer NOT NULL,
  delivered               integer NOT NULL,
  deferred                integer NOT NULL,
  bounced                 integer NOT NULL,
  complained              integer NOT NULL,
  failed                  integer NOT NULL,
  PRIMARY KEY (account_id, hour)
);
CREATE TABLE account_activity_folds (
  account_id              text PRIMARY KEY,
  folded_through          timestamptz NOT NULL       -- every hour before this is in account_activity_hours
);
