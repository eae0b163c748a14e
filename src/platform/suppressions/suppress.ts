/**
 * The one INSERT into `suppressions`, shared by every writer: the API's and the operator's `add`
 * (Suppressions.ts) and the automatic suppression written by the MTA and the inbound processor
 * inside their transactions. `onExisting` decides what an address already on that list gets:
 * `keep` leaves the entry alone (a manual or unsubscribe entry is not rewritten by a later
 * bounce, and an admin's create is told it exists), `replace` re-reasons it on purpose.
 * Addresses are stored in lower case.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SuppressionHooks, type SuppressionReason } from "./hooks.ts"

export type { SuppressionReason } from "./hooks.ts"

export interface SuppressionRow {
  readonly email: string
  readonly reason: SuppressionReason
  readonly source: string | null
  readonly created_at: Date
  readonly account_id: string | null
}

export interface NewSuppression {
  /** null = the platform list, which applies to every account. */
  readonly accountId: string | null
  readonly email: string
  readonly reason: SuppressionReason
  readonly source: string | null
  readonly at: Date
  readonly onExisting: "keep" | "replace"
}

/**
 * The row written, or none when the address was already on the list and `onExisting` is `keep`.
 * A row written is told to the SuppressionHooks in the same transaction (bulk cancels the
 * address's running sequence subscriptions there: their table is theirs to write).
 */
export const insertSuppression = (entry: NewSuppression) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hooks = yield* SuppressionHooks
    return yield* sql.withTransaction(Effect.gen(function*() {
      const written = yield* insertRow(sql, entry)
      for (const row of written) {
        yield* hooks.addressSuppressed({ accountId: row.account_id, email: row.email, reason: row.reason, at: entry.at })
      }
      return written
    }))
  })

const insertRow = (sql: SqlClient.SqlClient, entry: NewSuppression) =>
    sql<SuppressionRow>`
      INSERT INTO suppressions (account_id, email, reason, source, created_at)
      VALUES (${entry.accountId}, ${entry.email.toLowerCase()}, ${entry.reason}, ${entry.source}, ${entry.at})
      ON CONFLICT (coalesce(account_id, ''), email) ${
      entry.onExisting === "replace"
        ? sql`DO UPDATE SET reason = EXCLUDED.reason, source = EXCLUDED.source`
        : sql`DO NOTHING`
    }
      RETURNING email, reason, source, created_at, account_id`

export const suppressAutomatically = (accountId: string, email: string, reason: SuppressionReason, source: string, at: Date) =>
  insertSuppression({ accountId, email, reason, source, at, onExisting: "keep" }).pipe(Effect.asVoid)

/** A LIKE pattern matching values that contain `text` (case folded, wildcards escaped). */
export const containing = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, "\\$&")}%`
