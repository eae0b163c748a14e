-- Inbound reports that name deliveries through the returned original's Message-ID rather than
-- the delivery's VERP address are acted on only when an authenticated feedback loop sent them
-- (src/inbound/processor/trust.ts). The row of every report says what was decided:
-- `authenticated_as` how the sender was authenticated (e.g. `dkim yahoo.com`) when one was acted
-- on that way — the per-IP limit counts these — and `refusal` why a report that named deliveries
-- changed nothing (unauthenticated sender, no named recipient of the message, the limit).
ALTER TABLE inbound_messages ADD COLUMN authenticated_as text;
ALTER TABLE inbound_messages ADD COLUMN refusal text;
CREATE INDEX inbound_feedback_loop_by_ip ON inbound_messages (remote_address, processed_at)
  WHERE authenticated_as IS NOT NULL;
CREATE INDEX inbound_refused ON inbound_messages (processed_at) WHERE refusal IS NOT NULL;

-- One complaint per delivery: a report repeated (by the feedback loop, or by someone replaying
-- it) is not counted again. Rows from before this migration have no delivery_id and are left as
-- they are; reputation counts complaints by distinct (message_id, email), which is the delivery.
ALTER TABLE inbound_complaints ADD COLUMN delivery_id text;
CREATE UNIQUE INDEX inbound_complaints_once ON inbound_complaints (delivery_id)
  WHERE feedback_type IN ('abuse', 'fraud', 'virus');
