-- Bulk campaigns (issue 20): one content sent to a list or segment, owned by the API key that
-- created it (another key's campaign is not found). States: draft, scheduled, sending, paused,
-- completed, cancelled (src/bulk/campaigns/states.ts). The content is inline or a template's
-- (`template_id`): frozen into one message_contents row (`content_id`) when sending starts.
CREATE TABLE campaigns (
  id              text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key_id          text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  name            text NOT NULL,
  status          text NOT NULL DEFAULT 'draft'
                  CHECK (status IN ('draft', 'scheduled', 'sending', 'paused', 'completed', 'cancelled')),
  pause_reason    text CHECK (pause_reason IN ('manual', 'quota_exhausted', 'account_suspended', 'sending_paused', 'domain_unverified')),
  template_id     text,   -- no FK: deleting a template is refused while a live campaign uses it (templates/users.ts)
  subject         text,
  html            text,
  body_text       text,
  mjml            text,
  preheader       text,
  from_email      text,
  from_name       text,
  reply_to        text,
  list_ids        text[] NOT NULL DEFAULT '{}',
  segment_id      text,   -- read when sending starts; a segment deleted by then is refused at send
  total_contacts  integer,
  scheduled_at    timestamptz,
  content_id      text REFERENCES message_contents (id),
  -- The fan-out's cursor: recipients (by position) already written into the queue. Advanced in
  -- the transaction that writes their delivery rows, so a crash resumes without a gap or a twin.
  queued_count    integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  started_at      timestamptz,
  completed_at    timestamptz
);
CREATE INDEX campaigns_key ON campaigns (key_id, created_at DESC, id);
CREATE INDEX campaigns_due ON campaigns (scheduled_at) WHERE status = 'scheduled';
CREATE INDEX campaigns_active ON campaigns (status) WHERE status IN ('sending', 'paused');
CREATE INDEX campaigns_lists ON campaigns USING gin (list_ids);
CREATE INDEX campaigns_template ON campaigns (template_id) WHERE template_id IS NOT NULL;

-- The recipient set, frozen when sending starts: one row per address, numbered from 1.
CREATE TABLE campaign_recipients (
  campaign_id  text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  position     integer NOT NULL,
  contact_id   text NOT NULL,
  email        text NOT NULL,
  name         text,
  metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
  PRIMARY KEY (campaign_id, position)
);

-- A campaign message names its campaign: counts, completion and analytics read deliveries by it.
ALTER TABLE messages ADD COLUMN campaign_id text;
CREATE INDEX messages_campaign ON messages (campaign_id) WHERE campaign_id IS NOT NULL;
