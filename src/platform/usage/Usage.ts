/**
 * The usage record (GET /v1/client/usage): the account's subscription, each key's own sends this
 * period, and the account's remaining quota — the same counters the send path charges.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AccountLimits } from "./AccountLimits.ts"

const pendingChange = (subscriptions: ReadonlyArray<{ pending_package_id: string | null }>, reset: Date) => {
  const pending = subscriptions.find((s) => s.pending_package_id !== null)?.pending_package_id
  return pending === undefined || pending === null ? null : { package_id: pending, effective_at: reset.toISOString() }
}

export class Usage extends Effect.Service<Usage>()("herald/Usage", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const limitsOf = yield* AccountLimits

    const record = (accountId: string, now: Date) =>
      Effect.gen(function*() {
        const limits = yield* limitsOf.of(accountId, now)
        const subscriptions = yield* sql<{
          package_id: string; package_name: string; monthly_quota: number; rate_per_min: number
          billing_period: string; started_at: Date; pending_package_id: string | null
        }>`
          SELECT s.package_id, p.name AS package_name, p.monthly_quota, p.rate_per_min, s.billing_period, s.started_at,
            s.pending_package_id
          FROM subscriptions s JOIN plans p ON p.id = s.package_id
          WHERE s.account_id = ${accountId} AND s.status = 'active'`
        const [used] = yield* sql<{ sent: number; overage: number }>`
          SELECT sent, overage FROM account_usage WHERE account_id = ${accountId} AND period_start = ${limits.period.start}`
        const [price] = yield* sql<{ cents_per_1000: number | null }>`
          SELECT p.overage_price_usd_cents_per_1000 AS cents_per_1000
          FROM subscriptions s JOIN plans p ON p.id = s.package_id
          WHERE s.account_id = ${accountId} AND s.status = 'active'`
        const overEmails = used?.overage ?? 0
        const keys = yield* sql<{ id: string; label: string; sent: number | null }>`
          SELECT k.id, k.label, u.sent FROM api_keys k
          LEFT JOIN key_usage u ON u.key_id = k.id AND u.period_start = ${limits.period.start}
          WHERE k.account_id = ${accountId} AND k.revoked_at IS NULL ORDER BY k.created_at, k.id`
        const remaining = Math.max(0, limits.monthlyQuota - (used?.sent ?? 0))
        return {
          subscriptions: subscriptions.map((s) => ({
            package_id: s.package_id,
            package_name: s.package_name,
            // Overrides are part of what the account really gets.
            monthly_quota: limits.monthlyQuota,
            rate_per_min: limits.ratePerMin,
            billing_period: s.billing_period,
            started_at: s.started_at.toISOString()
          })),
          keys: keys.map((k) => ({
            id: k.id,
            label: k.label,
            sent_this_period: k.sent ?? 0,
            monthly_quota: limits.monthlyQuota,
            quota_remaining: remaining
          })),
          next_reset: limits.period.end.toISOString(),
          // An addition to the spec's record: a downgrade waiting for the reset, which applies it.
          pending_change: pendingChange(subscriptions, limits.period.end),
          // An addition to the spec's record: the emails sent past the quota this period and their
          // price, rounded to the cent once for the period (not per email).
          overage: {
            emails: overEmails,
            amount_usd_cents: Math.round((overEmails * (price?.cents_per_1000 ?? 0)) / 1000)
          }
        }
      })

    return { record } as const
  })
}) {}
