/**
 * Which delivery an inbound report is about (DESIGN "Message identity"): first the VERP address the
 * report was sent to — it names the delivery and carries an HMAC tag, so it cannot be forged — then
 * the identity headers of the returned original: `X-Herald-Message-Id`, else the local part of its
 * `Message-ID: <{message_id}@{sending domain}>`, matched with the recipient the report names.
 * Anyone who received a message knows its Message-ID and can name a co-recipient, so the second
 * way is acted on only for an authenticated feedback loop (trust.ts) and only for the recipients
 * the report names — never every recipient of the message.
 *
 * The deliveries of a whole group of messages are read with one statement (`lookupDeliveries`);
 * picking each message's deliveries out of that is pure. Most reports name nothing Herald sent, and
 * a message with nothing to look up costs no statement at all.
 */
import { Effect } from "effect"
import type { OriginalMessage } from "../parse/types.ts"
import { type DeliveryRef, ReportedDeliveries } from "./ports.ts"

/** What a message's deliveries are found by. */
export interface DeliveryKeys {
  /** The delivery named by the first envelope recipient that is a valid VERP address. */
  readonly verpId: string | null
  /** Herald's message id as the returned original carries it. */
  readonly messageId: string | null
}

export const noKeys: DeliveryKeys = { verpId: null, messageId: null }

/** Herald's message id as the original carries it, or null when the original is not Herald's. */
export const heraldMessageIdOf = (original: OriginalMessage): string | null => {
  if (original.heraldMessageId !== null) return original.heraldMessageId.trim()
  if (original.messageId === null) return null
  const local = original.messageId.slice(0, original.messageId.lastIndexOf("@"))
  return /^[A-Za-z0-9_]+$/.test(local) ? local : null
}

/** The delivery a VERP return path names (ReportedDeliveries.deliveryOfReturnPath), or null. */
export type ReturnPathDecoder = (address: string) => string | null

export const deliveryKeysOf = (rcptTo: ReadonlyArray<string>, original: OriginalMessage, decode: ReturnPathDecoder): DeliveryKeys => ({
  verpId: rcptTo.map(decode).find((id): id is string => id !== null) ?? null,
  messageId: heraldMessageIdOf(original)
})

/** The deliveries a group of messages names, by delivery id and by message id. */
export interface DeliveryIndex {
  readonly byId: ReadonlyMap<string, DeliveryRef>
  readonly byMessage: ReadonlyMap<string, ReadonlyArray<DeliveryRef>>
}

const emptyIndex: DeliveryIndex = { byId: new Map(), byMessage: new Map() }

/**
 * One statement for every key of the group (none when no message has a key). A message's original
 * is looked up by its message id only when its VERP address names no delivery: a Herald bounce
 * carries both, and reading every delivery of the original (up to HERALD_MAX_RECIPIENTS rows) for
 * a delivery already named would be wasted. A VERP id with no row left (rare) costs a second
 * statement for those messages' ids. The rows come from the queue's read model (ReportedDeliveries,
 * the MTA's: src/mta/queue/report-reads.ts), decoded there.
 */
export const lookupDeliveries = (keys: ReadonlyArray<DeliveryKeys>) =>
  Effect.gen(function*() {
    const read = (yield* ReportedDeliveries).find
    const distinct = (ids: ReadonlyArray<string | null>) => [...new Set(ids.filter((id): id is string => id !== null))]
    const verpIds = distinct(keys.map((k) => k.verpId))
    const messageIds = new Set(distinct(keys.map((k) => (k.verpId === null ? k.messageId : null))))
    const rows = [...yield* read(verpIds, [...messageIds])]
    const found = new Set(rows.map((row) => row.id))
    const fallback = distinct(keys.map((k) => (k.verpId !== null && !found.has(k.verpId) && !messageIds.has(k.messageId ?? "") ? k.messageId : null)))
    if (fallback.length > 0) {
      rows.push(...yield* read([], fallback))
      for (const id of fallback) messageIds.add(id)
    }
    if (rows.length === 0) return emptyIndex
    const byId = new Map(rows.map((row) => [row.id, row]))
    const byMessage = new Map<string, Array<DeliveryRef>>()
    for (const row of byId.values()) {
      if (!messageIds.has(row.message_id)) continue
      const list = byMessage.get(row.message_id) ?? []
      list.push(row)
      byMessage.set(row.message_id, list)
    }
    return { byId, byMessage } satisfies DeliveryIndex
  })

/** The delivery named by the message's VERP address, if it exists. */
export const deliveryByVerp = (index: DeliveryIndex, keys: DeliveryKeys): DeliveryRef | null =>
  keys.verpId === null ? null : index.byId.get(keys.verpId) ?? null

/** Every delivery of the original message the report returns (none when it is not Herald's). */
export const deliveriesOfOriginal = (index: DeliveryIndex, keys: DeliveryKeys): ReadonlyArray<DeliveryRef> =>
  keys.messageId === null ? [] : index.byMessage.get(keys.messageId) ?? []

/** The deliveries of the original message to `recipients`: none when the report names none. */
export const deliveriesByOriginal = (index: DeliveryIndex, keys: DeliveryKeys, recipients: ReadonlyArray<string>): ReadonlyArray<DeliveryRef> => {
  const rows = deliveriesOfOriginal(index, keys)
  if (recipients.length === 0) return []
  const wanted = new Set(recipients.map((r) => r.toLowerCase()))
  return rows.filter((row) => wanted.has(row.recipient.toLowerCase()))
}
