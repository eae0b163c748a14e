/**
 * Writes accepted personalizations into the queue: one `messages` row per personalization and
 * one `deliveries` row per recipient, due at once. `writeQueue` runs inside a caller's transaction
 * (the scheduler's release) or alone; `QueueWriter` is the send endpoint's: the rows of sends that
 * arrive together are one statement (group commit, src/lib/group-commit.ts), and each 202 waits for
 * the commit that holds its own rows. Both inserts are one statement (the deliveries' foreign key
 * is checked at its end), so a group is a single durable commit in one round trip.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { makeGroupCommit } from "../lib/group-commit.ts"
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

/** One send's rows. */
export interface QueueWrite {
  readonly context: QueueContext
  readonly messages: ReadonlyArray<QueuedMessage>
}

/** PostgreSQL takes at most 65,535 parameters per statement; rows are written in chunks below it. */
const MAX_PARAMETERS = 60_000
const COLUMNS = 11

const messageRowsOf = ({ context: ctx, messages }: QueueWrite) =>
  messages.map((m) => {
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

const deliveryRowsOf = ({ context: ctx, messages }: QueueWrite) =>
  messages.flatMap((m) =>
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

/** The statement parameters a write needs: what bounds a group. */
const parametersOf = (write: QueueWrite) =>
  (write.messages.length + write.messages.reduce((n, m) => n + m.recipients.length, 0)) * COLUMNS

/** Writes the rows of several sends: one statement while they fit in its parameters, else chunks in one transaction. */
const writeAll = (writes: ReadonlyArray<QueueWrite>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const messageRows = writes.flatMap(messageRowsOf)
    const deliveryRows = writes.flatMap(deliveryRowsOf)
    if (messageRows.length === 0) return
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

export const writeQueue = (context: QueueContext, messages: ReadonlyArray<QueuedMessage>) => writeAll([{ context, messages }])

/** Sends per group, and one group in flight (as the MX listener's store: a second writer bought no overlap). */
const GROUP_SENDS = 64

export class QueueWriter extends Effect.Service<QueueWriter>()("herald/QueueWriter", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const group = yield* makeGroupCommit({
      write: (writes: ReadonlyArray<QueueWrite>) =>
        writeAll(writes).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.as(writes.map(() => undefined))),
      maxItems: GROUP_SENDS,
      maxBytes: MAX_PARAMETERS,
      sizeOf: parametersOf
    })
    /**
     * Resumes once the send's rows are committed (with whatever else was written in the same group).
     * A send with nothing to queue (every recipient suppressed) joins no group.
     */
    const write = (queued: QueueWrite) => queued.messages.length === 0 ? Effect.void : group.submit(queued)
    return { write } as const
  })
}) {}
