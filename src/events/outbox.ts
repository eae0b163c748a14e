/**
 * The transactional outbox: every state change that emits an event writes its row in the same
 * transaction as the change (the webhook dispatcher fans the rows out later), with this — or, for
 * the MTA's outcomes, many at once in the statement that records them (DeliveryQueue.completeMany,
 * same columns, from `outboxRow`). Only a `HeraldEvent` can be written: an unknown name or a
 * missing field does not compile, and the payload is encoded by the event's schema.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { newId } from "../lib/ids.ts"
import { HeraldEvent } from "./schema.ts"

export interface OutboxEntry {
  readonly accountId: string
  /** The key the event belongs to: the body's `app`, and whose webhook URL receives it. */
  readonly keyId: string
  readonly event: HeraldEvent
  readonly at: Date
}

const encode = Schema.encodeSync(HeraldEvent)

/** The outbox columns of an event: its name and its own fields (the payload, without `event`). */
export const outboxRow = (event: HeraldEvent): { readonly event: string; readonly payload: Record<string, unknown> } => {
  const { event: name, ...payload } = encode(event)
  return { event: name, payload }
}

export const emitEvent = (e: OutboxEntry) => emitEvents([e])

/** Many events in one statement, in their order (the tracking aggregator's batch). */
export const emitEvents = (entries: ReadonlyArray<OutboxEntry>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    if (entries.length === 0) return Effect.void
    const rows = entries.map((e) => ({ ...outboxRow(e.event), id: newId("evt"), e }))
    return sql`INSERT INTO events (id, account_id, key_id, event, payload, created_at)
      SELECT * FROM unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.e.accountId)}::text[], ${rows.map((r) => r.e.keyId)}::text[],
        ${rows.map((r) => r.event)}::text[], ${rows.map((r) => JSON.stringify(r.payload))}::text[]::jsonb[], ${rows.map((r) => r.e.at)}::timestamptz[])`
  }).pipe(Effect.asVoid)
