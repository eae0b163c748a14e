-- Bulk templates (issue 18): content written once and rendered per contact, owned by the API key
-- that created it (another key's template is not found). `html` is what is sent; when `mjml` is
-- present, `html` was compiled from it when the template was saved. `version_seq` numbers the
-- template's versions (updated under the row lock, so two saves never take the same number).
CREATE TABLE templates (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key_id        text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  name          text NOT NULL,
  subject       text NOT NULL,
  html          text NOT NULL,
  body_text     text NOT NULL,
  mjml          text,
  preheader     text,
  vars          jsonb NOT NULL DEFAULT '{}'::jsonb,
  from_email    text,
  from_name     text,
  reply_to      text,
  version_seq   integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL
);
CREATE INDEX templates_key ON templates (key_id, created_at DESC, id);

-- Every create, update and restore stores the whole content as a version, so a restore can
-- bring it back; at most HERALD_TEMPLATE_VERSIONS_MAX per template are kept.
CREATE TABLE template_versions (
  template_id   text NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
  id            integer NOT NULL,
  actor         text NOT NULL,
  name          text NOT NULL,
  subject       text NOT NULL,
  html          text NOT NULL,
  body_text     text NOT NULL,
  mjml          text,
  preheader     text,
  vars          jsonb NOT NULL,
  from_email    text,
  from_name     text,
  reply_to      text,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (template_id, id)
);
