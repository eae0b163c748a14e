-- GET /v1/bulk/contacts/{email}/messages (issue 29): the bulk messages one key sent to one address,
-- newest first. Without it the read walks every delivery of the key (deliveries_key_created) to
-- find one address's: a key that sent a million campaign messages would answer a contact's page
-- only past the statement timeout. Partial: the bulk lane only, so a transactional send pays
-- nothing for it; lower(recipient) because a contact's address is compared case-insensitively.
CREATE INDEX deliveries_bulk_key_recipient ON deliveries (key_id, lower(recipient), created_at DESC, id DESC)
  WHERE channel = 'bulk';
