/**
 * The outbound queue in PostgreSQL: one row per recipient delivery (the rows the sending API
 * commits with its 202). Claims take due rows with FOR UPDATE SKIP LOCKED; the lease *is* the row's
 * next_attempt_at, pushed forward by the claim and refreshed while the work runs, so a crashed
 * replica's rows simply fall due again when its lease runs out — nothing else needs to notice.
 *
 * Claim plan (checked in test/mta/queue-plan.test.ts): an index scan of the partial index
 * deliveries_due, stopping after LIMIT rows, whatever the queue's length; the claimed rows are then
 * updated through the primary key (`id = ANY(ARRAY(…))`). Joining the subquery back instead
 * (`UPDATE … FROM (…) due WHERE d.id = due.id`) let the planner pick a hash join over a sequential
 * scan of every delivery, history included, once the table held 10,000 rows.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { emitEvent } from "../../lib/outbox.ts"
import { suppressAutomatically } from "../../platform/suppressions/suppress.ts"

export interface ClaimedDelivery {
  readonly id: string
  readonly message_id: string
  readonly account_id: string
  readonly key_id: string
  readonly recipient: string
  readonly recipient_domain: string
  readonly attempts: number
  readonly created_at: Date
}

export interface MessageForDelivery {
  readonly id: string
  readonly request_id: string
  readonly from_domain: string
  readonly subject: string
  readonly content: unknown
  readonly created_at: Date
}

/** What the classification of an attempt decided, ready to be written. */
export type Outcome =
  | { readonly _tag: "sent"; readonly code: number; readonly status: string; readonly reply: string }
  | {
    readonly _tag: "bounced"
    readonly code: number | null
    readonly status: string
    readonly category: "hard" | "soft"
    readonly reply: string
    readonly suppress: boolean
  }
  | { readonly _tag: "deferred"; readonly code: number | null; readonly status: string; readonly reply: string; readonly retryAt: Date }
  | { readonly _tag: "failed"; readonly code: number | null; readonly status: string; readonly reply: string }


export class DeliveryQueue extends Effect.Service<DeliveryQueue>()("herald/DeliveryQueue", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Claims up to `limit` due deliveries for `owner`, leased until `leaseUntil`. */
    const claim = (owner: string, now: Date, leaseUntil: Date, limit: number, skipDomains: ReadonlyArray<string>) =>
      sql<ClaimedDelivery>`
        UPDATE deliveries d SET lease_owner = ${owner}, next_attempt_at = ${leaseUntil}
        WHERE d.id = ANY(ARRAY(
          SELECT id FROM deliveries
          WHERE state IN ('queued', 'deferred') AND next_attempt_at <= ${now}
            ${skipDomains.length === 0 ? sql`` : sql`AND recipient_domain NOT IN ${sql.in(skipDomains)}`}
          ORDER BY next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ))
        RETURNING d.id, d.message_id, d.account_id, d.key_id, d.recipient, d.recipient_domain, d.attempts, d.created_at`

    /** Keeps the lease of work still in hand (a fiber calls this well before the lease ends). */
    const extend = (owner: string, ids: ReadonlyArray<string>, leaseUntil: Date) =>
      ids.length === 0
        ? Effect.void
        : sql`UPDATE deliveries SET next_attempt_at = ${leaseUntil}
            WHERE lease_owner = ${owner} AND id IN ${sql.in(ids)} AND state IN ('queued', 'deferred')`.pipe(Effect.asVoid)

    /** Gives unfinished work back at shutdown: due again at once, for any replica. */
    const release = (owner: string, ids: ReadonlyArray<string>, now: Date) =>
      ids.length === 0
        ? Effect.void
        : sql`UPDATE deliveries SET next_attempt_at = ${now}, lease_owner = NULL
            WHERE lease_owner = ${owner} AND id IN ${sql.in(ids)} AND state IN ('queued', 'deferred')`.pipe(Effect.asVoid)

    const messages = (ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<MessageForDelivery>)
        : sql<MessageForDelivery>`
            SELECT id, request_id, from_domain, subject, content, created_at FROM messages WHERE id IN ${sql.in(ids)}`

    const event = (d: ClaimedDelivery, name: string, payload: Record<string, unknown>, now: Date) =>
      emitEvent({ accountId: d.account_id, keyId: d.key_id, event: name, payload, at: now })

    /**
     * Writes an attempt's outcome with its event in one transaction (the outbox rule). Only the
     * lease owner may write: a row whose lease was lost to another replica is left alone.
     */
    const complete = (owner: string, d: ClaimedDelivery, m: MessageForDelivery, outcome: Outcome, now: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        const final = outcome._tag !== "deferred"
        const updated = yield* sql`
          UPDATE deliveries SET
            state = ${outcome._tag}, attempts = attempts + 1, last_code = ${outcome.code},
            last_status = ${outcome.status}, last_reply = ${outcome.reply.slice(0, 1000)}, updated_at = ${now},
            next_attempt_at = ${outcome._tag === "deferred" ? outcome.retryAt : now},
            lease_owner = NULL, completed_at = ${final ? now : null}
          WHERE id = ${d.id} AND lease_owner = ${owner} AND state IN ('queued', 'deferred')
          RETURNING id`
        if (updated.length === 0) return false
        const common = { request_id: m.request_id, to: [d.recipient], subject: m.subject, message_id: m.id }
        switch (outcome._tag) {
          case "sent":
            yield* event(d, "email.sent", common, now)
            break
          case "failed":
            yield* event(d, "email.failed", { ...common, error: outcome.reply }, now)
            break
          case "bounced":
            yield* event(d, "email.bounced", {
              recipient: d.recipient,
              status: outcome.status,
              category: outcome.category,
              diagnostic: outcome.reply,
              message_id: m.id
            }, now)
            if (outcome.suppress) {
              yield* suppressAutomatically(d.account_id, d.recipient, "bounce", `smtp ${outcome.status}`, now)
            }
            break
          case "deferred":
            break
        }
        return true
      }))

    return { claim, extend, release, messages, complete } as const
  })
}) {}
