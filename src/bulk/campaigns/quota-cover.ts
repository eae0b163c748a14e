/**
 * Whether the monthly quota covers what a campaign is about to send (issue 30 item 2). Without
 * overage, a campaign whose recipients not yet queued exceed what is left of the quota would start
 * and pause part-way (`quota_exhausted`): `send` refuses it instead with the send endpoint's 400
 * `overage_not_offered` (`allow_partial: true` keeps the old behaviour), and a scheduled one pauses
 * when it comes due.
 *
 * Advisory: two campaigns checked at once may both pass; the fan-out's charge stays the exact one
 * and a later shortfall pauses the campaign as before.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SIMULATOR_DOMAIN } from "../../lib/simulator.ts"
import type { Limits } from "../../platform/usage/AccountLimits.ts"
import { OverageNotOffered } from "../../platform/usage/Quota.ts"

/** A recipient the quota charges: any but the simulator's addresses (as `quotaCountOf`, over the recipient's domain). */
export const chargeable = (sql: SqlClient.SqlClient) => sql`lower(substring(email FROM '[^@]*$')) <> ${SIMULATOR_DOMAIN}`

/**
 * Fails with OverageNotOffered when the campaign's frozen recipients not yet queued (the quota
 * charges them as they are queued) need more than the quota has left; run after the freeze, in its
 * transaction, so a refusal leaves nothing frozen. A plan with overage is always covered.
 */
export const quotaCovers = (campaignId: string, limits: Limits) =>
  Effect.gen(function*() {
    if (limits.overageOffered) return
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ needed: number; used: number }>`SELECT
        (SELECT count(*)::integer FROM campaign_recipients r
          WHERE r.campaign_id = ${campaignId} AND r.position > (SELECT queued_count FROM campaigns WHERE id = ${campaignId})
            AND ${chargeable(sql)}) AS needed,
        coalesce((SELECT sent FROM account_usage WHERE account_id = ${limits.accountId} AND period_start = ${limits.period.start}), 0)::integer AS used`
    const needed = row?.needed ?? 0
    const used = row?.used ?? 0
    if (needed > 0 && used + needed > limits.monthlyQuota) {
      return yield* new OverageNotOffered({ used, quota: limits.monthlyQuota, requested: needed })
    }
  })
