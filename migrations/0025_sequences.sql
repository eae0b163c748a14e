-- Bulk sequences (issue 21): automated multi-step mailings owned by the API key that created them.
-- A step's content comes from its template or its own fields (its own win); `html` is compiled
-- from `mjml` when the step is saved. Step ids are integers numbered per sequence (`step_seq`,
-- updated under the sequence's row lock); `position` orders them 1..N.
CREATE TABLE sequences (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key_id      text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  name        text NOT NULL,
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  from_email  text,
  from_name   text,
  reply_to    text,
  step_seq    integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX sequences_key ON sequences (key_id, created_at DESC, id);

CREATE TABLE sequence_steps (
  sequence_id     text NOT NULL REFERENCES sequences (id) ON DELETE CASCADE,
  id              integer NOT NULL,
  position        integer NOT NULL,
  offset_seconds  integer NOT NULL CHECK (offset_seconds >= 0),
  subject         text,
  preheader       text,
  mjml            text,
  html            text,
  body_text       text,
  from_email      text,
  from_name       text,
  reply_to        text,
  -- No foreign key: deleting a template a step uses is refused by the templates API (409), and a
  -- key's deletion cascades to both tables in an order a RESTRICT key would break.
  template_id     text,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  PRIMARY KEY (sequence_id, id)
);
CREATE INDEX sequence_steps_template ON sequence_steps (template_id) WHERE template_id IS NOT NULL;

-- One subscription per contact and sequence (enrolment's ON CONFLICT target: two enrolments at
-- once enrol each contact once). `last_step_id` is the last step queued (by id, so reordering or
-- appending never sends a step twice), `last_due_at` its due time (enrolment for none), and
-- `next_due_at` the next step's due time: null once every step is queued (the subscription then
-- waits for the last step's final state to complete) or when terminal. `held_until` and
-- `hold_reason`: a due step the quota, the account or the sender domain stops waits until then.
CREATE TABLE sequence_subscriptions (
  id            text PRIMARY KEY,
  sequence_id   text NOT NULL REFERENCES sequences (id) ON DELETE CASCADE,
  account_id    text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key_id        text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  contact_id    text NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
  email         text NOT NULL,
  state         text NOT NULL CHECK (state IN ('active', 'paused', 'completed', 'cancelled')),
  reason        text CHECK (reason IN ('unsubscribed', 'manual', 'bounced', 'complained', 'suppressed')),
  last_step_id  integer,
  last_due_at   timestamptz NOT NULL,
  next_due_at   timestamptz,
  held_until    timestamptz,
  hold_reason   text,
  enrolled_at   timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  finished_at   timestamptz,
  UNIQUE (sequence_id, contact_id)
);
-- The scheduler's claim: due active subscriptions in due order, an index scan whatever the history.
CREATE INDEX sequence_subscriptions_due ON sequence_subscriptions (next_due_at) WHERE state = 'active' AND next_due_at IS NOT NULL;
-- Subscriptions whose every step is queued, waiting for the last one's final state.
CREATE INDEX sequence_subscriptions_finishing ON sequence_subscriptions (id) WHERE state = 'active' AND next_due_at IS NULL;
-- A suppression cancels the address's subscriptions in the account (or in every account).
CREATE INDEX sequence_subscriptions_address ON sequence_subscriptions (lower(email), account_id) WHERE state IN ('active', 'paused');
CREATE INDEX sequence_subscriptions_sequence ON sequence_subscriptions (sequence_id, state, enrolled_at, id);

-- Every step queued for a subscription, with its message: the primary key makes a step queued at
-- most once per subscription whatever happens to the scheduler (restarts, two replicas), and the
-- message tells when the last step reached its final state.
CREATE TABLE sequence_step_sends (
  subscription_id  text NOT NULL REFERENCES sequence_subscriptions (id) ON DELETE CASCADE,
  step_id          integer NOT NULL,
  message_id       text NOT NULL,
  queued_at        timestamptz NOT NULL,
  PRIMARY KEY (subscription_id, step_id)
);
