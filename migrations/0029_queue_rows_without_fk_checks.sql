-- The queue's rows are written without foreign-key checks: a campaign's fan-out writes a message
-- and a delivery per contact, and the four checks on them (messages → accounts, api_keys,
-- message_contents; deliveries → messages) were 40 % of the statement that writes a batch
-- (EXPLAIN ANALYZE of 5,000 rows: 285 ms with them, 180 ms without; bench/campaign.ts).
-- What they guarded cannot happen through Herald: no code deletes an account, a key, a shared
-- content or a message (accounts are suspended, keys revoked, and the queue keeps its rows), which
-- test/foundation/queue-parents.test.ts keeps true. deliveries.account_id and key_id never had one.
ALTER TABLE messages DROP CONSTRAINT messages_account_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_key_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_content_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_message_id_fkey;
-- The index on messages.content_id served only that check's side for a deleted content: no query
-- reads messages by their content, and for a campaign every message has the same one.
DROP INDEX messages_content;
