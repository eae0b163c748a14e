/**
 * What the `/confirm/<token>` page reads and does (issue 19, double opt-in; the page itself is
 * src/bulk/public/confirm-page.ts). The token names a membership (list, contact). Confirming is
 * one `UPDATE … WHERE status = 'pending' RETURNING`: only the press that moves the membership
 * emits `contact.confirmed` (to the list's key, in the same transaction), so the event is emitted
 * once however often the button is pressed; a later press finds it confirmed and changes nothing.
 * The press that confirms also enrols the contact into the sequences the list triggers, in its
 * transaction (sequences/triggered.ts).
 *
 * The page's second button, "I did not ask for this" (issue 26, finding 5: confirmation mail is
 * mail others trigger), is DESIGN's unsubscribe from all mail of the list's account, through the
 * one unsubscribe (`unsubscribeAddress`, source `not-me`): the address is suppressed for the
 * account, every contact of it changes and `contact.unsubscribed` is emitted as for any all-mail
 * unsubscribe, so no further confirmation (or any other mail of the account) reaches it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { emitEvent } from "../../events/outbox.ts"
import { ContactConfirmed } from "../../events/schema.ts"
import { unsubscribeAddress } from "../contacts/unsubscribe.ts"
import { enrollJoined } from "../sequences/triggered.ts"

/** The suppression source of the page's "I did not ask for this" button. */
export const NOT_ME_SOURCE = "not-me"

export interface MembershipRef {
  readonly listId: string
  readonly contactId: string
}

/** What a confirmation link points at now: gone, still pending, or already confirmed. */
export type MembershipState =
  | { readonly _tag: "gone" }
  | { readonly _tag: "pending" | "confirmed"; readonly listName: string; readonly accountName: string }

/** The membership's state, read only (the page's GET). */
export const membershipState = (ref: MembershipRef) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ status: "pending" | "confirmed" | "unsubscribed"; name: string; account_name: string }>`
      SELECT m.status, l.name, a.name AS account_name FROM list_memberships m
      JOIN lists l ON l.id = m.list_id
      JOIN accounts a ON a.id = l.account_id
      JOIN contacts c ON c.id = m.contact_id AND c.key_id = l.key_id
      WHERE m.list_id = ${ref.listId} AND m.contact_id = ${ref.contactId}`
    // An old link of a membership unsubscribed since: nothing to confirm (a re-add sends a new one).
    return row === undefined || row.status === "unsubscribed"
      ? { _tag: "gone" } as MembershipState
      : { _tag: row.status, listName: row.name, accountName: row.account_name } as MembershipState
  })

/**
 * The button's POST: pending → confirmed with its event, in one transaction. Answers the state
 * after the press (`confirmed`, whether this press or an earlier one did it; `gone` when the list,
 * the contact or the membership no longer exists) and whether this press changed anything.
 */
export const confirmMembership = (ref: MembershipRef, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const [moved] = yield* sql<{ account_id: string; key_id: string; name: string; email: string; account_name: string }>`
        UPDATE list_memberships m SET status = 'confirmed', confirmed_at = ${at}
        FROM lists l, contacts c, accounts a
        WHERE m.list_id = ${ref.listId} AND m.contact_id = ${ref.contactId} AND m.status = 'pending'
          AND l.id = m.list_id AND c.id = m.contact_id AND c.key_id = l.key_id AND a.id = l.account_id
        RETURNING l.account_id, l.key_id, l.name, c.email, a.name AS account_name`
      if (moved === undefined) return { state: yield* membershipState(ref), changed: false }
      // Sendable from now on: the sequences the list triggers enrol the contact with this press (issue 30 item 10).
      yield* enrollJoined(ref.listId, [ref.contactId], at)
      yield* emitEvent({
        accountId: moved.account_id,
        keyId: moved.key_id,
        event: ContactConfirmed.make({ email: moved.email, list_id: ref.listId, list_name: moved.name }),
        at
      })
      return { state: { _tag: "confirmed", listName: moved.name, accountName: moved.account_name } as MembershipState, changed: true }
    })))

/**
 * The "I did not ask for this" button's POST: the address the token names is unsubscribed from all
 * mail of the list's account (source `not-me`). Answers the account's name, or undefined when the
 * membership, list or contact is gone (the 404 page, nothing changed). Pressing it again changes
 * nothing more (`unsubscribeAddress` is idempotent).
 */
export const refuseMembership = (ref: MembershipRef, at: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ account_id: string; account_name: string; email: string }>`
      SELECT l.account_id, a.name AS account_name, c.email FROM list_memberships m
      JOIN lists l ON l.id = m.list_id
      JOIN accounts a ON a.id = l.account_id
      JOIN contacts c ON c.id = m.contact_id AND c.key_id = l.key_id
      WHERE m.list_id = ${ref.listId} AND m.contact_id = ${ref.contactId}`
    if (row === undefined) return undefined
    const moved = yield* unsubscribeAddress({ accountId: row.account_id, email: row.email, source: NOT_ME_SOURCE, at })
    return { accountName: row.account_name, changed: moved.length > 0 }
  })
