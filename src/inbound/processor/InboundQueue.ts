/**
 * The inbound messages waiting to be understood, as a queue in PostgreSQL (the outbound queue's
 * discipline): due rows are claimed with FOR UPDATE SKIP LOCKED and the lease *is* the row's
 * next_attempt_at, so a replica that dies mid-parse simply lets the row fall due again. A message
 * that keeps failing is parked as `failed` with its error and its raw bytes — never lost.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface ClaimedInbound {
  readonly id: string
  readonly rcpt_to: ReadonlyArray<string>
  readonly mail_from: string
  readonly raw: Buffer | null
  readonly attempts: number
}

/** Attempts before a message is parked as failed; the pause grows 30 s, 2 min, 8 min, 32 min. */
export const MAX_ATTEMPTS = 5
export const retryDelayMs = (attempts: number) => 30_000 * 4 ** Math.max(0, attempts - 1)

export class InboundQueue extends Effect.Service<InboundQueue>()("herald/InboundQueue", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const claim = (owner: string, now: Date, leaseUntil: Date, limit: number) =>
      sql<ClaimedInbound>`
        UPDATE inbound_messages m SET lease_owner = ${owner}, next_attempt_at = ${leaseUntil}
        FROM (
          SELECT id FROM inbound_messages
          WHERE state = 'received' AND next_attempt_at <= ${now}
          ORDER BY next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ) due
        WHERE m.id = due.id
        RETURNING m.id, m.rcpt_to, m.mail_from, m.raw, m.attempts`

    /**
     * Marks a message understood; `effects` runs in the same transaction (the outbox rule). Only
     * the lease owner may: undefined when the lease was lost to another replica.
     */
    const complete = <A, E, R>(
      owner: string,
      id: string,
      kind: string,
      result: unknown,
      error: string | null,
      now: Date,
      effects: Effect.Effect<A, E, R>
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const updated = yield* sql`
          UPDATE inbound_messages SET state = 'processed', kind = ${kind}, result = ${JSON.stringify(result)}::jsonb,
            error = ${error}, attempts = attempts + 1, processed_at = ${now}, lease_owner = NULL
          WHERE id = ${id} AND lease_owner = ${owner} AND state = 'received'
          RETURNING id`
        if (updated.length === 0) return undefined
        return yield* effects
      }))

    /** A failed attempt: due again later, or parked as `failed` with its error after the last one. */
    const fail = (owner: string, id: string, attempts: number, error: string, now: Date) => {
      const parked = attempts + 1 >= MAX_ATTEMPTS
      return sql`
        UPDATE inbound_messages SET attempts = attempts + 1, error = ${error.slice(0, 2000)}, lease_owner = NULL,
          state = ${parked ? "failed" : "received"},
          next_attempt_at = ${new Date(now.getTime() + retryDelayMs(attempts + 1))}
        WHERE id = ${id} AND lease_owner = ${owner} AND state = 'received'`.pipe(Effect.asVoid)
    }

    /** Drops the raw bytes of handled messages older than the retention period; the row stays. */
    const prune = (before: Date) =>
      sql<{ id: string }>`
        UPDATE inbound_messages SET raw = NULL
        WHERE raw IS NOT NULL AND received_at < ${before} AND state <> 'received'
        RETURNING id`.pipe(Effect.map((rows) => rows.length))

    return { claim, complete, fail, prune } as const
  })
}) {}
