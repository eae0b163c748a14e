/**
 * Charging the monthly quota, inside the transaction that commits the send's rows, so the check
 * and the charge are one atomic step across replicas (the account_usage row lock orders them).
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

/** Must run inside the send's transaction: a failure rolls the whole send back. */
export const chargeQuota = (limits: Limits, keyId: string, requested: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const period = limits.period.start
    const rows = yield* sql<{ sent: number }>`
      INSERT INTO account_usage (account_id, period_start, sent) VALUES (${limits.accountId}, ${period}, ${requested})
      ON CONFLICT (account_id, period_start) DO UPDATE SET sent = account_usage.sent + EXCLUDED.sent
      RETURNING sent`
    const before = rows[0]!.sent - requested
    const decision = decideQuota(before, requested, limits.monthlyQuota, limits.overageOffered)
    if (decision._tag === "exhausted") return yield* new QuotaExhausted({ used: before, quota: limits.monthlyQuota })
    if (decision._tag === "no_overage") {
      return yield* new OverageNotOffered({ used: before, quota: limits.monthlyQuota, requested })
    }
    if (decision.overage > 0) {
      yield* sql`UPDATE account_usage SET overage = overage + ${decision.overage}
        WHERE account_id = ${limits.accountId} AND period_start = ${period}`
    }
    yield* sql`
      INSERT INTO key_usage (key_id, period_start, sent) VALUES (${keyId}, ${period}, ${requested})
      ON CONFLICT (key_id, period_start) DO UPDATE SET sent = key_usage.sent + EXCLUDED.sent`
    return decision
  })
