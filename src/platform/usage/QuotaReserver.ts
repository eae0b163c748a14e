/**
 * The send endpoint's quota reservations, grouped: the reservations of sends that arrive together
 * are one statement (group commit, src/lib/group-commit.ts) with one conditional charge per
 * account (Quota.ts `chargeCtes`, each account charged the sum of its sends). An account whose sum
 * does not fit — the quota's edge, without overage — has its sends reserved one by one instead, in
 * order, so each gets the exact decision `reserveQuota` gives. Committed asynchronously, as a
 * single reservation is (Quota.ts says why).
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either } from "effect"
import { makeGroupCommit } from "../../lib/group-commit.ts"
import type { Limits } from "./AccountLimits.ts"
import {
  chargeCtes,
  commitModeCte,
  decideQuota,
  type OverageNotOffered,
  type QuotaDecision,
  type QuotaExhausted,
  reserveQuota
} from "./Quota.ts"

export interface Reservation {
  readonly limits: Limits
  readonly keyId: string
  readonly requested: number
}

type Outcome = Either.Either<QuotaDecision, QuotaExhausted | OverageNotOffered>

/** Reservations per group: one statement holds two CTEs per account. */
const GROUP_RESERVATIONS = 64

/** Sums per key, in first-seen order. */
const sumsByKey = (reservations: ReadonlyArray<Reservation>) => {
  const sums = new Map<string, number>()
  for (const r of reservations) sums.set(r.keyId, (sums.get(r.keyId) ?? 0) + r.requested)
  return [...sums]
}

export class QuotaReserver extends Effect.Service<QuotaReserver>()("herald/QuotaReserver", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const reserveAlone = (r: Reservation): Effect.Effect<Outcome, SqlError> =>
      reserveQuota(r.limits, r.keyId, r.requested).pipe(
        Effect.map((decision): Outcome => Either.right(decision)),
        Effect.catchTags({
          QuotaExhausted: (e) => Effect.succeed<Outcome>(Either.left(e)),
          OverageNotOffered: (e) => Effect.succeed<Outcome>(Either.left(e))
        }),
        Effect.provideService(SqlClient.SqlClient, sql)
      )

    const writeGroup = (group: ReadonlyArray<Reservation>): Effect.Effect<ReadonlyArray<Outcome>, SqlError> =>
      Effect.gen(function*() {
        if (group.length === 1) return [yield* reserveAlone(group[0]!)]
        const accounts = new Map<string, Array<number>>()
        group.forEach((r, i) => {
          const indexes = accounts.get(r.limits.accountId)
          if (indexes === undefined) accounts.set(r.limits.accountId, [i])
          else indexes.push(i)
        })
        const charges = [...accounts.values()].map((indexes, j) => {
          const members = indexes.map((i) => group[i]!)
          const requested = members.reduce((n, r) => n + r.requested, 0)
          return { tag: `_${j}`, indexes, requested, limits: members[0]!.limits, byKey: sumsByKey(members) }
        })
        // Prepared (src/db/prepared.ts): the usual group (one account, one key) has one text.
        const rows = yield* sql<{ account: number; sent: number }>`/* herald:prepared */
          WITH ${commitModeCte(sql, false)},
            ${sql.csv(charges.map((c) => chargeCtes(sql, c.tag, c.limits, c.requested, c.byKey)))}
          ${sql.join(" UNION ALL ", false)(charges.map((c, j) => sql`SELECT ${j}::integer AS account, sent FROM ${sql.literal(`charged${c.tag}`)}`))}`
        const sentAfter = new Map(rows.map((row) => [row.account, row.sent]))
        const outcomes = new Array<Outcome>(group.length)
        for (const [j, charge] of charges.entries()) {
          const after = sentAfter.get(j)
          if (after === undefined) {
            // The sum did not fit: each send decided alone, in order (some may still fit).
            for (const i of charge.indexes) outcomes[i] = yield* reserveAlone(group[i]!)
            continue
          }
          let before = after - charge.requested
          for (const i of charge.indexes) {
            const r = group[i]!
            outcomes[i] = Either.right(decideQuota(before, r.requested, r.limits.monthlyQuota, r.limits.overageOffered))
            before += r.requested
          }
        }
        return outcomes
      })

    const group = yield* makeGroupCommit({ write: writeGroup, maxItems: GROUP_RESERVATIONS })

    /** Reserves the send's recipients of its account's quota (see Quota.ts for the decisions). */
    const reserve = (r: Reservation) => Effect.flatMap(group.submit(r), (outcome) => outcome)
    return { reserve } as const
  })
}) {}
