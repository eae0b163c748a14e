-- When each address last got a list's confirmation mail (issue 26, finding 5): at most one per
-- address and list in 24 hours. Keyed by the address, not the contact or the membership, because
-- it must outlive both: deleting the member (or the contact) and adding the address again used to
-- mail it again, ten mails a second to one inbox. `address` is lower case. A row older than 24 h
-- decides nothing: the call that claims a new one replaces it, and each call that mails deletes a
-- bounded number of such rows (`sent_at` index), so the table holds about a day of confirmations.
CREATE TABLE confirmation_sends (
  list_id   text NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
  address   text NOT NULL,
  sent_at   timestamptz NOT NULL,
  PRIMARY KEY (list_id, address)
);
CREATE INDEX confirmation_sends_sent_at ON confirmation_sends (sent_at);
