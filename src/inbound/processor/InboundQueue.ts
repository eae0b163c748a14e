/**
 * The inbound messages waiting to be understood, as a queue in PostgreSQL (the outbound queue's
 * discipline): due rows are claimed with FOR UPDATE SKIP LOCKED and the lease *is* the row's
 * next_attempt_at, so a replica that dies mid-parse simply lets the row fall due again. A message
 * that keeps failing is parked as `failed` with its error and its raw bytes — never lost.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Understood } from "../parse/types.ts"

export interface ClaimedInbound {
  readonly id: string
  readonly rcpt_to: ReadonlyArray<string>
  readonly mail_from: string
  readonly raw: Buffer | null
  readonly attempts: number
}

/** A claimed message and what the parsers made of it. */
export interface Parsed {
  readonly message: ClaimedInbound
  readonly understood: Understood
  readonly now: Date
}

/** An understood message, ready to be marked processed together with what it changes. */
export interface Completion<A, E, R> {
  readonly id: string
  readonly kind: string
  /** The operator's view of the result (parse-output.ts), kept on the row. */
  readonly result: unknown
  readonly error: string | null
  readonly processedAt: Date
  /** What the message changes (bounce, complaint, DMARC effects), run in the completing transaction; null: nothing. */
  readonly effects: Effect.Effect<A, E, R> | null
}

/** Attempts before a message is parked as failed; the pause grows 30 s, 2 min, 8 min, 32 min. */
export const MAX_ATTEMPTS = 5
export const retryDelayMs = (attempts: number) => 30_000 * 4 ** Math.max(0, attempts - 1)

export class InboundQueue extends Effect.Service<InboundQueue>()("herald/InboundQueue", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Leases due messages, oldest first: at most `limit` of them and, past the first, no more than
     * `maxBytes` of raw bytes in all — the claimed messages are held in memory until parsed, and
     * 32 messages of 25 MB must not be claimed at once. Rows locked here but left out by the byte
     * budget are released when the statement ends.
     */
    const claim = (owner: string, now: Date, leaseUntil: Date, limit: number, maxBytes = Number.MAX_SAFE_INTEGER) =>
      sql<ClaimedInbound>`
        WITH due AS (
          SELECT id, size, next_attempt_at FROM inbound_messages
          WHERE state = 'received' AND next_attempt_at <= ${now}
          ORDER BY next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ), picked AS (
          SELECT id FROM (SELECT id, sum(size) OVER (ORDER BY next_attempt_at, id) - size AS bytes_before FROM due) d
          WHERE bytes_before < ${maxBytes}
        )
        UPDATE inbound_messages m SET lease_owner = ${owner}, next_attempt_at = ${leaseUntil}
        FROM picked
        WHERE m.id = picked.id
        RETURNING m.id, m.rcpt_to, m.mail_from, m.raw, m.attempts`

    /**
     * Marks a group of understood messages processed with one UPDATE. Only the lease owner may: a
     * message whose lease was lost to another replica is left alone, and its result is undefined.
     * When some message has `effects`, they run in the transaction of that UPDATE (the outbox
     * rule), each only if its message was still this replica's; one failing effect rolls back the
     * whole group, and the caller then completes each message alone. A group without effects is
     * the UPDATE alone: one statement, no transaction around it.
     */
    const completeGroup = <A, E, R>(owner: string, completions: ReadonlyArray<Completion<A, E, R>>) => {
      const values = completions.map((c) => ({
        id: c.id,
        kind: c.kind,
        result: JSON.stringify(c.result),
        error: c.error,
        processed_at: c.processedAt
      }))
      const markProcessed = sql<{ id: string }>`
        UPDATE inbound_messages m SET state = 'processed', kind = v.kind, result = v.result::jsonb, error = v.error,
          attempts = m.attempts + 1, processed_at = v.processed_at::timestamptz, lease_owner = NULL
        FROM ${sql.updateValues(values, "v")}
        WHERE m.id = v.id AND m.lease_owner = ${owner} AND m.state = 'received'
        RETURNING m.id`
      if (completions.every((c) => c.effects === null)) {
        return markProcessed.pipe(Effect.as(completions.map((): A | undefined => undefined)))
      }
      return sql.withTransaction(Effect.gen(function*() {
        const mine = new Set((yield* markProcessed).map((row) => row.id))
        const outcomes: Array<A | undefined> = []
        for (const c of completions) outcomes.push(c.effects !== null && mine.has(c.id) ? yield* c.effects : undefined)
        return outcomes
      }))
    }

    /** A failed attempt: due again later, or parked as `failed` with its error after the last one. */
    const fail = (owner: string, id: string, attempts: number, error: string, now: Date) => {
      const parked = attempts + 1 >= MAX_ATTEMPTS
      return sql`
        UPDATE inbound_messages SET attempts = attempts + 1, error = ${error.slice(0, 2000)}, lease_owner = NULL,
          state = ${parked ? "failed" : "received"},
          next_attempt_at = ${new Date(now.getTime() + retryDelayMs(attempts + 1))}
        WHERE id = ${id} AND lease_owner = ${owner} AND state = 'received'`.pipe(Effect.asVoid)
    }

    /**
     * A failure that will always fail — the parsers refused these bytes (malformed, over a limit) or
     * ran out of memory on them — parked as `failed` at once, with its error and its bytes: another
     * attempt would cost the same and end the same way.
     */
    const park = (owner: string, id: string, kind: string | null, error: string) =>
      sql`
        UPDATE inbound_messages SET attempts = attempts + 1, error = ${error.slice(0, 2000)}, lease_owner = NULL,
          state = 'failed', kind = ${kind}
        WHERE id = ${id} AND lease_owner = ${owner} AND state = 'received'`.pipe(Effect.asVoid)

    /** Gives leased messages not started back (the processor stopping): due at once, for any replica. */
    const release = (owner: string, ids: ReadonlyArray<string>, now: Date) =>
      ids.length === 0 ? Effect.void : sql`
        UPDATE inbound_messages SET lease_owner = NULL, next_attempt_at = ${now}
        WHERE id = ANY(${ids}::text[]) AND lease_owner = ${owner} AND state = 'received'`.pipe(Effect.asVoid)

    /**
     * Drops the raw bytes of handled messages older than the retention period (the row stays), and
     * the staged chunks of messages whose transfer never finished (the listener died mid-DATA).
     */
    const prune = (before: Date, stagedBefore: Date = before) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ id: string }>`
          UPDATE inbound_messages SET raw = NULL
          WHERE raw IS NOT NULL AND received_at < ${before} AND state <> 'received'
          RETURNING id`
        yield* sql`DELETE FROM inbound_chunks WHERE staged_at < ${stagedBefore}`
        return rows.length
      })

    return { claim, completeGroup, fail, park, release, prune } as const
  })
}) {}
