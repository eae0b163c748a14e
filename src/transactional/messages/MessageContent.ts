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
 * in their place and answers their decoded sizes); a stored message over MAX_VIEWED_BYTES without
 * its attachments is not read at all; a key has at most VIEWS_PER_KEY views in hand at once (more
 * at once: 429 with Retry-After). Composing and parsing run in the render pool (its deadline, its
 * per-account share); what stays on the main thread is reading the row, handing it over and
 * sending the answer, which grows with the message's size.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { SIMULATOR_DOMAIN } from "../../lib/simulator.ts"
import { type ComposedContent, ContentNotComposed, MessageComposing } from "./content-port.ts"
import type { MessageViewer } from "./MessageLookup.ts"

export class ContentNotFound extends Data.TaggedError("ContentNotFound")<{ readonly id: string }> {}

/** The key has VIEWS_PER_KEY views in hand already. */
export class TooManyViews extends Data.TaggedError("TooManyViews")<{ readonly limit: number }> {}

/**
 * The largest stored message (text, html and headers: attachments are left in PostgreSQL) a view
 * reads. The main thread's share of a view grows with it: eight views of a 3.5 MB html at once
 * held /health for up to 1 s (measured) before the per-key bound below. Delivery reads up to
 * twice MAX_JSON_MB; a message between the two is delivered but not shown (422).
 */
export const MAX_VIEWED_BYTES = 4 * 1024 * 1024
/** Views one key may have in hand at once in one process (a console shows one message at a time). */
export const VIEWS_PER_KEY = 2

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
    const maxStoredBytes = MAX_VIEWED_BYTES
    /** Views in hand, by key. */
    const inHand = new Map<string, number>()

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

    const find = (viewer: MessageViewer, messageId: string) =>
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

    /** `view` counted among the key's views in hand, or TooManyViews when it has VIEWS_PER_KEY already. */
    const counted = <A, E>(keyId: string, view: Effect.Effect<A, E>): Effect.Effect<A, E | TooManyViews> =>
      Effect.acquireUseRelease(
        Effect.suspend(() => {
          const n = inHand.get(keyId) ?? 0
          if (n >= VIEWS_PER_KEY) return Effect.fail(new TooManyViews({ limit: VIEWS_PER_KEY }))
          inHand.set(keyId, n + 1)
          return Effect.void
        }),
        () => view,
        () =>
          Effect.sync(() => {
            const n = (inHand.get(keyId) ?? 1) - 1
            if (n <= 0) inHand.delete(keyId)
            else inHand.set(keyId, n)
          })
      )

    /** The message `messageId` as its recipient got it, or why not. */
    const get = (viewer: MessageViewer, messageId: string) => counted(viewer.keyId, view(viewer, messageId))

    const view = (viewer: MessageViewer, messageId: string) =>
      Effect.gen(function*() {
        const [row] = yield* find(viewer, messageId)
        if (row === undefined) return yield* new ContentNotFound({ id: messageId })
        if (row.own === null) {
          const message = `the stored message is ${row.stored_bytes} bytes without its attachments; at most ${maxStoredBytes} are read to be shown`
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
