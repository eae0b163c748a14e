/**
 * Accounts (the spec's users/clients): name, email, password (scrypt), admin flag and at most one
 * active subscription to a plan.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { newId } from "../../lib/ids.ts"
import { AccountHooks } from "./hooks.ts"
import { hashPassword } from "./passwords.ts"
import { endSessionsOf } from "./sessions.ts"

export interface NewAccount {
  readonly name: string
  readonly email: string
  readonly password: string
  readonly isAdmin?: boolean
  readonly packageId?: string | undefined
}

export interface AccountView {
  readonly id: string
  readonly name: string
  readonly email: string
  readonly is_admin: boolean
  readonly status: string
  readonly package_id: string | null
  readonly sending_paused_reason: string | null
  readonly rate_per_min_override: number | null
  readonly monthly_quota_override: number | null
  readonly created_at: string
}

export class EmailTaken extends Data.TaggedError("EmailTaken")<{ readonly email: string }> {}
export class UnknownPackage extends Data.TaggedError("UnknownPackage")<{ readonly packageId: string }> {}
export class AccountNotFound extends Data.TaggedError("AccountNotFound")<{ readonly id: string }> {}

export class Accounts extends Effect.Service<Accounts>()("herald/Accounts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hooks = yield* AccountHooks

    const subscribe = (accountId: string, packageId: string, now: Date, subId: string = newId("sub")) =>
      sql`
        INSERT INTO subscriptions (id, account_id, package_id, started_at, period_start)
        VALUES (${subId}, ${accountId}, ${packageId}, ${now}, ${now})`

    const create = (input: NewAccount) =>
      Effect.gen(function*() {
        const passwordHash = yield* hashPassword(input.password)
        const now = new Date(yield* Clock.currentTimeMillis)
        if (input.packageId !== undefined) {
          const plans = yield* sql<{ id: string }>`SELECT id FROM plans WHERE id = ${input.packageId}`
          if (plans.length === 0) return yield* new UnknownPackage({ packageId: input.packageId })
        }
        const taken = yield* sql`SELECT 1 FROM accounts WHERE lower(email) = lower(${input.email})`
        if (taken.length > 0) return yield* new EmailTaken({ email: input.email })
        const id = newId("acc")
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`
            INSERT INTO accounts (id, name, email, password_hash, is_admin, created_at)
            VALUES (${id}, ${input.name}, ${input.email}, ${passwordHash}, ${input.isAdmin ?? false}, ${now})`
          if (input.packageId !== undefined) yield* subscribe(id, input.packageId, now)
        }))
        return yield* get(id)
      })

    const get = (id: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{
          id: string; name: string; email: string; is_admin: boolean; status: string
          package_id: string | null; sending_paused_reason: string | null
          rate_per_min_override: number | null; monthly_quota_override: number | null; created_at: Date
        }>`
          SELECT a.id, a.name, a.email, a.is_admin, a.status, s.package_id,
            CASE WHEN a.sending_paused_at IS NULL THEN NULL ELSE coalesce(a.sending_paused_reason, 'paused') END
              AS sending_paused_reason,
            a.rate_per_min_override, a.monthly_quota_override, a.created_at
          FROM accounts a LEFT JOIN subscriptions s ON s.account_id = a.id AND s.status = 'active'
          WHERE a.id = ${id}`
        const row = rows[0]
        if (row === undefined) return yield* new AccountNotFound({ id })
        const view: AccountView = { ...row, created_at: row.created_at.toISOString() }
        return view
      })

    const list = () =>
      sql<{ id: string }>`SELECT id FROM accounts ORDER BY created_at, id`.pipe(
        Effect.flatMap((rows) => Effect.forEach(rows, (r) => get(r.id)))
      )

    /**
     * Suspension refuses every send (and discards scheduled sends when they fire), and ends the
     * account's console sessions in the same transaction: no one stays signed in to a suspended account.
     */
    const setStatus = (id: string, status: "active" | "suspended") =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql`UPDATE accounts SET status = ${status} WHERE id = ${id} RETURNING id`
        if (rows.length === 0) return yield* new AccountNotFound({ id })
        if (status === "suspended") yield* endSessionsOf(id)
        return yield* get(id)
      }))

    /** The account `idOrEmail` names: its id, or its email in any case. */
    const find = (idOrEmail: string) =>
      sql<{ id: string }>`SELECT id FROM accounts WHERE id = ${idOrEmail} OR lower(email) = lower(${idOrEmail})
        ORDER BY (id = ${idOrEmail}) DESC, created_at LIMIT 1`.pipe(
        Effect.flatMap((rows) => (rows[0] === undefined ? Effect.fail(new AccountNotFound({ id: idOrEmail })) : get(rows[0].id)))
      )

    /**
     * A new password (the caller checked it against the rules, src/lib/password-rules.ts). Ends the
     * account's console sessions in the same transaction: whoever signed in with the old one is out.
     */
    const setPassword = (id: string, password: string) =>
      Effect.gen(function*() {
        const passwordHash = yield* hashPassword(password)
        return yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql`UPDATE accounts SET password_hash = ${passwordHash} WHERE id = ${id} RETURNING id`
          if (rows.length === 0) return yield* new AccountNotFound({ id })
          return { sessions_ended: yield* endSessionsOf(id) }
        }))
      })

    /**
     * Pauses (reputation) or lifts the pause (an admin's decision). Lifting it tells the
     * AccountHooks (the MTA makes the deliveries it held for the pause due at once).
     */
    const setPaused = (id: string, reason: string | null, now: Date) =>
      (reason === null
        // Lifting a pause also restarts the window the rates are counted over.
        ? sql`UPDATE accounts SET sending_paused_at = NULL, sending_paused_reason = NULL, reputation_reset_at = ${now}
            WHERE id = ${id} RETURNING id`.pipe(
            Effect.tap((rows) => (rows.length === 0 ? Effect.void : hooks.sendingResumed(id, now)))
          )
        : sql`UPDATE accounts SET sending_paused_at = ${now}, sending_paused_reason = ${reason}
            WHERE id = ${id} RETURNING id`).pipe(
        Effect.flatMap((rows) => (rows.length === 0 ? Effect.fail(new AccountNotFound({ id })) : get(id)))
      )

    /**
     * Per-account overrides of the plan's rate and quota, PATCH-style: a field left out keeps its
     * override, null clears it (the plan's value, or the no-plan default, applies again).
     */
    const setOverrides = (id: string, patch: { readonly ratePerMin?: number | null; readonly monthlyQuota?: number | null }) =>
      sql`UPDATE accounts SET
          rate_per_min_override = CASE WHEN ${patch.ratePerMin !== undefined}
            THEN ${patch.ratePerMin ?? null}::integer ELSE rate_per_min_override END,
          monthly_quota_override = CASE WHEN ${patch.monthlyQuota !== undefined}
            THEN ${patch.monthlyQuota ?? null}::integer ELSE monthly_quota_override END
        WHERE id = ${id} RETURNING id`.pipe(
        Effect.flatMap((rows) => (rows.length === 0 ? Effect.fail(new AccountNotFound({ id })) : get(id)))
      )

    /**
     * An admin's plan assignment: no proration, a new cycle starts now (the old subscription ends,
     * with any pending downgrade). Recorded in plan_changes as type `assignment` with the admin as
     * actor and amount 0: Herald charges nothing for it (docs/sending.md "Domains, suppressions, plans, support").
     */
    const assignPlan = (id: string, packageId: string, actor: string, now: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        // The account row lock orders this against a concurrent change-plan of the same account.
        const locked = yield* sql`SELECT id FROM accounts WHERE id = ${id} FOR UPDATE`
        if (locked.length === 0) return yield* new AccountNotFound({ id })
        const plans = yield* sql`SELECT id FROM plans WHERE id = ${packageId}`
        if (plans.length === 0) return yield* new UnknownPackage({ packageId })
        const ended = yield* sql<{ package_id: string }>`
          UPDATE subscriptions SET status = 'ended', ended_at = ${now}
          WHERE account_id = ${id} AND status = 'active' RETURNING package_id`
        const subId = newId("sub")
        yield* subscribe(id, packageId, now, subId)
        yield* sql`INSERT INTO plan_changes (id, account_id, subscription_id, from_package_id, to_package_id, type,
            amount_usd_cents, effective_at, applied_at, actor, created_at)
          VALUES (${newId("chg")}, ${id}, ${subId}, ${ended[0]?.package_id ?? null}, ${packageId}, 'assignment',
            0, ${now}, ${now}, ${actor}, ${now})`
        return yield* get(id)
      }))

    return { create, get, find, list, subscribe, setStatus, setPassword, setPaused, setOverrides, assignPlan } as const
  })
}) {}
