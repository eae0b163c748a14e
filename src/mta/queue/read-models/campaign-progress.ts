/**
 * A campaign's progress as its deliveries in the queue tell it: what the campaigns module reads of
 * `messages` and `deliveries` to show a campaign's counts and to decide when it is complete, and
 * the campaign's shared content summary its fan-out writes each batch with.
 *
 * Two of them are SQL fragments over a campaign id expression (`sql\`c.id\``): the campaigns
 * module lists campaigns with their counts in one statement (a LATERAL join) and finds the ones
 * to complete with a NOT EXISTS, and a round trip per campaign would cost what the join saves.
 * The queue still owns the SQL; the caller composes it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Count, decodedRows } from "./rows.ts"

/** The counts of one campaign's deliveries (`sent`, `failed`, `open`: not yet final), as one row. */
export const campaignDeliveryCounts = (sql: SqlClient.SqlClient, campaignId: unknown) =>
  sql`SELECT count(*) FILTER (WHERE d.state = 'sent')::integer AS sent,
      count(*) FILTER (WHERE d.state = 'bounced' OR (d.state = 'failed' AND d.attempts > 0))::integer AS failed,
      count(*) FILTER (WHERE d.state IN ('queued', 'deferred'))::integer AS open
    FROM messages m JOIN deliveries d ON d.message_id = m.id WHERE m.campaign_id = ${campaignId}`

/**
 * Each delivery of one campaign by its recipient's position (`messages.personalization_index`, as
 * the fan-out writes it): `position`, `delivery_id`, `state`. An A/B campaign's per-variant figures
 * join these to the variant of each position.
 */
export const campaignDeliveriesByPosition = (sql: SqlClient.SqlClient, campaignId: unknown) =>
  sql`SELECT m.personalization_index AS position, d.id AS delivery_id, d.state
    FROM messages m JOIN deliveries d ON d.message_id = m.id WHERE m.campaign_id = ${campaignId}`

/**
 * A campaign's final deliveries (accepted, bounced, or failed for good after an attempt: a row a
 * cancel dropped unattempted is none) and its hard bounces among them (a DSN after acceptance, or a
 * 5xx refusal), as one row: the reputation check's counts (bulk/campaigns/reputation.ts).
 */
export const campaignFinalCounts = (sql: SqlClient.SqlClient, campaignId: unknown) =>
  sql`SELECT count(*) FILTER (WHERE d.state IN ('sent', 'bounced') OR (d.state = 'failed' AND d.attempts > 0))::integer AS final,
      count(*) FILTER (WHERE d.state = 'bounced' OR (d.state = 'failed' AND d.attempts > 0 AND d.last_code >= 500))::integer AS hard_bounced
    FROM messages m JOIN deliveries d ON d.message_id = m.id WHERE m.campaign_id = ${campaignId}`

/** True while a delivery of the campaign is not final: its completion waits. */
export const campaignHasOpenDeliveries = (sql: SqlClient.SqlClient, campaignId: unknown) =>
  sql`EXISTS (SELECT 1 FROM messages m JOIN deliveries d ON d.message_id = m.id
            WHERE m.campaign_id = ${campaignId} AND d.state IN ('queued', 'deferred'))`

export const CampaignOutcomes = Schema.Struct({ sent: Count, failed: Count, open: Count })
export type CampaignOutcomes = typeof CampaignOutcomes.Type

/** One campaign's counts, decoded (all 0 before any delivery). */
export const campaignOutcomes = (campaignId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decodedRows(CampaignOutcomes, sql`${campaignDeliveryCounts(sql, campaignId)}`).pipe(
      Effect.map((rows): CampaignOutcomes => rows[0] ?? { sent: 0, failed: 0, open: 0 })
    ))

/**
 * The sender a started campaign's mail goes out with, as frozen into its shared content: columns
 * `frozen_from_email`, `frozen_from_name`, `frozen_reply_to` over a content id expression (a
 * LATERAL join, for the same reason as the counts).
 */
export const frozenSender = (sql: SqlClient.SqlClient, contentId: unknown) =>
  sql`SELECT mc.content->'from'->>'email' AS frozen_from_email, mc.content->'from'->>'name' AS frozen_from_name,
      mc.content->'reply_to'->>'email' AS frozen_reply_to
    FROM message_contents mc WHERE mc.id = ${contentId}`

const SharedContentSummary = Schema.Struct({ subject: Schema.String, bytes: Count })
export type SharedContentSummary = typeof SharedContentSummary.Type

/** The subject and stored size of a shared part (a campaign's content, stored when it starts). */
export const sharedContentSummary = (contentId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decodedRows(
      SharedContentSummary,
      sql`SELECT content->>'subject' AS subject, octet_length(content::text) AS bytes FROM message_contents WHERE id = ${contentId}`
    ).pipe(Effect.map((rows) => Option.fromNullable(rows[0]))))
