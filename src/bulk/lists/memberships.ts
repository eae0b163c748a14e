/**
 * The one writer of `list_memberships` additions (issue 19 "Lists"), used by the lists API and by
 * the contact import's `list_ids`, inside the caller's transaction. A member of a list that
 * requires confirmation starts `pending` unless the caller holds the consent (`confirmed`); of
 * any other list, `confirmed`. An existing membership keeps its status, except that held consent
 * confirms a pending one.
 *
 * Not yet: the confirmation mail of double opt-in. Pending members stay pending until it comes.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Owner } from "../contacts/Contacts.ts"

export interface MemberList {
  readonly id: string
  readonly require_confirmation: boolean
}

/** The key's lists among `ids` (another key's or account's are simply absent). */
export const listsOfKey = (owner: Owner, ids: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    ids.length === 0
      ? Effect.succeed([] as ReadonlyArray<MemberList>)
      : sql<MemberList>`SELECT id, require_confirmation FROM lists WHERE key_id = ${owner.keyId} AND id = ANY(${[...ids]})`)

export const addMemberships = (
  lists: ReadonlyArray<MemberList>,
  contactIds: ReadonlyArray<string>,
  options: { readonly confirmed: boolean; readonly at: Date }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (contactIds.length === 0) return
    for (const list of lists) {
      const status = list.require_confirmation && !options.confirmed ? "pending" : "confirmed"
      yield* sql`
        INSERT INTO list_memberships (list_id, contact_id, status, created_at, confirmed_at)
        SELECT ${list.id}, c, ${status}, ${options.at}, ${status === "confirmed" ? options.at : null}
        FROM unnest(${[...contactIds]}::text[]) AS c
        ON CONFLICT (list_id, contact_id) DO UPDATE SET status = 'confirmed', confirmed_at = EXCLUDED.created_at
        WHERE EXCLUDED.status = 'confirmed' AND list_memberships.status = 'pending'`
    }
  })
