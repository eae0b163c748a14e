/**
 * Plan changes (POST /v1/client/subscriptions/change-plan) and the monthly reset.
 *
 * - Upgrade (a higher price_usd_cents, or any plan for an account without one): applies at once;
 *   charged the new price for the days left in the cycle (proration.ts). From no plan, a new cycle
 *   starts that day and the whole first cycle is charged.
 * - Downgrade (same or lower price): a pending package that the monthly reset applies when the
 *   current period ends (effective_at); current benefits stay, nothing is refunded. A later
 *   downgrade replaces it, an upgrade drops it, and cancel-pending-change withdraws it; each such
 *   downgrade's plan_changes row is marked withdrawn_at, so the reset marks only the one it applied.
 * Every change is recorded in plan_changes (who, when, from, to, amount).
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { newId } from "../../lib/ids.ts"
import { verifyPassword } from "../accounts/passwords.ts"
import { currentPeriod } from "../usage/billing-period.ts"
import { prorate, type Proration } from "../usage/proration.ts"

export class IncorrectPassword extends Data.TaggedError("IncorrectPassword")<{}> {}
export class NothingPending extends Data.TaggedError("NothingPending")<{}> {}
export class PlanChangeRefused extends Data.TaggedError("PlanChangeRefused")<{
  readonly code: "unknown_package" | "same_package" | "package_not_selectable"
  readonly message: string
}> {}

export interface PlanChangeResult {
  readonly sub_id: string
  readonly type: "upgrade" | "downgrade"
  readonly proration?: Proration
  readonly effective_at?: string
}

interface PlanRow {
  readonly id: string
  readonly price_usd_cents: number
  readonly billing_model: string
  readonly selectable: boolean
  readonly legacy: boolean
}

interface SubscriptionRow {
  readonly id: string
  readonly package_id: string
  readonly pending_package_id: string | null
  readonly started_at: Date
  readonly price_usd_cents: number
}

export class Subscriptions extends Effect.Service<Subscriptions>()("herald/Subscriptions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const target = (packageId: string) =>
      Effect.gen(function*() {
        const [plan] = yield* sql<PlanRow>`SELECT id, price_usd_cents, billing_model, selectable, legacy FROM plans WHERE id = ${packageId}`
        if (plan === undefined) {
          return yield* new PlanChangeRefused({ code: "unknown_package", message: `No package ${packageId}` })
        }
        if (plan.legacy || !plan.selectable || plan.billing_model !== "sends") {
          return yield* new PlanChangeRefused({
            code: "package_not_selectable",
            message: `Package ${packageId} cannot be chosen${plan.legacy ? " (legacy plan)" : ""}`
          })
        }
        return plan
      })

    /** Locks the account row (it orders concurrent plan changes of one account) and checks the password. */
    const lockWithPassword = (accountId: string, password: string) =>
      Effect.gen(function*() {
        const [account] = yield* sql<{ password_hash: string }>`
          SELECT password_hash FROM accounts WHERE id = ${accountId} FOR UPDATE`
        if (account === undefined || !(yield* verifyPassword(password, account.password_hash))) {
          return yield* new IncorrectPassword()
        }
      })

    /** Marks the subscription's pending downgrades withdrawn (replaced, dropped by an upgrade, or cancelled). */
    const withdrawPending = (subscriptionId: string, now: Date) =>
      sql`UPDATE plan_changes SET withdrawn_at = ${now}
        WHERE subscription_id = ${subscriptionId} AND type = 'downgrade' AND applied_at IS NULL AND withdrawn_at IS NULL`

    const changePlan = (accountId: string, actor: string, packageId: string, password: string, now: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* lockWithPassword(accountId, password)
        const plan = yield* target(packageId)
        const [current] = yield* sql<SubscriptionRow>`
          SELECT s.id, s.package_id, s.pending_package_id, s.started_at, p.price_usd_cents
          FROM subscriptions s JOIN plans p ON p.id = s.package_id
          WHERE s.account_id = ${accountId} AND s.status = 'active'`
        if (current?.package_id === plan.id) {
          const keep = current.pending_package_id === null
            ? ""
            : `; to stay on it, cancel the pending change to ${current.pending_package_id} (POST /v1/client/subscriptions/cancel-pending-change)`
          return yield* new PlanChangeRefused({ code: "same_package", message: `The account is already on ${plan.id}${keep}` })
        }
        const record = (subId: string, type: "upgrade" | "downgrade", p: Proration | null, effectiveAt: Date) =>
          sql`INSERT INTO plan_changes (id, account_id, subscription_id, from_package_id, to_package_id, type,
              amount_usd_cents, days_charged, cycle_days, effective_at, applied_at, actor, created_at)
            VALUES (${newId("chg")}, ${accountId}, ${subId}, ${current?.package_id ?? null}, ${plan.id}, ${type},
              ${p?.amount_usd_cents ?? 0}, ${p?.days_charged ?? null}, ${p?.cycle_days ?? null}, ${effectiveAt},
              ${type === "upgrade" ? now : null}, ${actor}, ${now})`

        if (current === undefined) {
          const subId = newId("sub")
          yield* sql`INSERT INTO subscriptions (id, account_id, package_id, started_at, period_start)
            VALUES (${subId}, ${accountId}, ${plan.id}, ${now}, ${now})`
          const proration = prorate(plan.price_usd_cents, currentPeriod(now, now), now)
          yield* record(subId, "upgrade", proration, now)
          return { sub_id: subId, type: "upgrade", proration } satisfies PlanChangeResult
        }
        const period = currentPeriod(current.started_at, now)
        if (plan.price_usd_cents > current.price_usd_cents) {
          const proration = prorate(plan.price_usd_cents, period, now)
          yield* sql`UPDATE subscriptions SET package_id = ${plan.id}, pending_package_id = NULL WHERE id = ${current.id}`
          yield* withdrawPending(current.id, now)
          yield* record(current.id, "upgrade", proration, now)
          return { sub_id: current.id, type: "upgrade", proration } satisfies PlanChangeResult
        }
        yield* sql`UPDATE subscriptions SET pending_package_id = ${plan.id} WHERE id = ${current.id}`
        yield* withdrawPending(current.id, now)
        yield* record(current.id, "downgrade", null, period.end)
        return { sub_id: current.id, type: "downgrade", effective_at: period.end.toISOString() } satisfies PlanChangeResult
      }))

    /** Withdraws the account's pending downgrade (POST /v1/client/subscriptions/cancel-pending-change). */
    const cancelPendingChange = (accountId: string, password: string, now: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* lockWithPassword(accountId, password)
        const [pending] = yield* sql<{ id: string }>`
          UPDATE subscriptions SET pending_package_id = NULL
          WHERE account_id = ${accountId} AND status = 'active' AND pending_package_id IS NOT NULL RETURNING id`
        if (pending === undefined) return yield* new NothingPending()
        yield* withdrawPending(pending.id, now)
      }))

    /**
     * The monthly reset: every subscription whose period has ended moves to its current period and
     * takes its pending package. Periods are always derived from the original anchor (started_at);
     * period_start only records how far the reset has got, so a clamped start (Feb 28 for an anchor
     * of Jan 31) never becomes the next anchor. Idempotent (period_start only moves forward to the
     * period that contains `now`, guarded by its previous value), so running it twice, or on two
     * replicas, changes nothing more. Usage counters are keyed by the period's start, so they
     * restart by themselves.
     */
    const resetPeriods = (now: Date) =>
      Effect.gen(function*() {
        const due = yield* sql<{ id: string; started_at: Date; period_start: Date; pending_package_id: string | null }>`
          SELECT id, started_at, period_start, pending_package_id FROM subscriptions WHERE status = 'active'`
        let moved = 0
        for (const sub of due) {
          const period = currentPeriod(sub.started_at, now)
          if (period.start.getTime() <= sub.period_start.getTime()) continue
          yield* sql.withTransaction(Effect.gen(function*() {
            const rows = yield* sql`
              UPDATE subscriptions SET period_start = ${period.start},
                package_id = coalesce(pending_package_id, package_id), pending_package_id = NULL
              WHERE id = ${sub.id} AND period_start = ${sub.period_start} RETURNING id`
            if (rows.length > 0 && sub.pending_package_id !== null) {
              yield* sql`UPDATE plan_changes SET applied_at = ${now}
                WHERE subscription_id = ${sub.id} AND type = 'downgrade' AND applied_at IS NULL AND withdrawn_at IS NULL`
            }
            moved += rows.length
          }))
        }
        return moved
      })

    return { changePlan, cancelPendingChange, resetPeriods } as const
  })
}) {}
