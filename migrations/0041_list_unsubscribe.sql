-- Unsubscribing from one list (issue 30 item 8, DESIGN "Unsubscribing from one list"): a
-- membership becomes `unsubscribed`, never sendable from that list again; only the person can opt
-- back in (re-added on a list that requires confirmation it is `pending` with a new confirmation).
ALTER TABLE list_memberships DROP CONSTRAINT list_memberships_status_check;
ALTER TABLE list_memberships ADD CONSTRAINT list_memberships_status_check CHECK (status IN ('pending', 'confirmed', 'unsubscribed'));
