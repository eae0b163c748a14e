/**
 * What an account may send: its plan (or the no-plan defaults of config/plans.json), per-account
 * overrides, its status (suspended, sending paused) and the current billing period.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Data, Effect } from "effect"
import { loadPlanCatalog, type PlanCatalog } from "../plans/plan-catalog.ts"
import { currentPeriod, type Period } from "./billing-period.ts"

export interface Limits {
  readonly accountId: string
  readonly status: "active" | "suspended"
  readonly pausedReason: string | null
  readonly packageId: string | null
  readonly ratePerMin: number
  readonly monthlyQuota: number
  readonly overageOffered: boolean
  readonly features: ReadonlyArray<string>
  readonly period: Period
}

export class AccountMissing extends Data.TaggedError("AccountMissing")<{ readonly accountId: string }> {}

/** The columns a Limits is made of, as `limitsFrom` selects them. */
export interface LimitsRow {
  readonly status: "active" | "suspended"
  readonly sending_paused_at: Date | null
  readonly sending_paused_reason: string | null
  readonly rate_per_min_override: number | null
  readonly monthly_quota_override: number | null
  readonly created_at: Date
  readonly package_id: string | null
  readonly started_at: Date | null
  readonly rate_per_min: number | null
  readonly monthly_quota: number | null
  readonly overage_offered: boolean | null
  readonly features: ReadonlyArray<string> | null
}

/**
 * The account's limits as a FROM item (`l`), one row or none: AccountLimits reads it alone and the
 * send path joins it into its single read of everything a send needs (send-context.ts).
 */
export const limitsFrom = (sql: SqlClient.SqlClient, accountId: string | Statement.Fragment) =>
  sql`(
    SELECT a.status, a.sending_paused_at, a.sending_paused_reason, a.rate_per_min_override,
      a.monthly_quota_override, a.created_at, s.package_id, s.started_at,
      p.rate_per_min, p.monthly_quota, p.overage_offered, p.features
    FROM accounts a
    LEFT JOIN subscriptions s ON s.account_id = a.id AND s.status = 'active'
    LEFT JOIN plans p ON p.id = s.package_id
    WHERE a.id = ${accountId}
  ) l`

export const toLimits = (accountId: string, row: LimitsRow, catalog: PlanCatalog, now: Date): Limits => ({
  accountId,
  status: row.status,
  pausedReason: row.sending_paused_at === null ? null : row.sending_paused_reason ?? "sending paused",
  packageId: row.package_id,
  ratePerMin: row.rate_per_min_override ?? row.rate_per_min ?? catalog.no_plan.rate_per_min,
  monthlyQuota: row.monthly_quota_override ?? row.monthly_quota ?? catalog.no_plan.monthly_quota,
  overageOffered: row.overage_offered ?? false,
  features: row.features ?? [],
  // Anchored on the day the subscription started, never on a stored (possibly clamped)
  // period start: an anchor of the 31st keeps its 31st after a 28-day February.
  period: currentPeriod(row.started_at ?? row.created_at, now)
})

export class AccountLimits extends Effect.Service<AccountLimits>()("herald/AccountLimits", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const catalog = yield* loadPlanCatalog

    const of = (accountId: string, now: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql<LimitsRow>`SELECT * FROM ${limitsFrom(sql, accountId)}`
        const row = rows[0]
        if (row === undefined) return yield* new AccountMissing({ accountId })
        return toLimits(accountId, row, catalog, now)
      })

    return { of, catalog } as const
  })
}) {}
