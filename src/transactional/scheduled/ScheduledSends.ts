/**
 * Scheduled sends (POST /v1/mail/send with send_at): reading, cancelling, and releasing them into
 * the queue at their moment. Release re-evaluates permissions (spec: "Scheduled transactional
 * send"): a suspended or paused account, a sender domain no longer allowed (grace expired), or a
 * quota now exhausted discards the send; the discard is recorded on the row and as one email.failed
 * per recipient.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect, Option } from "effect"
import { emitEvent } from "../../events/outbox.ts"
import { EmailFailed } from "../../events/schema.ts"
import { AccountLimits } from "../../platform/usage/AccountLimits.ts"
import { reserveQuota } from "../../platform/usage/Quota.ts"
import { quotaCountOf } from "../../lib/simulator.ts"
import { Accept, type CanonicalRequest, recipientsOf } from "../accept.ts"
import { structuredMessages } from "../../mta/queue/StoredMessage.ts"
import { writeQueue } from "../../mta/queue/enqueue.ts"
import { QueueSignal } from "../../db/QueueSignal.ts"

export interface ScheduledView {
  readonly id: string
  readonly status: "scheduled" | "released" | "cancelled" | "discarded"
  readonly send_at: string
  readonly message_id: string
  readonly created_at: string
  readonly reason: string | null
}

interface Row {
  readonly id: string
  readonly account_id: string
  readonly key_id: string
  readonly request_id: string
  readonly message_id: string
  readonly request: CanonicalRequest
  readonly send_at: Date
  readonly state: ScheduledView["status"]
  readonly reason: string | null
  readonly created_at: Date
}

export class ScheduledNotFound extends Data.TaggedError("ScheduledNotFound")<{ readonly id: string }> {}
export class ScheduledNotCancellable extends Data.TaggedError("ScheduledNotCancellable")<{
  readonly id: string
  readonly status: string
}> {}

const view = (row: Row): ScheduledView => ({
  id: row.id,
  status: row.state,
  send_at: row.send_at.toISOString(),
  message_id: row.message_id,
  created_at: row.created_at.toISOString(),
  reason: row.reason
})

/** How long a replica holds a claimed scheduled send before another may take it. */
const LEASE_MS = 60_000

export class ScheduledSends extends Effect.Service<ScheduledSends>()("herald/ScheduledSends", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accept = yield* Accept
    const limitsOf = yield* AccountLimits
    const signal = yield* QueueSignal

    const find = (accountId: string, id: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT * FROM scheduled_sends WHERE id = ${id} AND account_id = ${accountId}`
        if (rows[0] === undefined) return yield* new ScheduledNotFound({ id })
        return rows[0]
      })

    const get = (accountId: string, id: string) => Effect.map(find(accountId, id), view)

    const cancel = (accountId: string, id: string, now: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`
          UPDATE scheduled_sends SET state = 'cancelled', finished_at = ${now}
          WHERE id = ${id} AND account_id = ${accountId} AND state = 'scheduled' RETURNING *`
        if (rows[0] !== undefined) return view(rows[0])
        const existing = yield* find(accountId, id)
        return yield* new ScheduledNotCancellable({ id, status: existing.state })
      })

    const discard = (row: Row, reason: string, now: Date) =>
      Effect.gen(function*() {
        yield* sql`UPDATE scheduled_sends SET state = 'discarded', reason = ${reason}, finished_at = ${now}
          WHERE id = ${row.id}`
        // One event per recipient delivery (to, cc and bcc alike), `to` holding that recipient.
        const seen = new Set<string>()
        for (const p of row.request.personalizations) {
          for (const recipient of recipientsOf(p)) {
            if (seen.has(recipient.email.toLowerCase())) continue
            seen.add(recipient.email.toLowerCase())
            yield* emitEvent({
              accountId: row.account_id,
              keyId: row.key_id,
              event: EmailFailed.make({
                request_id: row.request_id,
                to: [recipient.email],
                subject: p.subject ?? row.request.subject,
                message_id: row.message_id,
                error: `scheduled send discarded: ${reason}`
              }),
              at: now
            })
          }
        }
        yield* Effect.logInfo("scheduled send discarded").pipe(Effect.annotateLogs({ scheduled_id: row.id, reason }))
      })

    /** Releases one claimed row inside the caller's transaction. */
    const release = (row: Row, now: Date) =>
      Effect.gen(function*() {
        const input = {
          accountId: row.account_id,
          keyId: row.key_id,
          requestId: row.request_id,
          now,
          sandbox: false,
          request: row.request,
          rawBody: "",
          idempotencyKey: Option.none(),
          maxRecipients: Number.MAX_SAFE_INTEGER
        }
        const limits = yield* limitsOf.of(row.account_id, now)
        const refused = yield* accept.checkSender(input, limits).pipe(
          Effect.as(Option.none<string>()),
          Effect.catchTags({
            AccountSuspended: () => Effect.succeed(Option.some("the account is suspended")),
            SendingPaused: (e) => Effect.succeed(Option.some(`sending is paused: ${e.reason}`)),
            SenderDomainNotAuthorized: (e) =>
              Effect.succeed(Option.some(`the sender domain ${e.domain} may no longer send (${e.state})`))
          })
        )
        if (Option.isSome(refused)) return yield* discard(row, refused.value, now)
        const [item] = yield* accept.plan(input)
        if (item === undefined || item.status !== "queued") {
          return yield* discard(row, `nothing left to send (${item?.status ?? "empty"}: ${item?.error ?? ""})`, now)
        }
        // Simulator recipients never count against the monthly quota (src/lib/simulator.ts).
        const chargeable = quotaCountOf(item.recipients.map((r) => r.email))
        const charged = chargeable === 0 ? true : yield* reserveQuota(limits, row.key_id, chargeable).pipe(
          Effect.as(true),
          Effect.catchTags({ QuotaExhausted: () => Effect.succeed(false), OverageNotOffered: () => Effect.succeed(false) })
        )
        if (!charged) return yield* discard(row, "the monthly quota is used up", now)
        yield* writeQueue({
          accountId: row.account_id,
          keyId: row.key_id,
          requestId: row.request_id,
          fromEmail: row.request.from.email,
          now
        }, [{
          messageId: row.message_id,
          personalizationIndex: 0,
          subject: row.request.personalizations[0]?.subject ?? row.request.subject,
          stored: structuredMessages(row.request)(0),
          recipients: item.recipients
        }])
        yield* sql`UPDATE scheduled_sends SET state = 'released', finished_at = ${now} WHERE id = ${row.id}`
      })

    /** Claims and releases up to `batch` due sends, each in its own transaction. Returns how many. */
    const releaseDue = (now: Date, batch = 50) =>
      Effect.gen(function*() {
        const claimed = yield* sql<Row>`
          UPDATE scheduled_sends SET lease_until = ${new Date(now.getTime() + LEASE_MS)}
          WHERE id IN (
            SELECT id FROM scheduled_sends
            WHERE state = 'scheduled' AND send_at <= ${now} AND (lease_until IS NULL OR lease_until < ${now})
            ORDER BY send_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
          RETURNING *`
        for (const row of claimed) {
          yield* sql.withTransaction(Effect.gen(function*() {
            // Re-read under lock: a cancel may have landed between the claim and now.
            const [current] = yield* sql<Row>`SELECT * FROM scheduled_sends WHERE id = ${row.id} FOR UPDATE`
            if (current?.state === "scheduled") yield* release(current, now)
          }))
        }
        if (claimed.length > 0) yield* signal.wake("herald_queue")
        return claimed.length
      })

    return { get, cancel, releaseDue } as const
  })
}) {}
