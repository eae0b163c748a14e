/**
 * Raw inbound messages in PostgreSQL: committed before the listener answers 250. Messages that
 * arrive together are committed together (group commit, src/lib/group-commit.ts): one multi-row
 * INSERT — a single statement, so a single commit — per group, and each session's 250 waits for the
 * commit that holds its own row. A quiet listener still writes each message at once.
 * While this replica's processor runs, a message held whole is committed leased to it and handed
 * over in memory once committed (processor/handoff.ts): it is not claimed and read back.
 * A message larger than a chunk is not held whole: its chunks are staged in inbound_chunks as they
 * arrive and moved into its row by one statement at the end (migration 0015).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Exit } from "effect"
import { newId } from "../../lib/ids.ts"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { makeGroupCommit } from "../../lib/group-commit.ts"
import { type HandoffTicket, INBOUND_LEASE_MS, InboundHandoff } from "../processor/handoff.ts"
import { INBOUND_CHANNEL } from "../processor/Processor.ts"

export interface ReceivedEnvelope {
  readonly remoteAddress: string
  readonly helo: string | null
  readonly mailFrom: string
  readonly rcptTo: ReadonlyArray<string>
}

type InboundRow = {
  readonly id: string
  readonly received_at: Date
  readonly remote_address: string
  readonly helo: string | null
  readonly mail_from: string
  /** JSON text; the jsonb column types the parameter. */
  readonly rcpt_to: string
  readonly size: number
  readonly raw: Buffer
  readonly next_attempt_at: Date
  /** Set when the row is committed leased to this replica's processor (handed over in memory: handoff.ts). */
  readonly lease_owner: string | null
}

/** A row to commit, and the handoff room taken for it (none: committed unleased, for a claim). */
interface Pending {
  readonly row: InboundRow
  readonly rcptTo: ReadonlyArray<string>
  readonly ticket: HandoffTicket | undefined
}

/**
 * Rows per INSERT, and bytes: the statement carries a copy of every message it holds, so a few
 * large messages are split into several statements rather than one of hundreds of MB.
 */
const GROUP_ROWS = 64
const GROUP_BYTES = 16 * 1024 * 1024
/**
 * One group in flight: what arrives during a commit waits for it and goes in the next group, so
 * groups are larger and statements fewer. PostgreSQL already flushes the WAL of concurrent
 * commits together, so a second writer bought no overlap. Measured with bench:inbound (4 runs,
 * alternating): acceptance alone 870 → 1,036 msg/s, 0.68 → 0.56 ms of appliance CPU and 0.40 →
 * 0.29 ms of PostgreSQL CPU per message; with the processor on, a little better still.
 */
const WRITERS = 1

export class InboundStore extends Effect.Service<InboundStore>()("herald/InboundStore", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const signal = yield* QueueSignal
    const handoff = yield* InboundHandoff

    /**
     * One committed INSERT for the group; then the leased rows are handed to the processor, and it
     * is woken. Only rows left for a claim concern other replicas (the NOTIFY of `wake`).
     */
    const insertGroup = (items: ReadonlyArray<Pending>) =>
      sql`INSERT INTO inbound_messages ${sql.insert(items.map((item) => item.row))}`.pipe(
        Effect.zipRight(Effect.suspend(() => {
          let unleased = false
          for (const { row, rcptTo, ticket } of items) {
            if (ticket === undefined) unleased = true
            else handoff.handOver(ticket, { id: row.id, rcpt_to: rcptTo, mail_from: row.mail_from, raw: row.raw, attempts: 0 })
          }
          return unleased ? signal.wake(INBOUND_CHANNEL) : signal.wakeLocal(INBOUND_CHANNEL)
        })),
        Effect.as(items.map((item) => item.row.id))
      )
    const group = yield* makeGroupCommit({
      write: insertGroup,
      maxItems: GROUP_ROWS,
      maxBytes: GROUP_BYTES,
      sizeOf: (item: Pending) => item.row.size,
      writers: WRITERS
    })

    /** Resumes with the message's id once its row is committed. */
    const store = (envelope: ReceivedEnvelope, raw: Buffer) =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        const ticket = handoff.reserve(raw.length)
        const submitted = group.submit({
          row: {
            id: newId("inb"),
            received_at: new Date(now),
            remote_address: envelope.remoteAddress,
            helo: envelope.helo,
            mail_from: envelope.mailFrom,
            rcpt_to: JSON.stringify(envelope.rcptTo),
            size: raw.length,
            raw,
            next_attempt_at: new Date(ticket === undefined ? now : now + INBOUND_LEASE_MS),
            lease_owner: ticket?.owner ?? null
          },
          rcptTo: envelope.rcptTo,
          ticket
        })
        // Not committed (or the session went away first): the room goes back; a committed row's lease ends on its own.
        return ticket === undefined
          ? submitted
          : Effect.onExit(submitted, (exit) => Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => handoff.giveBack(ticket)))
      })

    /**
     * One chunk of a large message, staged while the rest is still arriving: its own short INSERT
     * (a connection is borrowed per chunk, not for the whole transfer).
     */
    const stageChunk = (id: string, seq: number, data: Buffer) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`INSERT INTO inbound_chunks ${sql.insert({ message_id: id, seq, data, staged_at: now })}`
      })

    /**
     * The staged chunks become the message's row in one statement — reassembled by PostgreSQL, in
     * order, and deleted — committed when this resumes. The row is written only if the chunks add
     * up to the `size` the listener counted, so a lost chunk fails the transfer (451) rather than
     * store a truncated message.
     */
    const storeStaged = (id: string, envelope: ReceivedEnvelope, size: number) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* sql<{ id: string }>`
          WITH parts AS (DELETE FROM inbound_chunks WHERE message_id = ${id} RETURNING seq, data)
          INSERT INTO inbound_messages (id, received_at, remote_address, helo, mail_from, rcpt_to, size, raw, next_attempt_at)
          SELECT ${id}, ${now}, ${envelope.remoteAddress}, ${envelope.helo}, ${envelope.mailFrom}, ${JSON.stringify(envelope.rcptTo)}::jsonb,
            ${size}, string_agg(data, ''::bytea ORDER BY seq), ${now}
          FROM parts
          HAVING coalesce(sum(length(data)), 0) = ${size}
          RETURNING id`
        if (rows.length === 0) return yield* Effect.dieMessage(`the staged chunks of ${id} do not add up to ${size} bytes`)
        yield* signal.wake(INBOUND_CHANNEL)
        return id
      })

    /** Drops what was staged for a transfer that will not be stored (refused, or the sender went away). */
    const discardStaged = (id: string) => sql`DELETE FROM inbound_chunks WHERE message_id = ${id}`.pipe(Effect.asVoid)

    return { store, stageChunk, storeStaged, discardStaged, newMessageId: () => newId("inb") } as const
  })
}) {}
