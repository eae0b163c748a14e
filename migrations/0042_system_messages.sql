-- System mail (the stored message's `system` form, src/mta/queue/StoredMessage.ts) belongs to no
-- account: the appliance's own TLS-RPT reports (RFC 8460) go through the queue like every other
-- message — throttling, retries, MTA-STS, VERP — but no account, key, quota or webhook is theirs.
-- A message has an account and a key exactly when it is not system mail; its deliveries carry the
-- same (the claim copies them from the delivery row, and no account's check can match a NULL).
ALTER TABLE messages ALTER COLUMN account_id DROP NOT NULL;
ALTER TABLE messages ALTER COLUMN key_id DROP NOT NULL;
ALTER TABLE messages ADD CONSTRAINT messages_system_has_no_account
  CHECK ((origin = 'system') = (account_id IS NULL) AND (account_id IS NULL) = (key_id IS NULL));
ALTER TABLE deliveries ALTER COLUMN account_id DROP NOT NULL;
ALTER TABLE deliveries ALTER COLUMN key_id DROP NOT NULL;
