/**
 * What a campaign's pause, resume and cancel do to its deliveries already in the queue (issue 20
 * state table). The delivery's states belong to the queue, so the statements live here; the
 * campaigns service calls them in the transaction that changes the campaign's state.
 *
 * - pause: the campaign's queued rows not in an attempt's hands are held (held_at set, due again
 *   at the recheck), like an account's pause; a row in hand is held by its attempt, which reads
 *   the campaign's state with its checks (delivery-checks.ts).
 * - resume: the held rows are due at once.
 * - cancel: rows never attempted and not in hand are dropped: `failed` with no attempt and no
 *   event (the campaign's counts leave them out); a row in hand, or a deferred one, fails at its
 *   attempt ("campaign cancelled").
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { HOLD_RECHECK_MS } from "./delivery-checks.ts"

/** The campaign's rows still waiting and in no attempt's hands at `now` (no lease, or a lease run out). */
const waiting = (sql: SqlClient.SqlClient, campaignId: string, now: Date) =>
  sql`message_id IN (SELECT id FROM messages WHERE campaign_id = ${campaignId})
    AND state IN ('queued', 'deferred') AND (lease_owner IS NULL OR next_attempt_at <= ${now})`

export const holdCampaignDeliveries = (campaignId: string, now: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE deliveries SET held_at = ${now}, lease_owner = NULL,
        next_attempt_at = greatest(next_attempt_at, ${new Date(now.getTime() + HOLD_RECHECK_MS)})
      WHERE ${waiting(sql, campaignId, now)}`).pipe(Effect.asVoid)

export const wakeCampaignDeliveries = (campaignId: string, now: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE deliveries SET next_attempt_at = ${now}, held_at = NULL
      WHERE message_id IN (SELECT id FROM messages WHERE campaign_id = ${campaignId})
        AND held_at IS NOT NULL AND state IN ('queued', 'deferred')`).pipe(Effect.asVoid)

export const dropCampaignDeliveries = (campaignId: string, now: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE deliveries SET state = 'failed', last_status = '5.0.0', last_reply = 'campaign cancelled before this delivery was attempted',
        lease_owner = NULL, held_at = NULL, updated_at = ${now}, completed_at = ${now}
      WHERE ${waiting(sql, campaignId, now)} AND attempts = 0`).pipe(Effect.asVoid)
