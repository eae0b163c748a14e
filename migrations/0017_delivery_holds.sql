-- A delivery held at claim time because its account's sending is paused (reputation): held_at is
-- when the MTA last held it, cleared by the next claim. Lifting the pause makes exactly these rows
-- due at once (src/mta/queue/delivery-checks.ts), without pulling other deferrals forward; until
-- then they are looked at again every few minutes, so they still fail at the queue's maximum age.
ALTER TABLE deliveries ADD COLUMN held_at timestamptz;
CREATE INDEX deliveries_held ON deliveries (account_id) WHERE held_at IS NOT NULL;
