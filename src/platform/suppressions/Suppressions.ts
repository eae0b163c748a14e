/**
 * Suppression lists: addresses that are never mailed. Account level (each account's own) and
 * platform level (account_id NULL, kept by the operator, applying to every account). Reasons:
 * bounce, complaint, unsubscribe, manual. Addresses are compared in lower case. The client API,
 * the admin API and the operator's CLI all go through this service.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { SuppressionHooks } from "./hooks.ts"
import { containing, insertSuppression, type SuppressionReason, type SuppressionRow } from "./suppress.ts"

export type { SuppressionReason } from "./suppress.ts"

export interface SuppressionView {
  readonly email: string
  readonly reason: SuppressionReason
  readonly source: string | null
  readonly created_at: string
}

export class SuppressionNotFound extends Data.TaggedError("SuppressionNotFound")<{ readonly email: string }> {}
export class SuppressionExists extends Data.TaggedError("SuppressionExists")<{ readonly email: string }> {}

export interface SuppressionFilter {
  /** Substring of the address, any case. */
  readonly email?: string | undefined
  readonly reason?: string | undefined
  readonly limit: number
  readonly offset: number
}

export class Suppressions extends Effect.Service<Suppressions>()("herald/Suppressions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hooks = yield* SuppressionHooks

    /**
     * Adds a suppression; `accountId` null = platform level. An address already on that list is
     * re-reasoned (idempotent, what the client API and the CLI promise) or, with
     * `ifExists: "refuse"`, left alone and answered with SuppressionExists (the admin API's 409).
     */
    const add = (
      accountId: string | null,
      email: string,
      reason: SuppressionReason,
      source: string | null,
      options: { readonly ifExists: "replace" | "refuse" } = { ifExists: "replace" }
    ) =>
      Effect.gen(function*() {
        const at = new Date(yield* Clock.currentTimeMillis)
        const onExisting = options.ifExists === "replace" ? "replace" : "keep"
        const rows = yield* insertSuppression({ accountId, email, reason, source, at, onExisting }).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.provideService(SuppressionHooks, hooks)
        )
        if (rows[0] === undefined) return yield* new SuppressionExists({ email: email.toLowerCase() })
        return view(rows[0])
      })

    const remove = (accountId: string | null, email: string) =>
      Effect.gen(function*() {
        const rows = yield* sql`
          DELETE FROM suppressions WHERE coalesce(account_id, '') = ${accountId ?? ""} AND email = ${email.toLowerCase()}
          RETURNING id`
        if (rows.length === 0) return yield* new SuppressionNotFound({ email })
        return { email: email.toLowerCase(), deleted: true as const }
      })

    /** One list, newest first: an account's own, or (`accountId` null) the platform's. */
    const list = (accountId: string | null, filter: SuppressionFilter) =>
      Effect.gen(function*() {
        const where = sql.and([
          accountId === null ? sql`account_id IS NULL` : sql`account_id = ${accountId}`,
          ...(filter.email === undefined ? [] : [sql`email LIKE ${containing(filter.email)}`]),
          ...(filter.reason === undefined ? [] : [sql`reason = ${filter.reason}`])
        ])
        const [count] = yield* sql<{ total: string }>`SELECT count(*) AS total FROM suppressions WHERE ${where}`
        const rows = yield* sql<SuppressionRow>`
          SELECT email, reason, source, created_at, account_id FROM suppressions WHERE ${where}
          ORDER BY created_at DESC, id DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`
        return { total: Number(count?.total ?? 0), limit: filter.limit, offset: filter.offset, items: rows.map(view) }
      })

    /** Which of `emails` are suppressed for this account (its own list or the platform's), and why. */
    const check = (accountId: string, emails: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const found = new Map<string, SuppressionReason>()
        if (emails.length === 0) return found
        const rows = yield* sql<{ email: string; reason: SuppressionReason }>`
          SELECT email, reason FROM suppressions
          WHERE email IN ${sql.in(emails.map((e) => e.toLowerCase()))}
            AND (account_id = ${accountId} OR account_id IS NULL)`
        for (const row of rows) found.set(row.email, row.reason)
        return found
      })

    return { add, remove, list, check } as const
  })
}) {}

const view = (row: SuppressionRow): SuppressionView => ({
  email: row.email,
  reason: row.reason,
  source: row.source,
  created_at: row.created_at.toISOString()
})
