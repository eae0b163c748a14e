-- Platform: every plan change on record, support tickets with their conversation, and the moment
-- an admin last lifted a reputation pause (rates are counted from then on).

ALTER TABLE accounts ADD COLUMN reputation_reset_at timestamptz;

CREATE TABLE plan_changes (
  id                      text PRIMARY KEY,
  account_id              text NOT NULL REFERENCES accounts (id),
  subscription_id         text NOT NULL REFERENCES subscriptions (id),
  from_package_id         text,
  to_package_id           text NOT NULL,
  type                    text NOT NULL CHECK (type IN ('upgrade', 'downgrade')),
  amount_usd_cents        integer NOT NULL DEFAULT 0,
  days_charged            integer,
  cycle_days              integer,
  effective_at            timestamptz NOT NULL,
  applied_at              timestamptz,                 -- downgrades: when the reset applied it
  actor                   text NOT NULL,               -- key id (or "admin:<key>") that asked
  created_at              timestamptz NOT NULL
);
CREATE INDEX plan_changes_account ON plan_changes (account_id, created_at);

CREATE TABLE tickets (
  id                      text PRIMARY KEY,
  account_id              text NOT NULL REFERENCES accounts (id),
  subject                 text NOT NULL,
  status                  text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'answered', 'closed')),
  priority                text NOT NULL DEFAULT 'normal' CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
  category                text NOT NULL DEFAULT 'general',
  created_at              timestamptz NOT NULL,
  updated_at              timestamptz NOT NULL
);
CREATE INDEX tickets_account ON tickets (account_id, updated_at DESC);

CREATE TABLE ticket_messages (
  id                      text PRIMARY KEY,
  ticket_id               text NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
  author                  text NOT NULL CHECK (author IN ('customer', 'support')),
  author_key_id           text NOT NULL,
  body                    text NOT NULL,
  created_at              timestamptz NOT NULL
);
CREATE INDEX ticket_messages_ticket ON ticket_messages (ticket_id, created_at);
