-- What the inbound processor learned from bounces and feedback reports, per recipient. These rows
-- are the record behind the events: soft bounces are counted here for the escalation rule
-- (repeated soft bounces of one address within a window → suppression), complaints of every
-- feedback type are kept even when they change nothing (auth-failure, not-spam).

CREATE TABLE inbound_bounces (
  id                      bigserial PRIMARY KEY,
  inbound_message_id      text NOT NULL REFERENCES inbound_messages (id),
  account_id              text NOT NULL,
  key_id                  text NOT NULL,
  delivery_id             text,
  message_id              text NOT NULL,
  email                   text NOT NULL,               -- lower case
  status                  text NOT NULL,               -- enhanced status code
  category                text NOT NULL CHECK (category IN ('hard', 'soft')),
  action                  text NOT NULL,
  diagnostic              text,
  created_at              timestamptz NOT NULL
);
CREATE INDEX inbound_bounces_recent ON inbound_bounces (account_id, email, created_at);

CREATE TABLE inbound_complaints (
  id                      bigserial PRIMARY KEY,
  inbound_message_id      text NOT NULL REFERENCES inbound_messages (id),
  account_id              text NOT NULL,
  key_id                  text NOT NULL,
  message_id              text NOT NULL,
  email                   text NOT NULL,
  feedback_type           text NOT NULL,
  isp                     text NOT NULL,
  created_at              timestamptz NOT NULL
);
CREATE INDEX inbound_complaints_account ON inbound_complaints (account_id, created_at);
