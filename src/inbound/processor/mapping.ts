/**
 * Which delivery an inbound report is about (DESIGN "Message identity"): first the VERP address the
 * report was sent to — it names the delivery and carries an HMAC tag, so it cannot be forged — then
 * the identity headers of the returned original: `X-Herald-Message-Id`, else the local part of its
 * `Message-ID: <{message_id}@{sending domain}>`, matched with the recipient.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { decodeVerp } from "../../mta/verp.ts"
import type { OriginalMessage } from "../parse/types.ts"

export interface DeliveryRef {
  readonly id: string
  readonly message_id: string
  readonly account_id: string
  readonly key_id: string
  readonly recipient: string
  readonly state: string
  readonly subject: string
}

/** The delivery named by a VERP address among the envelope recipients, if any checks out. */
export const deliveryByVerp = (rcptTo: ReadonlyArray<string>, secret: string) =>
  Effect.gen(function*() {
    const ids = rcptTo.map((address) => decodeVerp(address, secret)).filter((id): id is string => id !== null)
    if (ids.length === 0) return null
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<DeliveryRef>`
      SELECT d.id, d.message_id, d.account_id, d.key_id, d.recipient, d.state, m.subject
      FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE d.id = ${ids[0]!}`
    return rows[0] ?? null
  })

/** Herald's message id as the original carries it, or null when the original is not Herald's. */
export const heraldMessageIdOf = (original: OriginalMessage): string | null => {
  if (original.heraldMessageId !== null) return original.heraldMessageId.trim()
  if (original.messageId === null) return null
  const local = original.messageId.slice(0, original.messageId.lastIndexOf("@"))
  return /^[A-Za-z0-9_]+$/.test(local) ? local : null
}

/** The deliveries of the original message, to `recipients` (all of them when none are named). */
export const deliveriesByOriginal = (original: OriginalMessage, recipients: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const messageId = heraldMessageIdOf(original)
    if (messageId === null) return [] as ReadonlyArray<DeliveryRef>
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<DeliveryRef>`
      SELECT d.id, d.message_id, d.account_id, d.key_id, d.recipient, d.state, m.subject
      FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE d.message_id = ${messageId}`
    if (recipients.length === 0) return rows
    const wanted = new Set(recipients.map((r) => r.toLowerCase()))
    return rows.filter((row) => wanted.has(row.recipient.toLowerCase()))
  })
