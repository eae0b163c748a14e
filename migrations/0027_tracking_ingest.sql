-- The tracking endpoints' log (issue 20 "Tracking"; owner src/bulk/tracking/ingest.ts): each open or
-- click accepted by `GET /o/` or `GET /c/` is one row here, written by one INSERT (group-committed)
-- on the request path. The `tracking-aggregator` actor deletes the rows it folds into the counters,
-- markers, events and detail (migration 0024) in the same transaction, so each hit counts once.
-- Append-only and unindexed but for its key: the request path pays for one heap and one index entry.
CREATE TABLE tracking_ingest (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  campaign_id  text NOT NULL,
  delivery_id  text NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('open', 'click')),
  link_index   integer,
  machine      boolean NOT NULL DEFAULT false,
  at           timestamptz NOT NULL,
  CHECK ((kind = 'click') = (link_index IS NOT NULL))
);
