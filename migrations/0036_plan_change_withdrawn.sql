-- A pending downgrade can be withdrawn: cancelled by the account (cancel-pending-change) or
-- replaced by a later downgrade. withdrawn_at marks its plan_changes row, so the monthly reset marks
-- as applied only the downgrade it really applied (issue 31: another downgrade overwrote it silently).
ALTER TABLE plan_changes ADD COLUMN withdrawn_at timestamptz;
