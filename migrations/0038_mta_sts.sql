-- MTA-STS (RFC 8461) and TLS-RPT (RFC 8460), issue #35.
--
-- mta_sts_policies: one row per recipient domain the MTA looked up (src/mta/mta-sts/store.ts),
-- shared by every replica and kept across restarts (each process also keeps its own short-lived
-- copy, so a delivery reads no row). `policy_*` is the last policy fetched and parsed, used until
-- `policy_expires_at` (fetched_at + max_age) even when a later fetch fails: a failed fetch never
-- replaces a policy that has not expired (RFC 8461 §5.1, no downgrade). `txt_id` is the `id=` of
-- the `_mta-sts` TXT record the policy was fetched under: another id means a new policy to fetch.
-- A domain with no usable policy whose fetch failed is not fetched again before `retry_at`.
-- `tlsrpt_rua`: the `rua=` destinations of its `_smtp._tls` TXT record (RFC 8460 §3), for the
-- daily report (src/mta/tls-rpt/).
CREATE TABLE mta_sts_policies (
  domain            text PRIMARY KEY,
  txt_id            text,
  policy_mode       text CHECK (policy_mode IN ('enforce', 'testing', 'none')),
  policy_mx         text[] NOT NULL DEFAULT '{}',
  policy_max_age    integer,
  policy_text       text,
  policy_txt_id     text,
  fetched_at        timestamptz,
  policy_expires_at timestamptz,
  last_failure      text,
  retry_at          timestamptz,
  tlsrpt_rua        text[] NOT NULL DEFAULT '{}',
  checked_at        timestamptz NOT NULL
);

-- The TLS of the SMTP session that decided an attempt (NULL when none did): the protocol version
-- (`TLSv1.3`; NULL in plaintext), whether the certificate verified for the MX name, the MTA-STS mode
-- that applied (NULL: no policy) and, when the session failed its TLS requirements or its
-- certificate did not verify, the RFC 8460 result type (`starttls-not-supported`,
-- `certificate-host-mismatch`, ...). The TLS-RPT report counts these rows.
ALTER TABLE delivery_attempts
  ADD COLUMN tls_version text,
  ADD COLUMN tls_verified boolean,
  ADD COLUMN mta_sts_mode text,
  ADD COLUMN tls_failure text;

-- One row per TLS-RPT report sent (policy domain and UTC day): the replica that inserts it sends it,
-- the others see the row and skip the day.
CREATE TABLE tls_rpt_reports (
  policy_domain text NOT NULL,
  day           date NOT NULL,
  report_id     text NOT NULL,
  sent_at       timestamptz NOT NULL,
  destinations  text[] NOT NULL,
  outcome       text,
  PRIMARY KEY (policy_domain, day)
);

-- The daily TLS-RPT scan reads one day of attempts that had an SMTP session (src/mta/tls-rpt/store.ts).
CREATE INDEX delivery_attempts_tls_at ON delivery_attempts (at) WHERE tls_verified IS NOT NULL;
