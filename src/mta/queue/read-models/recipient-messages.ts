/**
 * The bulk messages one key sent to one address, newest first (campaigns, sequence steps,
 * confirmation mails, test-sends: the `bulk` lane), with their delivery's state: what a contact's
 * page lists (GET /v1/bulk/contacts/{email}/messages). One delivery per bulk message (each has a
 * single `to`), so a row is a message. By the index deliveries_bulk_key_recipient
 * (migrations/0035_bulk_messages_by_recipient.sql): a page costs the address's rows, not the key's.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Count, decodedRows } from "./rows.ts"

export const RecipientMessageRow = Schema.Struct({
  id: Schema.String,
  subject: Schema.String,
  state: Schema.String,
  last_reply: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type RecipientMessageRow = typeof RecipientMessageRow.Type

/** `keyId`'s bulk messages to `address` (any case): how many, and the page at `offset`. */
export const bulkMessagesTo = (keyId: string, address: string, limit: number, offset: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const to = sql`d.key_id = ${keyId} AND d.channel = 'bulk' AND lower(d.recipient) = ${address.toLowerCase()}`
    const [counted] = yield* decodedRows(Schema.Struct({ total: Count }), sql`SELECT count(*) AS total FROM deliveries d WHERE ${to}`)
    const rows = yield* decodedRows(
      RecipientMessageRow,
      sql`SELECT m.id, coalesce(d.rendered_subject, m.subject) AS subject, d.state, d.last_reply, m.created_at, d.updated_at
        FROM deliveries d JOIN messages m ON m.id = d.message_id
        WHERE ${to} ORDER BY d.created_at DESC, d.id DESC LIMIT ${limit} OFFSET ${offset}`
    )
    return { total: counted?.total ?? 0, rows }
  })
