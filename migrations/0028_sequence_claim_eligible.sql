-- The step scheduler's claim (src/bulk/sequences/StepScheduler.ts) by when a subscription may next
-- be sent: its due time, or its hold's recheck time when later (greatest() ignores a null hold).
-- Ordered by due time alone, a held step still sat at the front of sequence_subscriptions_due: an
-- account held for quota with many due steps made every pass read past all of them (bench:sequences
-- shows 10,000 held rows read per claim at 1,000,000 subscriptions). This index makes the claim a
-- range scan of what it may send, whatever is held; it replaces the due-time index, which nothing
-- else reads.
CREATE INDEX sequence_subscriptions_eligible ON sequence_subscriptions (greatest(next_due_at, held_until))
  WHERE state = 'active' AND next_due_at IS NOT NULL;
DROP INDEX sequence_subscriptions_due;
