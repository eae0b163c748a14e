/**
 * Sends each due step of each running subscription through the MTA, exactly once per
 * subscription and step. One transaction per batch claims due subscriptions with FOR UPDATE SKIP
 * LOCKED (two replicas take disjoint rows) and, per subscription, records the step in
 * `sequence_step_sends` (its primary key refuses a second queueing whatever happened before),
 * writes the queue rows (src/mta/queue/enqueue.ts: the `sequence` stored message on channel `bulk`) and
 * advances the subscription (last step by id; next due = this due time + the next step's offset,
 * so timing does not drift with the queue). A crash anywhere in between rolls all of it back:
 * the step is due again and queued once.
 *
 * A pass writes all its steps at once (`sendAll`: what the steps share read once, then one
 * statement each for the records, each key's quota charge, the queue rows — a step's shared part
 * stored once — and the advances). Step by step, fourteen statements a step held sequences to a
 * third of a campaign's rate once the MTA's bulk lane stopped waiting for its poll
 * (bench/sequences.ts: 164/s against 490/s; 394–406/s now, 92 %). When a key's charge does not fit,
 * or anything fails, the pass goes one step at a time instead (`sendStep`, each in its savepoint),
 * which decides which steps still fit the quota and holds only a step that fails.
 *
 * What send-time rules stop a step (quota without overage, a suspended or paused account, a
 * sender domain that may not send, no sender left, a key without a postal address): the step waits — the subscription stays
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
import type { SequenceReference } from "../../mta/queue/StoredMessage.ts"
import { sendingAllowed } from "../../platform/domains/records.ts"
import { AccountLimits, type Limits } from "../../platform/usage/AccountLimits.ts"
import { reserveQuota } from "../../platform/usage/Quota.ts"
import { refuseSender } from "../../transactional/accept.ts"
import { messageHasOpenDeliveries, messageLastCompletedAt } from "../../mta/queue/read-models/message-progress.ts"
import { type QueuedMessage, type QueueWrite, type SharedContent, storeSharedContent, writeAll } from "../../mta/queue/enqueue.ts"
import { Templates } from "../templates/Templates.ts"
import type { Footer } from "../render/footer.ts"
import { footersOf } from "../settings/Settings.ts"
import type { SequenceRow, StepRow } from "./records.ts"
import {
  countsAgainstQuota,
  chargesByKey,
  type Claimed,
  type ContactRow,
  ended,
  failed,
  held,
  heldUntil,
  holdReasons,
  nextDueAt,
  queued,
  splitPass,
  stepAfter,
  stepMessage,
  storedStep
} from "./pass-plan.ts"
import { type EffectiveContent, effectiveContent, type TemplateContent } from "./step-content.ts"

export { contactVariables, HOLD_RECHECK_MS } from "./pass-plan.ts"

/** A step to queue, as `planStep` decided it. */
interface Send {
  readonly _tag: "send"
  readonly sub: Claimed
  readonly step: StepRow
  readonly limits: Limits
  /** Counted against the monthly quota (any but a simulator address). */
  readonly charged: boolean
  readonly queued: QueueWrite & { readonly messages: ReadonlyArray<QueuedMessage & { readonly stored: typeof SequenceReference.Type }> }
  readonly nextDue: Date | null
}

/** `read` once per key: the first caller's result is kept (failures are not). */
const memo = <A, E, R>(read: (key: string) => Effect.Effect<A, E, R>) => {
  const kept = new Map<string, A>()
  return (key: string): Effect.Effect<A, E, R> =>
    kept.has(key) ? Effect.succeed(kept.get(key)!) : Effect.tap(read(key), (value) => Effect.sync(() => kept.set(key, value)))
}

/** The whole-pass write cannot be used: the pass goes one step at a time (its savepoint rolled back). */
class OneByOne extends Data.TaggedError("OneByOne")<{}> {}

/** The quota stops the step: raised inside its savepoint so the step's record is rolled back with it. */
class QuotaHold extends Data.TaggedError("QuotaHold")<{}> {}

export class StepScheduler extends Effect.Service<StepScheduler>()("herald/StepScheduler", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const limitsOf = yield* AccountLimits
    const templates = yield* Templates
    const signal = yield* QueueSignal
    const { domainGraceHours } = yield* AppConfig

    const domainState = (accountId: string, fromEmail: string, now: Date) =>
      Effect.map(
        sql<{ verified_at: Date | null; verification_lost_at: Date | null }>`SELECT verified_at, verification_lost_at FROM domains
          WHERE account_id = ${accountId} AND domain = ${domainOf(fromEmail).toLowerCase()}`,
        ([d]) =>
          d === undefined
            ? "not_registered" as const
            : sendingAllowed({ verifiedAt: d.verified_at, verificationLostAt: d.verification_lost_at }, now, domainGraceHours)
      )

    /**
     * What the subscriptions of one pass share, read once per pass (its transaction) rather than
     * once per subscription: each sequence with its steps, each template, each account's limits,
     * each sender domain's state, and the claimed subscriptions' contacts in one statement. Per
     * subscription these were eight of the fourteen statements a step cost (bench/sequences.ts).
     */
    const passReads = (claimed: ReadonlyArray<Claimed>, now: Date) =>
      Effect.gen(function*() {
        const contactIds = [...new Set(claimed.map((c) => c.contact_id))]
        const contactRows = contactIds.length === 0 ? [] : yield* sql<ContactRow & { id: string }>`
          SELECT id, email, name, metadata FROM contacts WHERE id IN ${sql.in(contactIds)}`
        const contacts = new Map(contactRows.map((c) => [c.id, c]))
        const sequenceIds = [...new Set(claimed.map((c) => c.sequence_id))]
        const sequenceRows = yield* sql<SequenceRow>`SELECT * FROM sequences WHERE id IN ${sql.in(sequenceIds)}`
        const stepRows = yield* sql<StepRow>`SELECT * FROM sequence_steps WHERE sequence_id IN ${sql.in(sequenceIds)} ORDER BY sequence_id, position`
        const sequences = new Map(sequenceRows.map((q) => [q.id, q]))
        const steps = new Map<string, Array<StepRow>>()
        for (const step of stepRows) steps.set(step.sequence_id, [...(steps.get(step.sequence_id) ?? []), step])
        const messages = new Map<string, typeof SequenceReference.Type["message"]>()
        return {
          now,
          contact: (id: string) => contacts.get(id),
          /** The shared part of a step's messages: one object per step in a pass. */
          stepMessage: (step: StepRow, content: EffectiveContent, from: string, footer: Footer) => {
            const key = `${step.sequence_id}\n${step.id}`
            const known = messages.get(key)
            if (known !== undefined) return known
            const message = stepMessage(content, from, footer)
            messages.set(key, message)
            return message
          },
          sequence: (id: string) => sequences.get(id),
          /** The step after the one with id `lastStepId` (null: the first), by position. */
          stepAfter: (sequenceId: string, lastStepId: number | null) => stepAfter(steps.get(sequenceId) ?? [], lastStepId),
          template: memo((key: string) => {
            const [accountId, keyId, templateId] = key.split("\n") as [string, string, string]
            return templates.read({ accountId, keyId }, templateId).pipe(
              Effect.map((t): TemplateContent | null => t),
              Effect.catchTag("TemplateNotFound", () => Effect.succeed(null))
            )
          }),
          limits: memo((accountId: string) => limitsOf.of(accountId, now)),
          /** The key's footer; null without a postal address (the step holds: issue 30 item 9). */
          footer: memo((keyId: string) => Effect.map(footersOf([keyId]), (footers) => footers.get(keyId) ?? null)),
          domainState: memo((key: string) => {
            const [accountId, from] = key.split("\n") as [string, string]
            return domainState(accountId, from, now)
          })
        }
      })

    type PassReads = Effect.Effect.Success<ReturnType<typeof passReads>>

    const hold = (sub: Claimed, reason: string, now: Date) =>
      sql`UPDATE sequence_subscriptions SET held_until = ${heldUntil(now)}, hold_reason = ${reason}, updated_at = ${now}
        WHERE id = ${sub.id}`.pipe(Effect.asVoid)

    /**
     * What the subscription's due step comes to as things are now: none left (ended), held by a
     * send-time rule, or a message to queue (its stored form; `message` its shared part, one
     * object per step and pass so that a pass's messages of one step store it once).
     */
    const planStep = (sub: Claimed, reads: PassReads) =>
      Effect.gen(function*() {
        const step = reads.stepAfter(sub.sequence_id, sub.last_step_id)
        if (step === undefined) return ended
        const template = step.template_id === null ? null : yield* reads.template(`${sub.account_id}\n${sub.key_id}\n${step.template_id}`)
        const content = effectiveContent(step, template, reads.sequence(sub.sequence_id)!)
        const from = content.from_email
        if (from === null) return held("no_sender")
        const contact = reads.contact(sub.contact_id)!
        const limits = yield* reads.limits(sub.account_id)
        const refused = yield* refuseSender(from, [contact.email], limits, yield* reads.domainState(`${sub.account_id}\n${from}`)).pipe(
          Effect.as(Option.none<string>()),
          Effect.catchTags({
            AccountSuspended: (e) => Effect.succeed(Option.some(holdReasons[e._tag])),
            SendingPaused: (e) => Effect.succeed(Option.some(holdReasons[e._tag])),
            SenderDomainNotAuthorized: (e) => Effect.succeed(Option.some(holdReasons[e._tag]))
          })
        )
        if (Option.isSome(refused)) return held(refused.value)
        const footer = yield* reads.footer(sub.key_id)
        if (footer === null) return held("postal_address_missing")
        const stored = storedStep(sub, step, content, contact, reads.stepMessage(step, content, from, footer))
        return {
          _tag: "send" as const,
          sub,
          step,
          limits,
          charged: countsAgainstQuota(contact),
          queued: {
            context: { accountId: sub.account_id, keyId: sub.key_id, requestId: sub.id, fromEmail: from, now: reads.now },
            messages: [{ messageId: newId("msg"), personalizationIndex: 0, subject: content.subject, stored, recipients: [{ email: contact.email, kind: "to" as const }] }]
          },
          nextDue: nextDueAt(sub.next_due_at, reads.stepAfter(sub.sequence_id, step.id))
        }
      })

    /** The step's record, the subscriptions advanced or ended: one statement each for the whole pass. */
    const recordSends = (sends: ReadonlyArray<Send>) =>
      sql<{ subscription_id: string }>`INSERT INTO sequence_step_sends (subscription_id, step_id, message_id, queued_at)
        SELECT * FROM unnest(${sends.map((x) => x.sub.id)}::text[], ${sends.map((x) => x.step.id)}::integer[],
          ${sends.map((x) => x.queued.messages[0]!.messageId)}::text[], ${sends.map((x) => x.queued.context.now)}::timestamptz[])
        ON CONFLICT DO NOTHING RETURNING subscription_id`.pipe(Effect.map((rows) => new Set(rows.map((r) => r.subscription_id))))
    const advance = (sends: ReadonlyArray<Send>, now: Date) =>
      sql`UPDATE sequence_subscriptions s SET last_step_id = u.step_id, last_due_at = s.next_due_at, next_due_at = u.next_due,
          held_until = NULL, hold_reason = NULL, updated_at = ${now}
        FROM unnest(${sends.map((x) => x.sub.id)}::text[], ${sends.map((x) => x.step.id)}::integer[],
          ${sends.map((x) => x.nextDue)}::timestamptz[]) AS u(id, step_id, next_due)
        WHERE s.id = u.id`
    const end = (subs: ReadonlyArray<Claimed>, now: Date) =>
      sql`UPDATE sequence_subscriptions SET next_due_at = NULL, updated_at = ${now} WHERE id IN ${sql.in(subs.map((sub) => sub.id))}`

    /** One subscription's step, in its own savepoint: the pass's way when the whole-pass write cannot be used. */
    const sendStep = (sub: Claimed, reads: PassReads) =>
      Effect.gen(function*() {
        const plan = yield* planStep(sub, reads)
        if (plan._tag === "ended") yield* end([sub], reads.now)
        if (plan._tag !== "send") return plan
        const recorded = yield* recordSends([plan])
        if (recorded.size > 0) {
          // Simulator recipients never count against the monthly quota (src/lib/simulator.ts).
          const charged = !plan.charged ? true : yield* reserveQuota(plan.limits, sub.key_id, 1).pipe(
            Effect.as(true),
            Effect.catchTags({ QuotaExhausted: () => Effect.succeed(false), OverageNotOffered: () => Effect.succeed(false) })
          )
          if (!charged) return yield* new QuotaHold()
          yield* writeAll([plan.queued])
        }
        yield* advance([plan], reads.now)
        return queued
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("QuotaHold", () => Effect.succeed(held("quota_exhausted")))
      )

    /**
     * Every claimed subscription's step in a handful of statements (the records, one quota charge
     * per key, the queue rows, the advances), in one savepoint. Fails with OneByOne, its work rolled
     * back, when a key's charge does not fit (which steps still fit is the one-by-one way's to
     * decide) or a statement fails (the one-by-one way holds only the step that fails).
     */
    const sendAll = (rows: ReadonlyArray<Claimed>, reads: PassReads) =>
      Effect.gen(function*() {
        const plans = yield* Effect.forEach(rows, (sub) => Effect.map(planStep(sub, reads), (plan) => ({ sub, plan })))
        const { ends, sends } = splitPass(plans)
        if (ends.length > 0) yield* end(ends, reads.now)
        if (sends.length > 0) {
          const recorded = yield* recordSends(sends)
          const fresh = sends.filter((x) => recorded.has(x.sub.id))
          for (const [keyId, { limits, count }] of chargesByKey(fresh)) yield* reserveQuota(limits, keyId, count)
          // A step's shared part stored once for the pass's messages of it (5 KB a message otherwise).
          const shared = new Map<object, SharedContent>()
          for (const x of fresh) {
            const message = x.queued.messages[0]!.stored.message
            if (!shared.has(message)) shared.set(message, yield* storeSharedContent(x.sub.account_id, message, reads.now))
          }
          yield* writeAll(fresh.map((x) => ({
            context: x.queued.context,
            messages: x.queued.messages.map((m) => ({ ...m, sharedContent: shared.get(m.stored.message) }))
          })))
          yield* advance(sends, reads.now)
        }
        return plans.map(({ sub, plan }) => ({ sub, sent: plan._tag === "send" ? queued : plan }))
      }).pipe(
        sql.withTransaction,
        // Whatever stopped it (a defect too: a contact gone meanwhile), the one-by-one way meets it step by step.
        Effect.catchAllCause((cause): Effect.Effect<never, OneByOne> =>
          Cause.isInterruptedOnly(cause) ? Effect.interrupt : Effect.fail(new OneByOne()))
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
          if (rows.length === 0) return 0
          const reads = yield* passReads(rows, now)
          // The whole pass at once; when that cannot be (see sendAll), each step alone.
          const outcomes = yield* sendAll(rows, reads).pipe(
            Effect.catchTag("OneByOne", () =>
              Effect.forEach(rows, (sub) =>
                // A step that fails (its savepoint rolled back) waits like a held one and is logged; the others go on.
                sendStep(sub, reads).pipe(
                  Effect.catchAllCause((cause) =>
                    Effect.logError("sequence step failed to queue; held", cause).pipe(
                      Effect.annotateLogs({ subscription_id: sub.id }),
                      Effect.as(failed(Cause.squash(cause)))
                    )),
                  Effect.map((sent) => ({ sub, sent }))
                )))
          )
          for (const { sub, reason } of splitPass(outcomes.map(({ sub, sent }) => ({ sub, plan: sent }))).holds) yield* hold(sub, reason, now)
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
            SELECT s.id, greatest(${now}::timestamptz, ${messageLastCompletedAt(sql, sql`x.message_id`)}) AS at
            FROM sequence_subscriptions s
            JOIN sequence_step_sends x ON x.subscription_id = s.id AND x.step_id = s.last_step_id
            WHERE s.state = 'active' AND s.next_due_at IS NULL
              AND NOT ${messageHasOpenDeliveries(sql, sql`x.message_id`)}
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
