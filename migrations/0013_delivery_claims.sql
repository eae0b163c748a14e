-- Claims of a delivery since its last recorded outcome. The claim counts one; an outcome (sent,
-- deferred, bounced, failed) sets it back to 0; work given back unattempted (shutdown, a paused
-- destination) takes its claim back. So it only grows when attempts end with no outcome at all —
-- the process died during them and the lease ran out — and the MTA fails a delivery claimed too
-- many times that way instead of letting one poisonous message crash it at every lease expiry.
ALTER TABLE deliveries ADD COLUMN claims_since_outcome integer NOT NULL DEFAULT 0;
