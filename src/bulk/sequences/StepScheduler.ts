/**
 * Sends each due step of each running subscription through the MTA, exactly once per
 * subscription and step. One transaction per batch claims due subscriptions with FOR UPDATE SKIP
 * LOCKED (two replicas take disjoint rows) and, per subscription, records the step in
 * `sequence_step_sends` (its primary key refuses a second queueing whatever happened before),
 * writes the queue rows (queue-writer.ts: the `sequence` stored message on channel `bulk`) and
 * advances the subscription (last step by id; next due = this due time + the next step's offset,
 * so timing does not drift with the queue). A crash anywhere in between rolls all of it back:
 * the step is due again and queued once.
 *
 * What send-time rules stop a step (quota without overage, a suspended or paused account, a
 * sender domain that may not send, no sender left): the step waits — the subscription stays
 * `active`, marked with `hold_reason`, and is tried again after HOLD_RECHECK. A sequence made
 * inactive holds its due steps the same way (its subscriptions are not claimed) until it is active
 * again. Due times come from the caller (the actor reads Effect's Clock), never from `now()`.
 *
 * Once every step is queued (`next_due_at` null), `finish` completes the subscriptions whose last
 * step's deliveries all reached a final state, with `sequence.completed` (it reads `deliveries`
 * of those messages as the MTA's read model). Reads the step's template, the contact and the
 * sender domain as they are at due time: a step edited after enrolment is sent as it is.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Data, Effect, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { QueueSignal } from "../../db/QueueSignal.ts"
import { emitEvent } from "../../events/outbox.ts"
import { SequenceCompleted } from "../../events/schema.ts"
import { domainOf } from "../../lib/email.ts"
import { newId } from "../../lib/ids.ts"
import { quotaCountOf } from "../../lib/simulator.ts"
import type { SequenceReference } from "../../mta/queue/StoredMessage.ts"
import { sendingAllowed } from "../../platform/domains/records.ts"
import { AccountLimits } from "../../platform/usage/AccountLimits.ts"
import { reserveQuota } from "../../platform/usage/Quota.ts"
import { refuseSender } from "../../transactional/accept.ts"
import { writeQueue } from "../../transactional/queue-writer.ts"
import { textFromHtml, withPreheader } from "../render/text.ts"
import { Templates } from "../templates/Templates.ts"
import type { SequenceRow, StepRow } from "./records.ts"
import { effectiveContent, type TemplateContent } from "./step-content.ts"

/** How long a held step waits before the rules are read again. */
export const HOLD_RECHECK_MS = 30_000

interface Claimed {
  readonly id: string
  readonly sequence_id: string
  readonly account_id: string
  readonly key_id: string
  readonly contact_id: string
  readonly last_step_id: number | null
  readonly next_due_at: Date
}

interface ContactRow {
  readonly email: string
  readonly name: string | null
  readonly metadata: Readonly<Record<string, unknown>>
}

const asText = (value: unknown): string => typeof value === "string" ? value : JSON.stringify(value)

/**
 * The contact's variables as the stored message carries them (strings): the template's defaults,
 * then `email`, `name` and each metadata field as `metadata.<name>` (a contact's field wins).
 */
export const contactVariables = (vars: Readonly<Record<string, unknown>>, contact: ContactRow): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, asText(v)])),
  email: contact.email,
  ...(contact.name === null ? {} : { name: contact.name }),
  ...Object.fromEntries(Object.entries(contact.metadata).map(([k, v]) => [`metadata.${k}`, asText(v)]))
})

type Sent = { readonly _tag: "queued" } | { readonly _tag: "held"; readonly reason: string } | { readonly _tag: "ended" }
const queued: Sent = { _tag: "queued" }
const ended: Sent = { _tag: "ended" }
const held = (reason: string): Sent => ({ _tag: "held", reason })

/** The quota stops the step: raised inside its savepoint so the step's record is rolled back with it. */
class QuotaHold extends Data.TaggedError("QuotaHold")<{}> {}

export class StepScheduler extends Effect.Service<StepScheduler>()("herald/StepScheduler", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const limitsOf = yield* AccountLimits
    const templates = yield* Templates
    const signal = yield* QueueSignal
    const { domainGraceHours } = yield* AppConfig

    /** The step after `position` (0: the first), by position. */
    const stepAfter = (sequenceId: string, position: number) =>
      Effect.map(
        sql<StepRow>`SELECT * FROM sequence_steps WHERE sequence_id = ${sequenceId} AND position > ${position} ORDER BY position LIMIT 1`,
        (rows) => rows[0]
      )

    const domainState = (accountId: string, fromEmail: string, now: Date) =>
      Effect.map(
        sql<{ verified_at: Date | null; verification_lost_at: Date | null }>`SELECT verified_at, verification_lost_at FROM domains
          WHERE account_id = ${accountId} AND domain = ${domainOf(fromEmail).toLowerCase()}`,
        ([d]) =>
          d === undefined
            ? "not_registered" as const
            : sendingAllowed({ verifiedAt: d.verified_at, verificationLostAt: d.verification_lost_at }, now, domainGraceHours)
      )

    const hold = (sub: Claimed, reason: string, now: Date) =>
      sql`UPDATE sequence_subscriptions SET held_until = ${new Date(now.getTime() + HOLD_RECHECK_MS)}, hold_reason = ${reason}, updated_at = ${now}
        WHERE id = ${sub.id}`.pipe(Effect.asVoid)

    /** Queues the subscription's due step and advances it, inside the caller's transaction. */
    const sendStep = (sub: Claimed, now: Date) =>
      Effect.gen(function*() {
        const [last] = sub.last_step_id === null
          ? [undefined]
          : yield* sql<{ position: number }>`SELECT position FROM sequence_steps WHERE sequence_id = ${sub.sequence_id} AND id = ${sub.last_step_id}`
        const step = yield* stepAfter(sub.sequence_id, last?.position ?? 0)
        if (step === undefined) {
          yield* sql`UPDATE sequence_subscriptions SET next_due_at = NULL, updated_at = ${now} WHERE id = ${sub.id}`
          return ended
        }
        const [sequence] = yield* sql<SequenceRow>`SELECT * FROM sequences WHERE id = ${sub.sequence_id}`
        const [contact] = yield* sql<ContactRow>`SELECT email, name, metadata FROM contacts WHERE id = ${sub.contact_id}`
        const owner = { accountId: sub.account_id, keyId: sub.key_id }
        const template = step.template_id === null ? null : yield* templates.read(owner, step.template_id).pipe(
          Effect.map((t): TemplateContent | null => t),
          Effect.catchTag("TemplateNotFound", () => Effect.succeed(null))
        )
        const content = effectiveContent(step, template, sequence!)
        const from = content.from_email
        if (from === null) return held("no_sender")
        const to = contact!.email

        const limits = yield* limitsOf.of(sub.account_id, now)
        const refused = yield* refuseSender(from, [to], limits, yield* domainState(sub.account_id, from, now)).pipe(
          Effect.as(Option.none<string>()),
          Effect.catchTags({
            AccountSuspended: () => Effect.succeed(Option.some("account_suspended")),
            SendingPaused: () => Effect.succeed(Option.some("sending_paused")),
            SenderDomainNotAuthorized: () => Effect.succeed(Option.some("domain_unverified"))
          })
        )
        if (Option.isSome(refused)) return held(refused.value)

        const messageId = newId("msg")
        const recorded = yield* sql`INSERT INTO sequence_step_sends (subscription_id, step_id, message_id, queued_at)
          VALUES (${sub.id}, ${step.id}, ${messageId}, ${now}) ON CONFLICT DO NOTHING RETURNING step_id`
        if (recorded.length > 0) {
          // Simulator recipients never count against the monthly quota (src/lib/simulator.ts).
          const charged = quotaCountOf([to]) === 0 ? true : yield* reserveQuota(limits, sub.key_id, 1).pipe(
            Effect.as(true),
            Effect.catchTags({ QuotaExhausted: () => Effect.succeed(false), OverageNotOffered: () => Effect.succeed(false) })
          )
          if (!charged) return yield* new QuotaHold()
          const html = content.html === "" ? null : withPreheader(content.html, content.preheader)
          const text = content.body_text !== "" ? content.body_text : textFromHtml(content.html)
          const stored: typeof SequenceReference.Type = {
            _tag: "sequence",
            origin: "sequence",
            channel: "bulk",
            sequence_id: sub.sequence_id,
            step: step.id,
            contact_id: sub.contact_id,
            to: contact!.name === null ? { email: to } : { email: to, name: contact!.name },
            variables: contactVariables(content.vars, contact!),
            message: {
              from: content.from_name === null ? { email: from } : { email: from, name: content.from_name },
              ...(content.reply_to === null ? {} : { reply_to: { email: content.reply_to } }),
              subject: content.subject,
              content: [
                { type: "text/plain" as const, value: text },
                ...(html === null ? [] : [{ type: "text/html" as const, value: html }])
              ]
            }
          }
          yield* writeQueue(
            { accountId: sub.account_id, keyId: sub.key_id, requestId: sub.id, fromEmail: from, now },
            [{ messageId, personalizationIndex: 0, subject: content.subject, stored, recipients: [{ email: to, kind: "to" }] }]
          )
        }
        const following = yield* stepAfter(sub.sequence_id, step.position)
        const nextDue = following === undefined ? null : new Date(sub.next_due_at.getTime() + following.offset_seconds * 1000)
        yield* sql`UPDATE sequence_subscriptions SET last_step_id = ${step.id}, last_due_at = ${sub.next_due_at}, next_due_at = ${nextDue},
            held_until = NULL, hold_reason = NULL, updated_at = ${now}
          WHERE id = ${sub.id}`
        return queued
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("QuotaHold", () => Effect.succeed(held("quota_exhausted")))
      )

    /** Claims up to `batch` due subscriptions and sends their step, in one transaction. Answers how many were claimed. */
    const runDue = (now: Date, batch = 50) =>
      Effect.gen(function*() {
        const claimed = yield* sql.withTransaction(Effect.gen(function*() {
          // Due and not held (greatest() ignores a null hold), in the order they became sendable:
          // a range scan of sequence_subscriptions_eligible that never reads past held steps.
          const rows = yield* sql<Claimed>`
            SELECT s.id, s.sequence_id, s.account_id, s.key_id, s.contact_id, s.last_step_id, s.next_due_at
            FROM sequence_subscriptions s
            WHERE s.state = 'active' AND s.next_due_at IS NOT NULL AND greatest(s.next_due_at, s.held_until) <= ${now}
              AND EXISTS (SELECT 1 FROM sequences q WHERE q.id = s.sequence_id AND q.status = 'active')
            ORDER BY greatest(s.next_due_at, s.held_until) LIMIT ${batch}
            FOR UPDATE OF s SKIP LOCKED`
          for (const sub of rows) {
            // A step that fails (its savepoint rolled back) waits like a held one and is logged; the others go on.
            const sent = yield* sendStep(sub, now).pipe(
              Effect.catchAllCause((cause) =>
                Effect.logError("sequence step failed to queue; held", cause).pipe(
                  Effect.annotateLogs({ subscription_id: sub.id }),
                  Effect.as<Sent>({ _tag: "held", reason: `error: ${Cause.squash(cause)}`.slice(0, 200) })
                ))
            )
            if (sent._tag === "held") yield* hold(sub, sent.reason, now)
          }
          return rows.length
        }))
        if (claimed > 0) yield* signal.wake("herald_queue")
        return claimed
      })

    /**
     * Completes subscriptions whose last step reached a final state, with `sequence.completed`,
     * stamped no earlier than that step's last outcome (the pass's `now` may have been read before
     * the MTA wrote it), so the outbox hands the events to the webhooks in the order they happened.
     */
    const finish = (now: Date, batch = 500) =>
      sql.withTransaction(Effect.gen(function*() {
        const done = yield* sql<{ account_id: string; key_id: string; sequence_id: string; email: string; at: Date }>`
          WITH done AS (
            SELECT s.id, greatest(${now}::timestamptz, (SELECT max(d.completed_at) FROM deliveries d WHERE d.message_id = x.message_id)) AS at
            FROM sequence_subscriptions s
            JOIN sequence_step_sends x ON x.subscription_id = s.id AND x.step_id = s.last_step_id
            WHERE s.state = 'active' AND s.next_due_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.message_id = x.message_id AND d.state IN ('queued', 'deferred'))
            LIMIT ${batch}
            FOR UPDATE OF s SKIP LOCKED)
          UPDATE sequence_subscriptions u SET state = 'completed', finished_at = done.at, updated_at = done.at
          FROM done
          WHERE u.id = done.id AND u.state = 'active' AND u.next_due_at IS NULL
          RETURNING u.account_id, u.key_id, u.sequence_id, u.email, done.at`
        for (const row of done) {
          yield* emitEvent({ accountId: row.account_id, keyId: row.key_id, event: SequenceCompleted.make({ email: row.email, campaign_id: row.sequence_id }), at: row.at })
        }
        return done.length
      }))

    const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
    return {
      runDue: (now: Date, batch?: number) => withSql(runDue(now, batch)),
      finish: (now: Date, batch?: number) => withSql(finish(now, batch))
    } as const
  })
}) {}
