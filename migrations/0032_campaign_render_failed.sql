-- A campaign whose content ran out of its render deadline 3 times at delivery pauses with
-- pause_reason 'render_failed' (issue 26) instead of every recipient paying the deadline again.
ALTER TABLE campaigns DROP CONSTRAINT campaigns_pause_reason_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_pause_reason_check
  CHECK (pause_reason IN ('manual', 'quota_exhausted', 'account_suspended', 'sending_paused', 'domain_unverified', 'render_failed'));
