-- A key's bulk settings (issue 30 item 9): the postal address the law asks every bulk message to
-- carry (CAN-SPAM) and the footer's own engine templates (null: the appliance's default footer).
-- Without a row, or with no address, a campaign does not start and a due sequence step holds.
CREATE TABLE bulk_settings (
  key_id          text PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  account_id      text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  postal_address  text NOT NULL,
  footer_html     text,
  footer_text     text,
  updated_at      timestamptz NOT NULL
);

-- A scheduled campaign whose key has no postal address when it comes due pauses with its reason (the list keeps 0039's content_incomplete).
ALTER TABLE campaigns DROP CONSTRAINT campaigns_pause_reason_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_pause_reason_check
  CHECK (pause_reason IN ('manual', 'quota_exhausted', 'account_suspended', 'sending_paused', 'domain_unverified', 'render_failed',
    'content_incomplete', 'postal_address_missing'));
