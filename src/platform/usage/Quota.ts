/**
 * Charging the monthly quota. The check and the charge are one statement on the account's usage
 * row, so they are exact across replicas (the row lock orders them).
 *
 * Decisions (docs/sending.md "Quota and overage"):
 * - used + n ≤ quota → charged.
 * - past the quota and the plan offers overage → charged; the part past the quota is overage.
 * - the quota was already used up before this request and no overage → 429 monthly_quota_exceeded.
 * - the quota still had room but not for all n recipients, no overage → 400 overage_not_offered
 *   (nothing is sent; the client may send fewer recipients or upgrade).
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect, Option } from "effect"
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
 * The conditional charge of one account as two CTEs named `charged<tag>` (RETURNING the account's
 * new `sent`, no row when it did not fit) and `by_key<tag>` (each key's own count): the single
 * reservation below is one of them, a group (QuotaReserver.ts) one per account.
 */
export const chargeCtes = (
  sql: SqlClient.SqlClient,
  tag: string,
  limits: Limits,
  requested: number,
  byKey: ReadonlyArray<readonly [keyId: string, sent: number]>
) => {
  const period = limits.period.start
  const quota = limits.monthlyQuota
  const fits = limits.overageOffered ? sql`TRUE` : sql`account_usage.sent + EXCLUDED.sent <= ${quota}`
  const keyRows = sql.csv(byKey.map(([keyId, sent]) => sql`(${keyId}::text, ${sent}::integer)`))
  return sql`${sql.literal(`charged${tag}`)} AS (
      INSERT INTO account_usage (account_id, period_start, sent, overage)
      SELECT ${limits.accountId}::text, ${period}::timestamptz, ${requested}::integer,
        ${Math.max(0, requested - quota)}::integer FROM commit_mode
      WHERE ${limits.overageOffered || requested <= quota}::boolean
      ON CONFLICT (account_id, period_start) DO UPDATE SET
        sent = account_usage.sent + EXCLUDED.sent,
        overage = account_usage.overage
          + greatest(0, account_usage.sent + EXCLUDED.sent - ${quota})
          - greatest(0, account_usage.sent - ${quota})
      WHERE ${fits}
      RETURNING sent
    ), ${sql.literal(`by_key${tag}`)} AS (
      INSERT INTO key_usage (key_id, period_start, sent)
      SELECT k.key_id, ${period}::timestamptz, k.sent FROM ${sql.literal(`charged${tag}`)}, (VALUES ${keyRows}) AS k(key_id, sent)
      ON CONFLICT (key_id, period_start) DO UPDATE SET sent = key_usage.sent + EXCLUDED.sent
    )`
}

/** The commit mode CTE every charge reads: asynchronous on its own, the caller's inside a transaction. */
export const commitModeCte = (sql: SqlClient.SqlClient, inTransaction: boolean) =>
  sql`commit_mode AS (
    SELECT ${inTransaction ? sql`NULL` : sql`set_config('synchronous_commit', 'off', true)`} AS applied
  )`

/**
 * Reserves `requested` recipients of the account's quota: one statement, committed on its own.
 *
 * Why not inside the send's transaction: the account_usage row lock that makes the check exact
 * would then be held through the send's durable commit (a WAL flush), serialising every send of an
 * account on disk flushes — measured at ~160 sends/s where the disk allows ~2,000 (bench/accept.ts).
 * So the reservation is its own statement, committed asynchronously (`set_config` of
 * synchronous_commit for this statement's transaction only: the lock is held for the statement,
 * not for a flush), and the send's rows then commit durably in parallel with other sends. If the
 * send's write fails, `releaseQuota` gives the reservation back. A crash between the two can lose
 * a reservation (the customer is under-charged) or keep one whose send never answered 202 (its
 * client retries); it can never lose an accepted send.
 *
 * The charge is conditional (plan offers overage, or it fits): a request that does not fit changes
 * nothing, and the usage is read again to tell `exhausted` from `no_overage`. Inside a caller's
 * transaction (the scheduler's release) the commit stays the caller's, durable.
 */
export const reserveQuota = (limits: Limits, keyId: string, requested: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const quota = limits.monthlyQuota
    const inTransaction = Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))
    // Prepared (src/db/prepared.ts): a send's usual reservation, a few texts in all.
    const rows = yield* sql<{ sent: number }>`/* herald:prepared */
      WITH ${commitModeCte(sql, inTransaction)}, ${chargeCtes(sql, "", limits, requested, [[keyId, requested]])}
      SELECT sent FROM charged`
    const charged = rows[0]
    if (charged !== undefined) return decideQuota(charged.sent - requested, requested, quota, limits.overageOffered)
    const usage = yield* sql<{ sent: number }>`
      SELECT sent FROM account_usage WHERE account_id = ${limits.accountId} AND period_start = ${limits.period.start}`
    const before = usage[0]?.sent ?? 0
    return yield* before >= quota
      ? new QuotaExhausted({ used: before, quota })
      : new OverageNotOffered({ used: before, quota, requested })
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
