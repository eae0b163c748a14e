-- Each tracking token's repeat window (issue 26 "Unauthenticated endpoints cost a bounded amount";
-- owner src/bulk/tracking/windows.ts): an open or a click is a fetch of a token not within
-- HERALD_TRACKING_REPEAT_SECONDS of the token's last counted fetch (`counted_at`), and one token
-- leaves at most a fixed number of detail rows (`detail_rows` counts them). One row per token and
-- opener class: `link_index` -1 is the open pixel, `machine` a prefetching proxy's opens (their own
-- window, so the person's open that follows is always counted). Read and locked once per batch by
-- the tracking aggregator. Nothing already counted is recounted: the table starts empty.
-- `campaign_id` is for a campaign's delete (rare: no index, so counting pays for no second one);
-- the hourly prune drops rows not counted for 90 days (their detail is gone by then).
CREATE TABLE tracking_token_windows (
  delivery_id  text NOT NULL,
  link_index   integer NOT NULL CHECK (link_index >= -1),
  machine      boolean NOT NULL,
  campaign_id  text NOT NULL,
  counted_at   timestamptz,
  detail_rows  integer NOT NULL DEFAULT 0,
  PRIMARY KEY (delivery_id, link_index, machine)
);
