-- A large inbound message on its way in: the MX listener writes it here in chunks as they arrive
-- (each chunk its own short INSERT, so a connection never holds more than a chunk or two of a
-- message in memory), then one statement moves the chunks into inbound_messages.raw and deletes
-- them, committed before the 250. Chunks of a transfer that never finished (the sender hung up,
-- the process died mid-DATA) belong to no message; the processor's prune drops them after a day.
CREATE TABLE inbound_chunks (
  message_id              text NOT NULL,               -- the inbound_messages id the message will get
  seq                     integer NOT NULL,
  data                    bytea NOT NULL,
  staged_at               timestamptz NOT NULL,
  PRIMARY KEY (message_id, seq)
);
-- Kept out of line and uncompressed: a chunk is written once and read once, moments later, and
-- compressing it there would only be done again when the whole message is stored.
ALTER TABLE inbound_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE INDEX inbound_chunks_staged ON inbound_chunks (staged_at);
