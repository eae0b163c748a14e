-- One stored message (src/mta/queue/StoredMessage.ts). The part of a send shared by all its
-- personalizations (body, headers, attachments) is one message_contents row per request, referenced
-- by each message: a 15 MB send to 1,000 personalizations stores its 15 MB once. messages.content
-- keeps the message's own part (its personalization). Rows of older versions have no content_id:
-- their content is the whole single-personalization request, decoded as such by the MTA.
CREATE TABLE message_contents (
  id                      text PRIMARY KEY,
  account_id              text REFERENCES accounts (id),   -- NULL: system mail, no account's
  content                 jsonb NOT NULL,
  created_at              timestamptz NOT NULL
);
ALTER TABLE messages ADD COLUMN content_id text REFERENCES message_contents (id);
CREATE INDEX messages_content ON messages (content_id) WHERE content_id IS NOT NULL;

-- Where the message came from (its outcome events, src/events/outcomes.ts) and its channel. The
-- claim serves the channels in separate lanes, so deliveries carry the channel too, and the due
-- index leads with it: each lane's claim is an index scan of its own due rows in due order.
ALTER TABLE messages ADD COLUMN origin text NOT NULL DEFAULT 'transactional'
  CHECK (origin IN ('transactional', 'campaign', 'sequence', 'confirmation', 'test_send', 'system'));
ALTER TABLE messages ADD COLUMN channel text NOT NULL DEFAULT 'transactional' CHECK (channel IN ('transactional', 'bulk'));
ALTER TABLE deliveries ADD COLUMN channel text NOT NULL DEFAULT 'transactional' CHECK (channel IN ('transactional', 'bulk'));
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (channel, next_attempt_at) WHERE state IN ('queued', 'deferred');
