-- Issue 30, what a marketer meets in a campaign's second week.
-- allow_partial: `send {allow_partial: true}` asked to start even when the monthly quota cannot cover
-- every recipient (no overage); kept on a scheduled campaign so its start, when due, honours it.
ALTER TABLE campaigns ADD COLUMN allow_partial boolean NOT NULL DEFAULT false;
