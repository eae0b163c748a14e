/**
 * What tracking reads of the queue: which campaign delivery an open or click names. The
 * aggregator counts a logged hit only for a delivery of a campaign message (a forged or stale
 * token names none), and credits the delivery's account, key, message and campaign.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodedRows } from "./rows.ts"

export const CampaignDelivery = Schema.Struct({
  id: Schema.String,
  recipient: Schema.String,
  account_id: Schema.String,
  key_id: Schema.String,
  message_id: Schema.String,
  campaign_id: Schema.String
})
export type CampaignDelivery = typeof CampaignDelivery.Type

/** The campaign deliveries among `deliveryIds`, by id (ids of other deliveries, or of none, are left out). */
export const campaignDeliveriesById = (deliveryIds: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    decodedRows(
      CampaignDelivery,
      sql`SELECT d.id, d.recipient, m.account_id, m.key_id, m.id AS message_id, m.campaign_id
      FROM deliveries d JOIN messages m ON m.id = d.message_id
      WHERE d.id IN ${sql.in([...new Set(deliveryIds)])} AND m.origin = 'campaign'`
    )).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.id, r]))))
