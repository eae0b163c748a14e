-- The dispatcher claims a key's due deliveries in batches (at most a few workers per key): without
-- this index, the claim for one key reads through every other key's due rows, which grows slow
-- exactly when a dead receiver has piled up a large backlog.
CREATE INDEX webhook_deliveries_key_due ON webhook_deliveries (key_id, next_attempt_at) WHERE status = 'pending';
