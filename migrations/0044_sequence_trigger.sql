-- Sequences that start themselves (issue 30 item 10): a sequence with `trigger_list_id` (the API's
-- `trigger: {type: "list_joined", list_id}`, the only trigger type) enrols a contact when its
-- membership of that list becomes sendable (created confirmed, or pending → confirmed), in the
-- membership's transaction. The list must be the sequence's key's; deleting it is refused while a
-- trigger names it (lists/users.ts), and a key's deletion cascades to both: SET NULL keeps that
-- cascade's order free.
ALTER TABLE sequences ADD COLUMN trigger_list_id text REFERENCES lists (id) ON DELETE SET NULL;
-- The membership writers' look-up: the sequences a list triggers (none for most lists).
CREATE INDEX sequences_trigger_list ON sequences (trigger_list_id) WHERE trigger_list_id IS NOT NULL;
