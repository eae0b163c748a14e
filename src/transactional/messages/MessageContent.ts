/**
 * A message's content as its recipient got it (GET /v1/mail/messages/{id}/content): the stored
 * message read here, composed again as it was sent through the MessageComposing port (the bulk
 * area, in the render pool). Nothing is written: no row changes, no open, click or send counts.
 *
 * Whose: the account's, like the timeline (MessageLookup.ts); bulk mail (campaign, sequence,
 * confirmation and test-send messages: channel `bulk`) only for the key that sent it, as every
 * bulk resource belongs to its key. Another account's, another key's bulk message and one no
 * longer kept are the same 404.
 *
 * Bounded: the attachments' bytes never leave PostgreSQL (the statement puts a one-byte stand-in
 * in their place and answers their decoded sizes), and a stored message larger than delivery reads
 * (twice MAX_JSON_MB, without its attachments) is not read at all.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { SIMULATOR_DOMAIN } from "../../lib/simulator.ts"
import { type ComposedContent, ContentNotComposed, MessageComposing } from "./content-port.ts"

export class ContentNotFound extends Data.TaggedError("ContentNotFound")<{ readonly id: string }> {}

/** The key asking, and its account. */
export interface Viewer {
  readonly accountId: string
  readonly keyId: string
}

interface Row {
  readonly id: string
  readonly from_domain: string
  readonly created_at: Date
  readonly own: unknown
  readonly shared: unknown
  readonly attachment_sizes: ReadonlyArray<number> | null
  readonly stored_bytes: number
  readonly delivery_id: string | null
  readonly live: boolean | null
}

/** A one-byte base64 stand-in for an attachment's content: the schema wants some, the view shows none. */
const STAND_IN = "AA=="

export class MessageContent extends Effect.Service<MessageContent>()("herald/MessageContent", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const composing = yield* MessageComposing
    const { maxJsonBytes } = yield* AppConfig
    /** What delivery reads of a stored message at most (src/mta/Delivery.ts), attachments aside here. */
    const maxStoredBytes = 2 * maxJsonBytes

    /** `column` (a stored part) with each attachment's content replaced by the stand-in. */
    const withoutBytes = (column: string) =>
      sql`(CASE WHEN jsonb_typeof(${sql.literal(column)}->'attachments') = 'array' THEN jsonb_set(${sql.literal(column)}, '{attachments}',
        (SELECT coalesce(jsonb_agg(a || jsonb_build_object('content', ${STAND_IN}::text) ORDER BY i), '[]'::jsonb)
          FROM jsonb_array_elements(${sql.literal(column)}->'attachments') WITH ORDINALITY AS x(a, i)))
        ELSE ${sql.literal(column)} END)`

    /** The decoded sizes of `column`'s attachments, in order (base64: 3 bytes per 4 characters, less the padding). */
    const sizesOf = (column: string) =>
      sql`(SELECT array_agg(length(b) / 4 * 3 - length(b) + length(rtrim(b, '=')) ORDER BY i)
        FROM jsonb_array_elements(${sql.literal(column)}->'attachments') WITH ORDINALITY AS x(a, i),
          LATERAL (SELECT regexp_replace(a->>'content', '\\s', '', 'g') AS b) y
        WHERE jsonb_typeof(${sql.literal(column)}->'attachments') = 'array')`

    const find = (viewer: Viewer, messageId: string) =>
      sql<Row>`
        SELECT s.id, s.from_domain, s.created_at, s.sizes AS attachment_sizes, s.stored_bytes,
          CASE WHEN s.stored_bytes <= ${maxStoredBytes} THEN s.own END AS own,
          CASE WHEN s.stored_bytes <= ${maxStoredBytes} THEN s.shared END AS shared,
          (SELECT min(d.id) FROM deliveries d WHERE d.message_id = s.id) AS delivery_id,
          (SELECT bool_and(d.recipient_domain = ${SIMULATOR_DOMAIN}) FROM deliveries d WHERE d.message_id = s.id) AS live
        FROM (
          SELECT t.*, octet_length(t.own::text) + coalesce(octet_length(t.shared::text), 0) AS stored_bytes FROM (
            SELECT m.id, m.from_domain, m.created_at,
              ${withoutBytes("m.content")} AS own,
              ${withoutBytes("c.content")} AS shared,
              coalesce(${sizesOf("c.content")}, ${sizesOf("m.content")}) AS sizes
            FROM messages m LEFT JOIN message_contents c ON c.id = m.content_id
            WHERE m.id = ${messageId} AND m.account_id = ${viewer.accountId}
              AND (m.channel = 'transactional' OR m.key_id = ${viewer.keyId})
          ) t
        ) s`

    /** The message `messageId` as its recipient got it, or why not. */
    const get = (viewer: Viewer, messageId: string) =>
      Effect.gen(function*() {
        const [row] = yield* find(viewer, messageId)
        if (row === undefined) return yield* new ContentNotFound({ id: messageId })
        if (row.own === null) {
          const message = `the stored message is ${row.stored_bytes} bytes without its attachments; at most ${maxStoredBytes} (twice MAX_JSON_MB) are read`
          return yield* new ContentNotComposed({ kind: "failed", message })
        }
        const composed: ComposedContent = yield* composing.compose({
          messageId: row.id,
          accountId: viewer.accountId,
          fromDomain: row.from_domain,
          createdAt: row.created_at,
          own: row.own,
          shared: row.shared,
          attachmentSizes: row.attachment_sizes ?? [],
          deliveryId: row.delivery_id,
          live: row.live === true
        })
        return composed
      })

    return { get } as const
  })
}) {}
