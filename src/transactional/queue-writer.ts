/**
 * Writes accepted personalizations into the queue: one `messages` row per personalization and
 * one `deliveries` row per recipient, due at once. Called inside the send's transaction (the API)
 * or the release transaction (the scheduler), so the rows and everything else commit together.
 * Both inserts are one statement (the deliveries' foreign key is checked at its end): on its own,
 * outside a transaction, it is a send's single durable commit in one round trip.
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

/** PostgreSQL takes at most 65,535 parameters per statement; rows are written in chunks below it. */
const MAX_PARAMETERS = 60_000
const COLUMNS = 11

export const writeQueue = (ctx: QueueContext, messages: ReadonlyArray<QueuedMessage>) =>
  Effect.gen(function*() {
    if (messages.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const messageRows = messages.map((m) => {
      const content = JSON.stringify(m.content)
      return {
        id: m.messageId,
        account_id: ctx.accountId,
        key_id: ctx.keyId,
        request_id: ctx.requestId,
        personalization_index: m.personalizationIndex,
        from_email: ctx.fromEmail,
        from_domain: domainOf(ctx.fromEmail),
        subject: m.subject,
        content,
        // What the MTA's memory budget counts (src/mta/message-budget.ts).
        content_bytes: Buffer.byteLength(content),
        created_at: ctx.now
      }
    })
    const deliveryRows = messages.flatMap((m) =>
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
    )
    if ((messageRows.length + deliveryRows.length) * COLUMNS <= MAX_PARAMETERS) {
      return yield* sql`WITH queued_messages AS (INSERT INTO messages ${sql.insert(messageRows)})
        INSERT INTO deliveries ${sql.insert(deliveryRows)}`
    }
    // A request with very many recipients: several statements, still one transaction.
    const perStatement = Math.floor(MAX_PARAMETERS / COLUMNS)
    yield* sql.withTransaction(Effect.gen(function*() {
      for (let i = 0; i < messageRows.length; i += perStatement) {
        yield* sql`INSERT INTO messages ${sql.insert(messageRows.slice(i, i + perStatement))}`
      }
      for (let i = 0; i < deliveryRows.length; i += perStatement) {
        yield* sql`INSERT INTO deliveries ${sql.insert(deliveryRows.slice(i, i + perStatement))}`
      }
    }))
  })
