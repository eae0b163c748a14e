-- Inbound mail at the MX listener: raw messages committed before 250, parsed afterwards by the
-- inbound actor (claims with a lease in next_attempt_at, like the outbound queue), and the DMARC
-- aggregate reports they carry.

CREATE TABLE inbound_messages (
  id                      text PRIMARY KEY,
  received_at             timestamptz NOT NULL,
  remote_address          text NOT NULL,
  helo                    text,
  mail_from               text NOT NULL,
  rcpt_to                 jsonb NOT NULL,               -- array of addresses
  size                    integer NOT NULL,
  raw                     bytea,                       -- NULL once pruned after the retention period
  state                   text NOT NULL DEFAULT 'received'
                          CHECK (state IN ('received', 'processed', 'failed')),
  kind                    text,                        -- bounce, complaint, dmarc, other
  attempts                integer NOT NULL DEFAULT 0,
  next_attempt_at         timestamptz NOT NULL,
  lease_owner             text,
  error                   text,
  result                  jsonb,
  processed_at            timestamptz
);
CREATE INDEX inbound_due ON inbound_messages (next_attempt_at) WHERE state = 'received';
CREATE INDEX inbound_prune ON inbound_messages (received_at) WHERE raw IS NOT NULL;

CREATE TABLE dmarc_reports (
  id                      bigserial PRIMARY KEY,
  account_id              text NOT NULL REFERENCES accounts (id),
  domain                  text NOT NULL,
  org_name                text NOT NULL,
  report_id               text NOT NULL,
  date_begin              bigint NOT NULL,             -- epoch seconds
  date_end                bigint NOT NULL,
  policy_p                text NOT NULL,
  messages                integer NOT NULL,
  inbound_message_id      text REFERENCES inbound_messages (id),
  created_at              timestamptz NOT NULL,
  UNIQUE (account_id, org_name, report_id)
);
CREATE INDEX dmarc_reports_domain ON dmarc_reports (account_id, domain, date_begin);

CREATE TABLE dmarc_records (
  report_id               bigint NOT NULL REFERENCES dmarc_reports (id) ON DELETE CASCADE,
  source_ip               text NOT NULL,
  count                   integer NOT NULL,
  disposition             text,
  dkim                    text,                        -- policy_evaluated dkim: pass / fail
  spf                     text,
  header_from             text
);
CREATE INDEX dmarc_records_report ON dmarc_records (report_id);

-- One dmarc.alignment_failure per domain and window (DESIGN: once per window, not per report).
CREATE TABLE dmarc_alerts (
  account_id              text NOT NULL,
  domain                  text NOT NULL,
  window_start            timestamptz NOT NULL,
  created_at              timestamptz NOT NULL,
  PRIMARY KEY (account_id, domain, window_start)
);
