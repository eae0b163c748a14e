-- A/B tests of a campaign (issue 30 item 12; src/bulk/campaigns/ab-test.ts). A campaign with
-- `variants` (2–4: a subject each, optionally its own content or template) and `ab_test`
-- (test_percent, metric, wait_minutes) sends a test share of its frozen recipients, split evenly at
-- random across the variants, waits, then sends the winner to the rest. Without them every column
-- below stays null and the campaign runs exactly as before.
ALTER TABLE campaigns ADD COLUMN variants jsonb;
ALTER TABLE campaigns ADD COLUMN ab_test jsonb;
-- Set when sending starts: the test share is positions 1..ab_test_size of the recipients (frozen in
-- random order), each variant's content stored once (variant_content_ids[i + 1]; content_id is the first's).
ALTER TABLE campaigns ADD COLUMN ab_test_size integer;
ALTER TABLE campaigns ADD COLUMN variant_content_ids text[];
-- When the fan-out queued the last of the test share: now + the wait. The winner is decided by one
-- conditional UPDATE (`ab_winner IS NULL`), so two replicas agree; the rest goes out with it.
ALTER TABLE campaigns ADD COLUMN ab_decide_at timestamptz;
ALTER TABLE campaigns ADD COLUMN ab_winner integer;
CREATE INDEX campaigns_ab_due ON campaigns (ab_decide_at) WHERE ab_winner IS NULL AND ab_decide_at IS NOT NULL;

-- The variant of a recipient of the test share, decided at freeze time and never changed: a crash
-- or a second replica re-queues a position with the same variant. Null for the rest (the winner's).
ALTER TABLE campaign_recipients ADD COLUMN variant smallint;
