/**
 * "Unsubscribe and suppression are one fact" (DESIGN): the one function every unsubscribe goes
 * through — a contact's PATCH to `unsubscribed` today; the one-click POST, the unsubscribe page,
 * the mailto address and a feedback loop's opt-out next. In one transaction: the address is
 * suppressed for the account (reason `unsubscribe`; an existing entry is kept), every contact of
 * the address in the account (whatever its key) becomes `unsubscribed`, `contact.unsubscribed` is
 * emitted once per contact that changed, to that contact's key, and the engagement history gets
 * one `unsubscribed` entry when anything changed. Repeating it changes nothing and emits nothing.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { emitEvent } from "../../events/outbox.ts"
import { ContactUnsubscribed } from "../../events/schema.ts"
import { insertSuppression } from "../../platform/suppressions/suppress.ts"
import { recordFact } from "./engagement.ts"

export interface Unsubscribe {
  readonly accountId: string
  readonly email: string
  /** Where it came from, kept as the suppression's source (`api key key_…`, `one-click`, …). */
  readonly source: string
  readonly at: Date
}

/** Applies the unsubscribe; answers the ids of the contacts it moved. */
export const unsubscribeAddress = (u: Unsubscribe) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const suppressed = yield* insertSuppression({
        accountId: u.accountId,
        email: u.email,
        reason: "unsubscribe",
        source: u.source,
        at: u.at,
        onExisting: "keep"
      })
      const moved = yield* sql<{ id: string; key_id: string; email: string }>`
        UPDATE contacts SET status = 'unsubscribed', updated_at = ${u.at}
        WHERE account_id = ${u.accountId} AND lower(email) = ${u.email.toLowerCase()} AND status <> 'unsubscribed'
        RETURNING id, key_id, email`
      for (const contact of moved) {
        yield* emitEvent({ accountId: u.accountId, keyId: contact.key_id, event: ContactUnsubscribed.make({ email: contact.email }), at: u.at })
      }
      if (suppressed.length > 0 || moved.length > 0) {
        yield* recordFact("unsubscribed", { accountId: u.accountId, email: u.email, at: u.at, detail: u.source })
      }
      return moved.map((c) => c.id)
    })))
