/**
 * The tracking endpoints' log, `tracking_ingest` (migration 0027; this file is its owner): the
 * request path appends the hits it accepted, the aggregator (aggregator.ts) takes them out again in
 * the transaction that folds them into the counters (fold.ts `foldHits`). Append and take are all
 * there is: a hit is in the log until it has been counted, and counted exactly once.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** One accepted open or click, as the token named it (not yet checked against the deliveries). */
export interface LoggedHit {
  readonly campaignId: string
  readonly deliveryId: string
  /** Set for a click: the link's index in the campaign's link table (already known to exist). */
  readonly linkIndex: number | null
  readonly machine: boolean
  readonly at: Date
}

/** Appends `hits` in one statement (its own transaction: committed when this resumes). */
export const appendHits = (hits: ReadonlyArray<LoggedHit>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO tracking_ingest ${sql.insert(hits.map((h) => ({
      campaign_id: h.campaignId,
      delivery_id: h.deliveryId,
      kind: h.linkIndex === null ? "open" : "click",
      link_index: h.linkIndex,
      machine: h.machine,
      at: h.at
    })))}`
  ).pipe(Effect.asVoid)

interface IngestRow {
  readonly id: string
  readonly campaign_id: string
  readonly delivery_id: string
  readonly link_index: number | null
  readonly machine: boolean
  readonly at: Date
}

/**
 * Takes up to `limit` of the oldest hits out of the log, in the caller's transaction: rows another
 * replica's aggregator holds are skipped (SKIP LOCKED), and a rollback puts them back. In log order.
 */
export const takeHits = (limit: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<IngestRow>`DELETE FROM tracking_ingest WHERE id IN (
        SELECT id FROM tracking_ingest ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id, campaign_id, delivery_id, link_index, machine, at`
  ).pipe(Effect.map((rows) =>
    [...rows].sort((a, b) => Number(a.id) - Number(b.id)).map((r): LoggedHit => ({
      campaignId: r.campaign_id,
      deliveryId: r.delivery_id,
      linkIndex: r.link_index,
      machine: r.machine,
      at: new Date(r.at)
    }))
  ))

/** A deleted campaign's hits not yet counted (the campaign's tracking goes with it, store.ts). */
export const dropCampaignHits = (campaignId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM tracking_ingest WHERE campaign_id = ${campaignId}`).pipe(Effect.asVoid)
