/**
 * What the bulk analytics read of the queue: a campaign's deliveries as outcomes (delivered, that
 * is `sent`, and bounced), in all, over a window, and per hour. Counts are decoded (PostgreSQL's
 * bigint counts arrive as strings).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Count, decodedRows } from "./rows.ts"

export const DeliveryOutcomeCounts = Schema.Struct({ delivered: Count, bounces: Count })
export type DeliveryOutcomeCounts = typeof DeliveryOutcomeCounts.Type

const firstOrZero = (rows: ReadonlyArray<DeliveryOutcomeCounts>): DeliveryOutcomeCounts => rows[0] ?? { delivered: 0, bounces: 0 }

/** One campaign's delivered and bounced deliveries. */
export const campaignOutcomeCounts = (campaignId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decodedRows(
      DeliveryOutcomeCounts,
      sql`SELECT
            count(*) FILTER (WHERE d.state = 'sent') AS delivered, count(*) FILTER (WHERE d.state = 'bounced') AS bounces
          FROM messages m JOIN deliveries d ON d.message_id = m.id WHERE m.campaign_id = ${campaignId}`
    )).pipe(Effect.map(firstOrZero))

/**
 * The delivered and bounced deliveries of the campaigns `campaigns` selects (an SQL fragment that
 * selects campaign ids), by when they became so: delivered by `completed_at`, bounced by
 * `updated_at` (a DSN after the 250 turns a sent delivery bounced later), in (`from`, `to`].
 */
export const outcomeCountsWithin = (campaigns: unknown, from: Date, to: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decodedRows(
      DeliveryOutcomeCounts,
      sql`SELECT
            count(*) FILTER (WHERE d.state = 'sent' AND d.completed_at > ${from} AND d.completed_at <= ${to}) AS delivered,
            count(*) FILTER (WHERE d.state = 'bounced' AND d.updated_at > ${from} AND d.updated_at <= ${to}) AS bounces
          FROM messages m JOIN deliveries d ON d.message_id = m.id WHERE m.campaign_id IN (${campaigns})`
    )).pipe(Effect.map(firstOrZero))

/**
 * A campaign's delivered deliveries per hour, as rows `(hour, delivered, opens, clicks)` with 0
 * opens and clicks: an SQL fragment the analytics put in a UNION ALL with the tracking counters'
 * hours, so the timeline is one statement.
 */
export const deliveredByHour = (sql: SqlClient.SqlClient, campaignId: string) =>
  sql`SELECT date_trunc('hour', d.completed_at) AS hour, count(*) AS delivered, 0 AS opens, 0 AS clicks
              FROM messages m JOIN deliveries d ON d.message_id = m.id
              WHERE m.campaign_id = ${campaignId} AND d.state = 'sent' AND d.completed_at IS NOT NULL GROUP BY 1`

/**
 * A campaign's recipients as the queue knows them, one row per delivery: `(delivery_id, email,
 * state, sent_at)`, `sent_at` when the far side accepted it (kept also when a DSN came later). An
 * SQL fragment: the analytics' CSV export joins it with the tracking detail and streams the result
 * from a cursor, so it stays one statement.
 */
export const campaignRecipientDeliveries = (sql: SqlClient.SqlClient, campaignId: string) =>
  sql`SELECT d.id AS delivery_id, d.recipient AS email, d.state,
            coalesce((SELECT min(a.at) FROM delivery_attempts a WHERE a.delivery_id = d.id AND a.outcome = 'sent'),
              CASE WHEN d.state = 'sent' THEN d.completed_at END) AS sent_at
          FROM messages m JOIN deliveries d ON d.message_id = m.id
          WHERE m.campaign_id = ${campaignId}`
