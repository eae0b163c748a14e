-- Issue 30, what a marketer meets in a campaign's second week.
-- allow_partial: `send {allow_partial: true}` asked to start even when the monthly quota cannot cover
-- every recipient (no overage); kept on a scheduled campaign so its start, when due, honours it.
ALTER TABLE campaigns ADD COLUMN allow_partial boolean NOT NULL DEFAULT false;

-- pause_reason 'content_incomplete': a scheduled campaign that comes due with its segment or
-- template gone, or its content without subject, sender or body, pauses with it (it paused as
-- 'manual', which the marketer had not done); pause_message says what is missing.
ALTER TABLE campaigns DROP CONSTRAINT campaigns_pause_reason_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_pause_reason_check
  CHECK (pause_reason IN ('manual', 'quota_exhausted', 'account_suspended', 'sending_paused', 'domain_unverified', 'render_failed',
    'content_incomplete'));
ALTER TABLE campaigns ADD COLUMN pause_message text;

-- Deleting a contact cancels its running sequence subscriptions first (sequence.cancelled, reason
-- 'manual'), and its ended subscriptions outlive it: contact_id is set NULL rather than the row
-- cascading away, so a contact re-created with the same address is still not enrolled again into a
-- sequence it ended (the enrolment matches such a row by address).
ALTER TABLE sequence_subscriptions ALTER COLUMN contact_id DROP NOT NULL;
ALTER TABLE sequence_subscriptions DROP CONSTRAINT sequence_subscriptions_contact_id_fkey;
ALTER TABLE sequence_subscriptions ADD CONSTRAINT sequence_subscriptions_contact_id_fkey
  FOREIGN KEY (contact_id) REFERENCES contacts (id) ON DELETE SET NULL;
CREATE INDEX sequence_subscriptions_orphaned ON sequence_subscriptions (sequence_id, lower(email)) WHERE contact_id IS NULL;

-- A deleted campaign that had started leaves its id here so GET /v1/bulk/analytics/rates keeps
-- counting its aggregate figures (its deliveries, its opens and clicks counters, the complaints
-- and unsubscribes naming it): the contract keeps aggregate counters indefinitely.
CREATE TABLE deleted_campaigns (
  id          text PRIMARY KEY,
  account_id  text NOT NULL,
  key_id      text NOT NULL,
  deleted_at  timestamptz NOT NULL
);
CREATE INDEX deleted_campaigns_key ON deleted_campaigns (key_id);
