-- The size of a message's request as written (JSON text, attachments included): the MTA counts it
-- against HERALD_MTA_MESSAGE_BUDGET_MB before an attempt loads the message. Rows written before
-- this column fall back to the stored size (pg_column_size, read without decompressing).
ALTER TABLE messages ADD COLUMN content_bytes integer;
