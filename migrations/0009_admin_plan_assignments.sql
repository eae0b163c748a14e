-- An admin's plan assignment (PUT /v1/admin/accounts/{id}/plan) is a plan change too, recorded in
-- plan_changes as type 'assignment': actor "admin:<key id>", from/to package, amount 0 (an
-- assignment starts a new cycle and is not charged by Herald), applied at once.

ALTER TABLE plan_changes DROP CONSTRAINT plan_changes_type_check;
ALTER TABLE plan_changes ADD CONSTRAINT plan_changes_type_check
  CHECK (type IN ('upgrade', 'downgrade', 'assignment'));
