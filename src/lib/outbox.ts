/**
 * The transactional outbox: every state change that emits an event writes its row in the same
 * transaction as the change (the webhook dispatcher fans the rows out later), with this — or, for
 * the MTA's outcomes, many at once in the statement that records them (DeliveryQueue.completeMany,
 * same columns). `keyId` is the event's `app`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { newId } from "./ids.ts"

export interface OutboxEvent {
  readonly accountId: string
  readonly keyId: string
  readonly event: string
  readonly payload: Record<string, unknown>
  readonly at: Date
}

export const emitEvent = (e: OutboxEvent) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO events (id, account_id, key_id, event, payload, created_at)
      VALUES (${newId("evt")}, ${e.accountId}, ${e.keyId}, ${e.event}, ${JSON.stringify(e.payload)}::jsonb, ${e.at})`
  ).pipe(Effect.asVoid)
