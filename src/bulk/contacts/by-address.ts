/**
 * The key's contacts of some addresses, created when missing (a list member added by email, issue
 * 19 "Lists"): one `INSERT … ON CONFLICT DO NOTHING` and one read, inside the caller's transaction.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { newId } from "../../lib/ids.ts"
import type { Owner } from "./Contacts.ts"

/** Address (lower case) → contact id, for every address given; new contacts are `active` with no name. */
export const contactsOfAddresses = (owner: Owner, emails: ReadonlyArray<string>, at: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const byAddress = new Map<string, string>()
    if (emails.length === 0) return byAddress
    const rows = [...new Map(emails.map((e) => [e.toLowerCase(), { id: newId("ct"), email: e }])).values()]
    yield* sql`
      INSERT INTO contacts (id, account_id, key_id, email, created_at, updated_at)
      SELECT r.id, ${owner.accountId}, ${owner.keyId}, r.email, ${at}, ${at}
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(id text, email text)
      ON CONFLICT (key_id, lower(email)) DO NOTHING`
    const found = yield* sql<{ id: string; address: string }>`
      SELECT id, lower(email) AS address FROM contacts WHERE key_id = ${owner.keyId} AND lower(email) = ANY(${rows.map((r) => r.email.toLowerCase())})`
    for (const row of found) byAddress.set(row.address, row.id)
    return byAddress
  })
