-- Bulk audience (issue 19): contacts, the lists they belong to, and what happened to each address.
-- A contact belongs to the API key that created it (another key's contact is not found); its
-- address is unique per key compared case-insensitively and stored as given.
CREATE TABLE contacts (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key_id      text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  email       text NOT NULL,
  name        text,
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'unsubscribed', 'bounced', 'complained')),
  tags        text[] NOT NULL DEFAULT '{}',
  metadata    jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
-- The import's ON CONFLICT target, and the lookup by address.
CREATE UNIQUE INDEX contacts_key_email ON contacts (key_id, lower(email));
-- An address's facts (bounce, complaint, unsubscribe) move every contact of it in the account.
CREATE INDEX contacts_account_email ON contacts (account_id, lower(email));
CREATE INDEX contacts_key_created ON contacts (key_id, created_at DESC, id);
CREATE INDEX contacts_tags ON contacts USING gin (tags);

-- Lists and memberships: the lists API (and double opt-in) comes with the next part of the issue;
-- the tables exist now so that contacts answer their `lists` and filter by `list_id`.
CREATE TABLE lists (
  id                    text PRIMARY KEY,
  account_id            text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key_id                text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  name                  text NOT NULL,
  require_confirmation  boolean NOT NULL DEFAULT false,
  confirm_from_email    text,
  confirm_from_name     text,
  confirm_subject       text,
  confirm_intro         text,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);
CREATE INDEX lists_key ON lists (key_id, created_at DESC, id);

CREATE TABLE list_memberships (
  list_id       text NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
  contact_id    text NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  status        text NOT NULL CHECK (status IN ('pending', 'confirmed')),
  created_at    timestamptz NOT NULL,
  confirmed_at  timestamptz,
  PRIMARY KEY (list_id, contact_id)
);
CREATE INDEX list_memberships_contact ON list_memberships (contact_id);

-- What happened to an address (GET /v1/bulk/contacts/{email}/engagement). Bounces, complaints and
-- unsubscribes are facts of the address in the account, from any channel: `key_id` is null and
-- every key's contact of the address sees them. Opens and clicks (the campaigns issue) carry the
-- key of their campaign. `email` is stored in lower case.
CREATE TABLE contact_engagement (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id   text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key_id       text REFERENCES api_keys (id) ON DELETE CASCADE,
  email        text NOT NULL,
  type         text NOT NULL CHECK (type IN ('opened', 'clicked', 'bounced', 'complained', 'unsubscribed')),
  at           timestamptz NOT NULL,
  campaign_id  text,
  sequence_id  text,
  message_id   text,
  detail       text
);
CREATE INDEX contact_engagement_address ON contact_engagement (account_id, email, at DESC, id DESC);
