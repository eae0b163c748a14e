/**
 * Charging the monthly quota. The check and the charge are one statement on the account's usage
 * row, so they are exact across replicas (the row lock orders them).
 *
 * Decisions (README "Quota and overage"):
 * - used + n ≤ quota → charged.
 * - past the quota and the plan offers overage → charged; the part past the quota is overage.
 * - the quota was already used up before this request and no overage → 429 monthly_quota_exceeded.
 * - the quota still had room but not for all n recipients, no overage → 400 overage_not_offered
 *   (nothing is sent; the client may send fewer recipients or upgrade).
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import type { Limits } from "./AccountLimits.ts"

export class QuotaExhausted extends Data.TaggedError("QuotaExhausted")<{ readonly used: number; readonly quota: number }> {}
export class OverageNotOffered extends Data.TaggedError("OverageNotOffered")<{
  readonly used: number
  readonly quota: number
  readonly requested: number
}> {}

export type QuotaDecision =
  | { readonly _tag: "charged"; readonly overage: number }
  | { readonly _tag: "exhausted" }
  | { readonly _tag: "no_overage" }

/** The pure rule, given the account's usage before this request. */
export const decideQuota = (before: number, requested: number, quota: number, overageOffered: boolean): QuotaDecision => {
  const after = before + requested
  if (after <= quota) return { _tag: "charged", overage: 0 }
  if (overageOffered) return { _tag: "charged", overage: after - Math.max(before, quota) }
  return before >= quota ? { _tag: "exhausted" } : { _tag: "no_overage" }
}

/**
 * Reserves `requested` recipients of the account's quota in a short transaction of its own.
 *
 * Why not inside the send's transaction: the account_usage row lock that makes the check exact
 * would then be held through the send's durable commit (a WAL flush), serialising every send of an
 * account on disk flushes — measured at ~160 sends/s where the disk allows ~2,000 (bench/accept.ts).
 * The reservation commits asynchronously (synchronous_commit off: the lock is held for one
 * statement), and the send's rows then commit durably in parallel with other sends. If the send's
 * transaction fails, `releaseQuota` gives the reservation back. A crash between the two can lose
 * a reservation (the customer is under-charged) or keep one whose send never answered 202 (its
 * client retries); it can never lose an accepted send.
 */
export const reserveQuota = (limits: Limits, keyId: string, requested: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const period = limits.period.start
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SET LOCAL synchronous_commit TO off`
      const rows = yield* sql<{ sent: number }>`
        INSERT INTO account_usage (account_id, period_start, sent, overage)
        VALUES (${limits.accountId}, ${period}, ${requested}, ${Math.max(0, requested - limits.monthlyQuota)})
        ON CONFLICT (account_id, period_start) DO UPDATE SET
          sent = account_usage.sent + EXCLUDED.sent,
          overage = account_usage.overage
            + greatest(0, account_usage.sent + EXCLUDED.sent - ${limits.monthlyQuota})
            - greatest(0, account_usage.sent - ${limits.monthlyQuota})
        RETURNING sent`
      const before = rows[0]!.sent - requested
      const decision = decideQuota(before, requested, limits.monthlyQuota, limits.overageOffered)
      if (decision._tag === "exhausted") return yield* new QuotaExhausted({ used: before, quota: limits.monthlyQuota })
      if (decision._tag === "no_overage") {
        return yield* new OverageNotOffered({ used: before, quota: limits.monthlyQuota, requested })
      }
      yield* sql`
        INSERT INTO key_usage (key_id, period_start, sent) VALUES (${keyId}, ${period}, ${requested})
        ON CONFLICT (key_id, period_start) DO UPDATE SET sent = key_usage.sent + EXCLUDED.sent`
      return decision
    }))
  })

/** Gives back a reservation whose send did not commit. */
export const releaseQuota = (limits: Limits, keyId: string, requested: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const period = limits.period.start
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`UPDATE account_usage SET sent = sent - ${requested},
          overage = greatest(0, overage - greatest(0, sent - ${limits.monthlyQuota}) + greatest(0, sent - ${requested} - ${limits.monthlyQuota}))
        WHERE account_id = ${limits.accountId} AND period_start = ${period}`
      yield* sql`UPDATE key_usage SET sent = sent - ${requested} WHERE key_id = ${keyId} AND period_start = ${period}`
    }))
  })
