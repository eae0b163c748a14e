/**
 * Writes accepted personalizations into the queue: one `message_contents` row per request (the
 * part of the stored message its personalizations share, stringified once), one `messages` row
 * per personalization and one `deliveries` row per recipient, due at once. `writeQueue` runs inside a caller's transaction
 * (the scheduler's release) or alone; `QueueWriter` is the send endpoint's: the rows of sends that
 * arrive together are one statement (group commit, src/lib/group-commit.ts), and each 202 waits for
 * the commit that holds its own rows. The inserts are one statement (the foreign keys are checked
 * at its end), so a group is a single durable commit in one round trip.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { makeGroupCommit } from "../../lib/group-commit.ts"
import { domainOf } from "../../lib/email.ts"
import { newId } from "../../lib/ids.ts"
import { type StoredMessage, storedParts } from "./StoredMessage.ts"

/** One recipient of a queued message: a `deliveries` row (acceptance's plan items are of this shape). */
export interface QueuedRecipient {
  readonly email: string
  readonly kind: "to" | "cc" | "bcc"
}

export interface QueuedMessage {
  readonly messageId: string
  readonly personalizationIndex: number
  readonly subject: string
  /**
   * What the MTA composes at delivery. Messages whose `message` part is the same object (the
   * personalizations of one request) share one stored copy of it.
   */
  readonly stored: StoredMessage
  readonly recipients: ReadonlyArray<QueuedRecipient>
  /**
   * The `message_contents` row that already holds `stored.message` (`storeSharedContent`): a
   * campaign writes its content once when sending starts and its batches of messages reference it.
   */
  readonly sharedContent?: SharedContent | undefined
}

export interface SharedContent {
  readonly id: string
  readonly bytes: number
}

export interface QueueContext {
  /** Both null for system mail only (the `system` form, migrations/0042_system_messages.sql). */
  readonly accountId: string | null
  readonly keyId: string | null
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
/** The most columns of a row of any of the three tables (messages). */
const COLUMNS = 15

/** The rows of several sends: each distinct shared part once, then the messages that reference it, then the deliveries. */
const rowsOf = (writes: ReadonlyArray<QueueWrite>) => {
  const contents: Array<Record<string, unknown>> = []
  const messages: Array<Record<string, unknown>> = []
  const deliveries: Array<Record<string, unknown>> = []
  for (const { context: ctx, messages: queued } of writes) {
    // By identity: the forms of one request reference one shared object (StoredMessage.structuredMessages).
    const stored = new Map<object, { readonly id: string; readonly bytes: number }>()
    for (const m of queued) {
      const { own, shared } = storedParts(m.stored)
      let content = m.sharedContent ?? stored.get(shared)
      if (content === undefined) {
        const json = JSON.stringify(shared)
        content = { id: newId("mct"), bytes: Buffer.byteLength(json) }
        stored.set(shared, content)
        contents.push({ id: content.id, account_id: ctx.accountId, content: json, created_at: ctx.now })
      }
      const ownJson = JSON.stringify(own)
      messages.push({
        id: m.messageId,
        account_id: ctx.accountId,
        key_id: ctx.keyId,
        request_id: ctx.requestId,
        personalization_index: m.personalizationIndex,
        from_email: ctx.fromEmail,
        from_domain: domainOf(ctx.fromEmail),
        subject: m.subject,
        content: ownJson,
        content_id: content.id,
        origin: m.stored.origin,
        channel: m.stored.channel,
        campaign_id: m.stored._tag === "campaign" ? m.stored.campaign_id : null,
        // What the MTA reads for an attempt, both parts: its memory budget counts it (src/mta/message-budget.ts).
        content_bytes: Buffer.byteLength(ownJson) + content.bytes,
        created_at: ctx.now
      })
      for (const r of m.recipients) {
        deliveries.push({
          id: newId("dlv"),
          message_id: m.messageId,
          account_id: ctx.accountId,
          key_id: ctx.keyId,
          recipient: r.email,
          recipient_domain: domainOf(r.email),
          recipient_kind: r.kind,
          channel: m.stored.channel,
          next_attempt_at: ctx.now,
          created_at: ctx.now,
          updated_at: ctx.now
        })
      }
    }
  }
  return { contents, messages, deliveries }
}

/** The statement parameters a write needs: what bounds a group. */
const parametersOf = (write: QueueWrite) =>
  (2 * write.messages.length + write.messages.reduce((n, m) => n + m.recipients.length, 0)) * COLUMNS

/** Writes the rows of several sends: one statement while they fit in its parameters, else chunks in one transaction. */
export const writeAll = (writes: ReadonlyArray<QueueWrite>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = rowsOf(writes)
    if (rows.messages.length === 0) return
    if ((rows.contents.length + rows.messages.length + rows.deliveries.length) * COLUMNS <= MAX_PARAMETERS) {
      // Messages whose shared part is already stored (a campaign's batches) bring no content row.
      const contents = rows.contents.length === 0 ? sql`` : sql`queued_contents AS (INSERT INTO message_contents ${sql.insert(rows.contents)}),`
      return yield* sql`WITH ${contents}
        queued_messages AS (INSERT INTO messages ${sql.insert(rows.messages)})
        INSERT INTO deliveries ${sql.insert(rows.deliveries)}`
    }
    // A request with very many recipients: several statements, still one transaction.
    const perStatement = Math.floor(MAX_PARAMETERS / COLUMNS)
    yield* sql.withTransaction(Effect.gen(function*() {
      for (const [table, list] of [["message_contents", rows.contents], ["messages", rows.messages], ["deliveries", rows.deliveries]] as const) {
        for (let i = 0; i < list.length; i += perStatement) {
          yield* sql`INSERT INTO ${sql(table)} ${sql.insert(list.slice(i, i + perStatement))}`
        }
      }
    }))
  })

/**
 * Stores the shared part of messages to come (a campaign's content, once when its sending starts)
 * and answers the reference its messages carry (`QueuedMessage.sharedContent`).
 */
export const storeSharedContent = (accountId: string, shared: object, now: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const json = JSON.stringify(shared)
    const content: SharedContent = { id: newId("mct"), bytes: Buffer.byteLength(json) }
    yield* sql`INSERT INTO message_contents ${sql.insert({ id: content.id, account_id: accountId, content: json, created_at: now })}`
    return content
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
