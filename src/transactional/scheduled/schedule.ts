/**
 * The one INSERT into `scheduled_sends`: a send with `send_at`, accepted and waiting for its moment.
 * The scheduled/ folder owns that table (docs/architecture.md "Who owns which table"); this writer is a file of
 * its own, not a method of ScheduledSends.ts, because ScheduledSends releases through acceptance
 * (accept.ts) and acceptance schedules through this: one file would make the two import each other.
 * Runs alone or inside the caller's transaction (acceptance's, with its idempotency record).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface NewScheduledSend {
  /** The `sch_` id answered in the 202. */
  readonly id: string
  readonly accountId: string
  readonly keyId: string
  readonly requestId: string
  /** The message id the 202 promised; the release writes its queue row under it. */
  readonly messageId: string
  /** The canonical request, released as it was accepted. */
  readonly request: unknown
  readonly sendAt: Date
  readonly now: Date
}

export const schedule = (send: NewScheduledSend) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO scheduled_sends (id, account_id, key_id, request_id, message_id, request, send_at, created_at)
      VALUES (${send.id}, ${send.accountId}, ${send.keyId}, ${send.requestId}, ${send.messageId},
        ${JSON.stringify(send.request)}::jsonb, ${send.sendAt}, ${send.now})`).pipe(Effect.asVoid)
