-- Who vouched for a verified domain: its verification TXT record ('dns') or an operator who trusted
-- it without DNS ('operator'; such a domain is not re-checked). NULL while unverified.
ALTER TABLE domains ADD COLUMN verified_by text CHECK (verified_by IN ('dns', 'operator'));
UPDATE domains SET verified_by = 'dns' WHERE verified_at IS NOT NULL;
