-- Sending: domains, suppressions, the queue (messages + one delivery per recipient), the event
-- outbox, scheduled sends, idempotency records, rate-limit windows and monthly usage.

CREATE TABLE domains (
  id                      text PRIMARY KEY,
  account_id              text NOT NULL REFERENCES accounts (id),
  domain                  text NOT NULL,               -- lower case
  verification_token      text NOT NULL,
  verified_at             timestamptz,
  -- set when a re-check no longer finds the TXT record; sending continues for the grace window
  verification_lost_at    timestamptz,
  last_checked_at         timestamptz,
  dkim_selector           text NOT NULL,
  dkim_private_key        text NOT NULL,               -- PKCS#8 PEM, RSA-2048
  dkim_public_key         text NOT NULL,               -- base64 SPKI, the p= of the record
  return_path_verified_at timestamptz,
  created_at              timestamptz NOT NULL
);
CREATE UNIQUE INDEX domains_account_domain ON domains (account_id, domain);
CREATE INDEX domains_domain ON domains (domain);

-- account_id NULL = platform level (applies to every account).
CREATE TABLE suppressions (
  id                      bigserial PRIMARY KEY,
  account_id              text REFERENCES accounts (id),
  email                   text NOT NULL,               -- lower case
  reason                  text NOT NULL CHECK (reason IN ('bounce', 'complaint', 'unsubscribe', 'manual')),
  source                  text,
  created_at              timestamptz NOT NULL
);
CREATE UNIQUE INDEX suppressions_scope_email ON suppressions (coalesce(account_id, ''), email);
CREATE INDEX suppressions_email ON suppressions (email);

-- Platform block list of recipient domains: sends to them are `rejected`.
CREATE TABLE blocked_domains (
  domain                  text PRIMARY KEY,
  reason                  text NOT NULL,
  created_at              timestamptz NOT NULL
);

-- One message per accepted personalization; `content` is the canonical request for it, composed
-- into MIME at delivery time (keeps the accept path short; Date comes from created_at).
CREATE TABLE messages (
  id                      text PRIMARY KEY,            -- the message_id of the 202
  account_id              text NOT NULL REFERENCES accounts (id),
  key_id                  text NOT NULL REFERENCES api_keys (id),
  request_id              text NOT NULL,
  personalization_index   integer NOT NULL,
  from_email              text NOT NULL,
  from_domain             text NOT NULL,
  subject                 text NOT NULL,
  content                 jsonb NOT NULL,
  created_at              timestamptz NOT NULL
);

-- The queue: one row per recipient (ZoneMTA's discipline). state: queued (never tried),
-- deferred (4xx, waiting for next_attempt_at), sent, bounced (5xx or a DSN), failed (expired or
-- undeliverable). Workers claim due rows with FOR UPDATE SKIP LOCKED and a lease.
CREATE TABLE deliveries (
  id                      text PRIMARY KEY,
  message_id              text NOT NULL REFERENCES messages (id),
  account_id              text NOT NULL,
  key_id                  text NOT NULL,
  recipient               text NOT NULL,
  recipient_domain        text NOT NULL,
  recipient_kind          text NOT NULL CHECK (recipient_kind IN ('to', 'cc', 'bcc')),
  state                   text NOT NULL DEFAULT 'queued'
                          CHECK (state IN ('queued', 'deferred', 'sent', 'bounced', 'failed')),
  attempts                integer NOT NULL DEFAULT 0,
  next_attempt_at         timestamptz NOT NULL,
  lease_owner             text,
  lease_until             timestamptz,
  last_code               integer,
  last_status             text,
  last_reply              text,
  created_at              timestamptz NOT NULL,
  updated_at              timestamptz NOT NULL,
  completed_at            timestamptz
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state IN ('queued', 'deferred');
CREATE INDEX deliveries_message ON deliveries (message_id);
CREATE INDEX deliveries_account_created ON deliveries (account_id, created_at DESC);
CREATE INDEX deliveries_key_created ON deliveries (key_id, created_at DESC);

-- Transactional outbox: every state change that emits an event writes its row here in the same
-- transaction. key_id is the `app` the event belongs to.
CREATE TABLE events (
  id                      text PRIMARY KEY,
  account_id              text NOT NULL,
  key_id                  text NOT NULL,
  event                   text NOT NULL,
  payload                 jsonb NOT NULL,
  created_at              timestamptz NOT NULL
);
CREATE INDEX events_key_created ON events (key_id, created_at);

CREATE TABLE scheduled_sends (
  id                      text PRIMARY KEY,
  account_id              text NOT NULL REFERENCES accounts (id),
  key_id                  text NOT NULL REFERENCES api_keys (id),
  request_id              text NOT NULL,
  message_id              text NOT NULL,               -- assigned at scheduling, used when released
  request                 jsonb NOT NULL,              -- the canonical send request
  send_at                 timestamptz NOT NULL,
  state                   text NOT NULL DEFAULT 'scheduled'
                          CHECK (state IN ('scheduled', 'released', 'cancelled', 'discarded')),
  reason                  text,
  lease_until             timestamptz,
  created_at              timestamptz NOT NULL,
  finished_at             timestamptz
);
CREATE INDEX scheduled_sends_due ON scheduled_sends (send_at) WHERE state = 'scheduled';

-- Idempotency-Key records: the stored response of a send, replayed for 24 h.
CREATE TABLE idempotency_keys (
  key_id                  text NOT NULL,
  idempotency_key         text NOT NULL,
  request_hash            bytea NOT NULL,
  status                  integer NOT NULL,
  response                jsonb NOT NULL,
  created_at              timestamptz NOT NULL,
  PRIMARY KEY (key_id, idempotency_key)
);

-- Per-key request windows of 60 s (a window opens with the first request after the last one
-- closed), shared by every replica through the row lock of the upsert. UNLOGGED: no WAL, so the
-- upsert's commit does not wait for a disk flush while it holds the key's row lock (a crash
-- merely resets the windows).
CREATE UNLOGGED TABLE rate_windows (
  key_id                  text PRIMARY KEY,
  window_start            timestamptz NOT NULL,
  count                   integer NOT NULL
);

-- Monthly usage within a billing period: the account's total (what the quota limits; its row
-- lock makes the check-and-charge exact across replicas) and each key's own share.
CREATE TABLE account_usage (
  account_id              text NOT NULL,
  period_start            timestamptz NOT NULL,
  sent                    integer NOT NULL DEFAULT 0,
  overage                 integer NOT NULL DEFAULT 0,   -- recipients charged past the quota
  PRIMARY KEY (account_id, period_start)
);

CREATE TABLE key_usage (
  key_id                  text NOT NULL,
  period_start            timestamptz NOT NULL,
  sent                    integer NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, period_start)
);
