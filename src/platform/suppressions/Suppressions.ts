/**
 * Suppression lists: addresses that are never mailed. Account level (each account's own) and
 * platform level (account_id NULL, kept by the operator, applying to every account). Reasons:
 * bounce, complaint, unsubscribe, manual. Addresses are compared in lower case.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"

export type SuppressionReason = "bounce" | "complaint" | "unsubscribe" | "manual"

export interface SuppressionView {
  readonly email: string
  readonly reason: SuppressionReason
  readonly source: string | null
  readonly created_at: string
}

export class SuppressionNotFound extends Data.TaggedError("SuppressionNotFound")<{ readonly email: string }> {}

interface Row {
  readonly email: string
  readonly reason: SuppressionReason
  readonly source: string | null
  readonly created_at: Date
  readonly account_id: string | null
}

export class Suppressions extends Effect.Service<Suppressions>()("herald/Suppressions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Adds (or re-reasons) a suppression; `accountId` null = platform level. Idempotent. */
    const add = (accountId: string | null, email: string, reason: SuppressionReason, source: string | null) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* sql<Row>`
          INSERT INTO suppressions (account_id, email, reason, source, created_at)
          VALUES (${accountId}, ${email.toLowerCase()}, ${reason}, ${source}, ${now})
          ON CONFLICT (coalesce(account_id, ''), email) DO UPDATE SET reason = EXCLUDED.reason, source = EXCLUDED.source
          RETURNING email, reason, source, created_at, account_id`
        return view(rows[0]!)
      })

    const remove = (accountId: string | null, email: string) =>
      Effect.gen(function*() {
        const rows = yield* sql`
          DELETE FROM suppressions WHERE coalesce(account_id, '') = ${accountId ?? ""} AND email = ${email.toLowerCase()}
          RETURNING id`
        if (rows.length === 0) return yield* new SuppressionNotFound({ email })
        return { email: email.toLowerCase(), deleted: true as const }
      })

    const list = (accountId: string, filter: { email?: string | undefined; reason?: string | undefined; limit: number; offset: number }) =>
      Effect.gen(function*() {
        const where = sql.and([
          sql`account_id = ${accountId}`,
          ...(filter.email === undefined ? [] : [sql`email LIKE ${`%${filter.email.toLowerCase().replace(/[\\%_]/g, "\\$&")}%`}`]),
          ...(filter.reason === undefined ? [] : [sql`reason = ${filter.reason}`])
        ])
        const [count] = yield* sql<{ total: string }>`SELECT count(*) AS total FROM suppressions WHERE ${where}`
        const rows = yield* sql<Row>`
          SELECT email, reason, source, created_at, account_id FROM suppressions WHERE ${where}
          ORDER BY created_at DESC, id DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`
        return { total: Number(count?.total ?? 0), limit: filter.limit, offset: filter.offset, items: rows.map(view) }
      })

    /** The platform-level list (account_id NULL), which applies to every account. */
    const listPlatform = (filter: { email?: string | undefined; limit: number; offset: number }) =>
      Effect.gen(function*() {
        const where = sql.and([
          sql`account_id IS NULL`,
          ...(filter.email === undefined ? [] : [sql`email LIKE ${`%${filter.email.toLowerCase().replace(/[\\%_]/g, "\\$&")}%`}`])
        ])
        const [count] = yield* sql<{ total: string }>`SELECT count(*) AS total FROM suppressions WHERE ${where}`
        const rows = yield* sql<Row>`
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

    return { add, remove, list, listPlatform, check } as const
  })
}) {}

const view = (row: Row): SuppressionView => ({
  email: row.email,
  reason: row.reason,
  source: row.source,
  created_at: row.created_at.toISOString()
})
