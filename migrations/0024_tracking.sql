-- Open and click tracking of campaigns (issue 20 "Tracking"; owner src/bulk/tracking/store.ts).
-- Campaign ids are the campaigns' (`cp_…`); no foreign key, so this migration does not depend on
-- the campaigns table's, and a campaign's delete removes these rows through the owner.

-- The tracked links of a campaign's content, by index (what a click token names), written once
-- when the content is frozen, with each link's counters (kept for ever).
CREATE TABLE campaign_links (
  campaign_id    text NOT NULL,
  link_index     integer NOT NULL CHECK (link_index >= 0),
  url            text NOT NULL,
  clicks_total   bigint NOT NULL DEFAULT 0,
  clicks_unique  bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (campaign_id, link_index)
);

-- A campaign's aggregate counters, kept for ever (the detail below goes after 90 days).
-- opens_machine: the part of opens_total that came from prefetching proxies and scanners.
CREATE TABLE campaign_tracking (
  campaign_id    text PRIMARY KEY,
  opens_total    bigint NOT NULL DEFAULT 0,
  opens_unique   bigint NOT NULL DEFAULT 0,
  opens_machine  bigint NOT NULL DEFAULT 0,
  clicks_total   bigint NOT NULL DEFAULT 0,
  clicks_unique  bigint NOT NULL DEFAULT 0
);

-- Opens and clicks per campaign and hour (the analytics timeline), kept for ever like the counters.
CREATE TABLE campaign_tracking_hours (
  campaign_id  text NOT NULL,
  hour         timestamptz NOT NULL,
  opens        bigint NOT NULL DEFAULT 0,
  clicks       bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (campaign_id, hour)
);

-- One row per contact (address) and campaign: the unique constraint that makes `email.opened`
-- and `email.clicked` fire once and `*_unique` count once, kept for ever so an open after the
-- prune is not "first" again. `clicked_links` holds the link indexes clicked (per-link unique
-- counts). The first_* times are detail: the prune clears them after 90 days.
CREATE TABLE tracking_recipients (
  campaign_id       text NOT NULL,
  email             text NOT NULL,
  delivery_id       text NOT NULL,
  opened            boolean NOT NULL DEFAULT false,
  clicked_links     integer[] NOT NULL DEFAULT '{}',
  first_opened_at   timestamptz,
  first_clicked_at  timestamptz,
  PRIMARY KEY (campaign_id, email)
);

-- Per-recipient detail: every open and click, kept 90 days (detail_window_days).
CREATE TABLE tracking_hits (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  campaign_id  text NOT NULL,
  delivery_id  text NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('open', 'click')),
  link_index   integer,
  machine      boolean NOT NULL DEFAULT false,
  at           timestamptz NOT NULL,
  CHECK ((kind = 'click') = (link_index IS NOT NULL))
);
CREATE INDEX tracking_hits_delivery ON tracking_hits (delivery_id, at);
CREATE INDEX tracking_hits_at ON tracking_hits (at);
CREATE INDEX tracking_recipients_opened_at ON tracking_recipients (first_opened_at) WHERE first_opened_at IS NOT NULL;
CREATE INDEX tracking_recipients_clicked_at ON tracking_recipients (first_clicked_at) WHERE first_clicked_at IS NOT NULL;
