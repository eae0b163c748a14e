-- Foundation: plans (packages), accounts (the spec's users/clients), subscriptions and API keys.

CREATE TABLE plans (
  id                      text PRIMARY KEY,            -- the spec's package_id
  name                    text NOT NULL,
  billing_model           text NOT NULL,               -- 'sends' for current plans
  price_usd_cents         integer NOT NULL CHECK (price_usd_cents >= 0),
  monthly_quota           integer NOT NULL CHECK (monthly_quota >= 0),
  rate_per_min            integer NOT NULL CHECK (rate_per_min > 0),
  overage_offered         boolean NOT NULL,
  overage_price_usd_cents_per_1000 integer,            -- price per 1,000 emails past the quota
  features                jsonb NOT NULL DEFAULT '[]',  -- e.g. ["dmarc"]
  selectable              boolean NOT NULL,
  legacy                  boolean NOT NULL DEFAULT false
);

CREATE TABLE accounts (
  id                      text PRIMARY KEY,
  name                    text NOT NULL,
  email                   text NOT NULL,
  password_hash           text NOT NULL,
  is_admin                boolean NOT NULL DEFAULT false,
  status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  sending_paused_at       timestamptz,
  sending_paused_reason   text,
  rate_per_min_override   integer,
  monthly_quota_override  integer,
  created_at              timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_email_key ON accounts (lower(email));

-- At most one active subscription per account; ended ones stay for the record.
CREATE TABLE subscriptions (
  id                      text PRIMARY KEY,
  account_id              text NOT NULL REFERENCES accounts (id),
  package_id              text NOT NULL REFERENCES plans (id),
  status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended')),
  billing_period          text NOT NULL DEFAULT 'monthly',
  started_at              timestamptz NOT NULL,
  period_start            timestamptz NOT NULL,
  pending_package_id      text REFERENCES plans (id),
  ended_at                timestamptz
);
CREATE UNIQUE INDEX subscriptions_one_active ON subscriptions (account_id) WHERE status = 'active';

-- Tokens are stored only as SHA-256 digests: they are 256-bit random strings, so a fast digest is
-- enough (there is nothing to brute-force), and lookups by digest reveal nothing about the token.
CREATE TABLE api_keys (
  id                      text PRIMARY KEY,            -- the spec's app
  account_id              text NOT NULL REFERENCES accounts (id),
  label                   text NOT NULL,
  token_hash              bytea NOT NULL UNIQUE,
  token_hint              text NOT NULL,               -- last four characters, for recognising a key
  webhook_url             text,
  webhook_secret          text,
  created_at              timestamptz NOT NULL DEFAULT now(),
  last_used_at            timestamptz,
  revoked_at              timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id) WHERE revoked_at IS NULL;
