-- Webhook deliveries: the dispatcher turns each outbox event into one delivery for the key's
-- endpoint (a webhook endpoint's id is its key's id), with every attempt on record.

ALTER TABLE events ADD COLUMN dispatched_at timestamptz;
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;

CREATE TABLE webhook_deliveries (
  id                      text PRIMARY KEY,
  key_id                  text NOT NULL REFERENCES api_keys (id),
  account_id              text NOT NULL,
  event_id                text NOT NULL,
  event                   text NOT NULL,
  payload                 jsonb NOT NULL,              -- the body sent: id, event, ts, app and the fields
  status                  text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts                integer NOT NULL DEFAULT 0,
  next_attempt_at         timestamptz NOT NULL,        -- also the lease while an attempt runs
  lease_owner             text,
  http_code               integer,
  last_error              text,
  response_body           text,                        -- the last answer, at most 2 KB
  created_at              timestamptz NOT NULL,
  updated_at              timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_key ON webhook_deliveries (key_id, created_at DESC);

CREATE TABLE webhook_attempts (
  id                      bigserial PRIMARY KEY,
  delivery_id             text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at            timestamptz NOT NULL,
  duration_ms             integer NOT NULL,
  http_code               integer,
  error                   text,
  response_body           text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempted_at);
