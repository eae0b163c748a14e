/**
 * Writes accepted personalizations into the queue: one `messages` row per personalization and
 * one `deliveries` row per recipient, due at once. Called inside the send's transaction (the API)
 * or the release transaction (the scheduler), so the rows and everything else commit together.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { domainOf } from "../lib/email.ts"
import { newId } from "../lib/ids.ts"
import type { Recipient } from "./plan-items.ts"

export interface QueuedMessage {
  readonly messageId: string
  readonly personalizationIndex: number
  readonly subject: string
  /** The canonical single-personalization request, composed into MIME at delivery time. */
  readonly content: unknown
  readonly recipients: ReadonlyArray<Recipient>
}

export interface QueueContext {
  readonly accountId: string
  readonly keyId: string
  readonly requestId: string
  readonly fromEmail: string
  readonly now: Date
}

export const writeQueue = (ctx: QueueContext, messages: ReadonlyArray<QueuedMessage>) =>
  Effect.gen(function*() {
    if (messages.length === 0) return
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO messages ${
      sql.insert(messages.map((m) => ({
        id: m.messageId,
        account_id: ctx.accountId,
        key_id: ctx.keyId,
        request_id: ctx.requestId,
        personalization_index: m.personalizationIndex,
        from_email: ctx.fromEmail,
        from_domain: domainOf(ctx.fromEmail),
        subject: m.subject,
        content: JSON.stringify(m.content),
        created_at: ctx.now
      })))
    }`
    yield* sql`INSERT INTO deliveries ${
      sql.insert(messages.flatMap((m) =>
        m.recipients.map((r) => ({
          id: newId("dlv"),
          message_id: m.messageId,
          account_id: ctx.accountId,
          key_id: ctx.keyId,
          recipient: r.email,
          recipient_domain: domainOf(r.email),
          recipient_kind: r.kind,
          next_attempt_at: ctx.now,
          created_at: ctx.now,
          updated_at: ctx.now
        }))
      ))
    }`
  })
