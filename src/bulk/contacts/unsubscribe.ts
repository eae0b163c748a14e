/**
 * "Unsubscribe and suppression are one fact" (DESIGN): the one function every unsubscribe goes
 * through — a contact's PATCH to `unsubscribed` today; the one-click POST, the unsubscribe page,
 * the mailto address and a feedback loop's opt-out next. In one transaction: the address is
 * suppressed for the account (reason `unsubscribe`; an existing entry is kept), every contact of
 * the address in the account (whatever its key) becomes `unsubscribed`, `contact.unsubscribed` is
 * emitted once per contact that changed, to that contact's key, and the engagement history gets
 * one `unsubscribed` entry when anything changed. Repeating it changes nothing and emits nothing.
 * That entry names the campaign or sequence whose message carried the link (the unsubscribe
 * token's `source`), which the campaign's analytics count: once per contact and campaign, since a
 * repeat changes nothing.
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
  /** The campaign (`cp_…`) or sequence (`sq_…`) whose message the unsubscribe came from, if any. */
  readonly sentBy?: string | undefined
}

/** The campaign or sequence an unsubscribe names, as the engagement fact's columns. */
export const sentByColumns = (sentBy: string | undefined) =>
  sentBy?.startsWith("cp_") ? { campaignId: sentBy } : sentBy?.startsWith("sq_") ? { sequenceId: sentBy } : {}

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
        yield* emitEvent({ accountId: u.accountId, keyId: contact.key_id, event: ContactUnsubscribed.make({ email: contact.email, scope: "account" }), at: u.at })
      }
      if (suppressed.length > 0 || moved.length > 0) {
        yield* recordFact("unsubscribed", { accountId: u.accountId, email: u.email, at: u.at, detail: u.source, ...sentByColumns(u.sentBy) })
      }
      return moved.map((c) => c.id)
    })))

