/**
 * The one writer of `list_memberships` additions (issue 19 "Lists"), used by the lists API and by
 * the contact import's `list_ids`, inside the caller's transaction. A member of a list that
 * requires confirmation starts `pending` unless the caller holds the consent (`confirmed`); of
 * any other list, `confirmed`. An existing membership keeps its status, except that held consent
 * confirms a pending one, and an `unsubscribed` one on a list that requires confirmation turns
 * `pending` with a new confirmation mail (under the 24 h bound): only the person can opt back in.
 *
 * Every membership created `pending` gets its confirmation mail in the same transaction
 * (confirmation-mail.ts); a membership that was already there (re-adding a pending member) gets
 * none. One INSERT per list and one queue write per call, whatever the number of contacts.
 *
 * A membership created `confirmed`, or moved `pending` → `confirmed` by held consent, enrols its
 * contact into the sequences the list triggers (issue 30 item 10, sequences/triggered.ts) in the
 * same transaction, one set-based statement per triggered sequence.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Owner } from "../contacts/Contacts.ts"
import { enrollJoined } from "../sequences/triggered.ts"
import { ConfirmationMail, type ConfirmingList, type NewPending, NOTHING_QUEUED, type Queued } from "./confirmation-mail.ts"

export interface MemberList extends ConfirmingList {
  readonly require_confirmation: boolean
}

/** The key's lists among `ids` (another key's or account's are simply absent). */
export const listsOfKey = (owner: Owner, ids: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    ids.length === 0
      ? Effect.succeed([] as ReadonlyArray<MemberList>)
      : sql<MemberList>`SELECT id, name, require_confirmation, confirm_from_email, confirm_from_name, confirm_subject, confirm_intro
          FROM lists WHERE key_id = ${owner.keyId} AND id = ANY(${[...ids]})`)

/**
 * Adds the memberships and queues the confirmation mail of the new pending ones; answers what was
 * queued (the caller charges the quota for it at the end of its transaction: ConfirmationMail.charge).
 */
export const addMemberships = (
  owner: Owner,
  lists: ReadonlyArray<MemberList>,
  contactIds: ReadonlyArray<string>,
  options: { readonly confirmed: boolean; readonly at: Date }
): Effect.Effect<Queued, Effect.Effect.Error<ReturnType<ConfirmationMail["queue"]>>, SqlClient.SqlClient | ConfirmationMail> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (contactIds.length === 0) return NOTHING_QUEUED
    const pending: Array<NewPending> = []
    for (const list of lists) {
      const status = list.require_confirmation && !options.confirmed ? "pending" : "confirmed"
      // `xmax = 0`: the row was inserted by this statement, not an existing one updated.
      // An `unsubscribed` member stays so — held consent included: only the person opts back in,
      // by confirming again where the list requires confirmation (pending, with a new mail).
      const written = yield* sql<{ contact_id: string; status: string }>`
        INSERT INTO list_memberships (list_id, contact_id, status, created_at, confirmed_at)
        SELECT ${list.id}, c, ${status}, ${options.at}, ${status === "confirmed" ? options.at : null}
        FROM unnest(${[...contactIds]}::text[]) AS c
        ON CONFLICT (list_id, contact_id) DO UPDATE
          SET status = CASE WHEN list_memberships.status = 'unsubscribed' THEN 'pending' ELSE 'confirmed' END,
            confirmed_at = CASE WHEN list_memberships.status = 'unsubscribed' THEN NULL ELSE EXCLUDED.created_at END
        WHERE (EXCLUDED.status = 'confirmed' AND list_memberships.status = 'pending')
          OR (list_memberships.status = 'unsubscribed' AND ${list.require_confirmation})
        RETURNING contact_id, status`
      // Only a row this statement created pending or reopened (an existing pending one returns nothing) gets its mail.
      for (const row of written) if (row.status === "pending") pending.push({ list, contactId: row.contact_id })
      // Every `confirmed` row returned was created so or moved from pending: sendable from now on.
      yield* enrollJoined(list.id, written.filter((row) => row.status === "confirmed").map((row) => row.contact_id), options.at)
    }
    if (pending.length === 0) return NOTHING_QUEUED
    const mail = yield* ConfirmationMail
    return yield* mail.queue(owner, pending, options.at)
  })
