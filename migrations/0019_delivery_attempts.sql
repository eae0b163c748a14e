-- One row per outcome the MTA wrote for a delivery (src/mta/queue/DeliveryQueue.ts completeMany,
-- in the statement that writes the outcome): the history behind GET /v1/mail/messages/{id}. The
-- deliveries row keeps only the last reply; this keeps each one, with the remote host the attempt
-- talked to (NULL when no SMTP session decided it: a delivery-time check, no route, the simulator).
-- `outcome` is what the attempt decided: sent, bounced, deferred or failed.
-- No foreign key: like inbound_bounces, the history must not make pruning deliveries harder, and
-- the row is written only for a delivery the same statement just updated.
CREATE TABLE delivery_attempts (
  id                      bigserial PRIMARY KEY,
  delivery_id             text NOT NULL,
  at                      timestamptz NOT NULL,
  host                    text,
  code                    integer,
  status                  text,
  reply                   text,
  outcome                 text NOT NULL CHECK (outcome IN ('sent', 'bounced', 'deferred', 'failed'))
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, at);

-- The message lookup reads a message's late DSNs by delivery (inbound_complaints has its own:
-- inbound_complaints_once).
CREATE INDEX inbound_bounces_delivery ON inbound_bounces (delivery_id) WHERE delivery_id IS NOT NULL;
