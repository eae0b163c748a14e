-- Saved segments (issue 19 "Segments"): a name and its rules, owned by the API key that created
-- it (another key's segment is not found). `rules` is the rule set as validated by the API
-- ({match, rules: [...]}); the lists delete asks which segments name a list in a `list` rule.
CREATE TABLE segments (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key_id      text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  name        text NOT NULL,
  rules       jsonb NOT NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX segments_key ON segments (key_id, created_at DESC, id);
