-- The subject a campaign or sequence message went out with, as the contact's render made it
-- (the message row keeps the template's: `Hello {{ name }}`). Written with the delivery's outcome,
-- in the same statement, so the audit and the outcome events show what was sent. NULL for
-- transactional mail, whose stored subject is the sent one.
ALTER TABLE deliveries ADD COLUMN rendered_subject text;
