/**
 * Unsubscribing from some lists only (issue 30 item 8): the list memberships' owner's side of the
 * unsubscribe page and the one-click (src/bulk/public/unsubscribe-page.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { emitEvent } from "../../events/outbox.ts"
import { ContactUnsubscribed } from "../../events/schema.ts"
import { recordFact } from "../contacts/engagement.ts"
import { sentByColumns, type Unsubscribe } from "../contacts/unsubscribe.ts"
export interface ListUnsubscribe extends Omit<Unsubscribe, "email"> {
  readonly email: string
  /** The lists (of the campaign's key) to leave. */
  readonly listIds: ReadonlyArray<string>
}

/**
 * Unsubscribing from some lists only (DESIGN "Unsubscribing from one list"): the address's
 * memberships in `listIds` become `unsubscribed` (never sendable from those lists), with one
 * `contact.unsubscribed` (`scope: list`, `list_id`) per membership that changed, to the list's
 * key, and one engagement entry naming the campaign when anything changed. No suppression: the
 * address stays mailable from other lists and for transactional mail. Repeating it changes nothing.
 */
export const unsubscribeFromLists = (u: ListUnsubscribe) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      if (u.listIds.length === 0) return 0
      const moved = yield* sql<{ list_id: string; key_id: string; email: string }>`
        UPDATE list_memberships m SET status = 'unsubscribed'
        FROM contacts c, lists l
        WHERE c.id = m.contact_id AND l.id = m.list_id AND l.key_id = c.key_id AND c.account_id = ${u.accountId}
          AND lower(c.email) = ${u.email.toLowerCase()} AND m.list_id = ANY(${[...u.listIds]}) AND m.status <> 'unsubscribed'
        RETURNING m.list_id, c.key_id, c.email`
      for (const row of moved) {
        const event = ContactUnsubscribed.make({ email: row.email, scope: "list", list_id: row.list_id })
        yield* emitEvent({ accountId: u.accountId, keyId: row.key_id, event, at: u.at })
      }
      if (moved.length > 0) {
        yield* recordFact("unsubscribed", { accountId: u.accountId, email: u.email, at: u.at, detail: u.source, ...sentByColumns(u.sentBy) })
      }
      return moved.length
    })))
