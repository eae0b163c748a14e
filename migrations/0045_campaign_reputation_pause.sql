-- Protect the sender's reputation per campaign (issue 30 item 11): a sending campaign whose hard
-- bounces or complaints reach their share of its final deliveries pauses itself with
-- `bounce_rate` / `complaint_rate` (the list keeps 0040's reasons). `reputation_armed_from`: the
-- final deliveries it had when last resumed from such a pause; the check judges it again only
-- once HERALD_CAMPAIGN_PAUSE_MIN more are final (0: from the start).
ALTER TABLE campaigns DROP CONSTRAINT campaigns_pause_reason_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_pause_reason_check
  CHECK (pause_reason IN ('manual', 'quota_exhausted', 'account_suspended', 'sending_paused', 'domain_unverified', 'render_failed',
    'content_incomplete', 'postal_address_missing', 'bounce_rate', 'complaint_rate'));
ALTER TABLE campaigns ADD COLUMN reputation_armed_from integer NOT NULL DEFAULT 0;
