/**
 * Sequences of the calling key (another key's is not found) and their subscriptions: the CRUD,
 * the subscriptions list and the pause, resume and cancel actions. A subscription is `active`,
 * `paused`, or ended (`completed`, `cancelled` with a reason); a call its state does not allow is
 * a 409. A resumed subscription is due at the later of its due time and the moment of resuming.
 * A sequence may name a list of its key as its trigger (issue 30 item 10; enrolment: triggered.ts).
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { withPageDeadline } from "../../db/statement-timeout.ts"
import { emitEvent } from "../../events/outbox.ts"
import { SequenceCancelled } from "../../events/schema.ts"
import { newId } from "../../lib/ids.ts"
import { Templates } from "../templates/Templates.ts"
import { LIST_JOINED } from "./triggered.ts"
import {
  findSequence,
  type Owner,
  refuseWhileRunning,
  SequenceConflict,
  SequenceInvalid,
  SequenceNotFound,
  type SequenceRow,
  type SequenceStatus,
  SubscriptionNotFound,
  type SubscriptionRow,
  type SubscriptionState,
  subscriptionView
} from "./records.ts"

export interface SequenceFields {
  readonly name: string
  readonly status: SequenceStatus
  readonly from_email: string | null
  readonly from_name: string | null
  readonly reply_to: string | null
  readonly trigger: SequenceTrigger | null
}

export interface SequenceTrigger {
  readonly type: typeof LIST_JOINED
  readonly list_id: string
}

export type SequencePatch = { readonly [K in keyof SequenceFields]?: SequenceFields[K] | undefined }

interface SequenceWithCounts extends SequenceRow {
  readonly step_count: number
  readonly active: number
  readonly paused: number
  readonly completed: number
  readonly cancelled: number
}

const view = (row: SequenceWithCounts) => ({
  id: row.id,
  name: row.name,
  status: row.status,
  from_email: row.from_email,
  from_name: row.from_name,
  reply_to: row.reply_to,
  trigger: row.trigger_list_id === null ? null : { type: LIST_JOINED, list_id: row.trigger_list_id },
  created_at: row.created_at.toISOString(),
  step_count: row.step_count,
  subscriptions: { active: row.active, paused: row.paused, completed: row.completed, cancelled: row.cancelled }
})

const SUBSCRIPTION_COLUMNS = "id, sequence_id, contact_id, email, state, reason, last_step_id, next_due_at, hold_reason, enrolled_at, updated_at"

export class Sequences extends Effect.Service<Sequences>()("herald/Sequences", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { queryTimeoutMs } = yield* AppConfig
    const templates = yield* Templates
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** The key's sequences among `where`, with their step count and subscriptions by state. */
    const withCounts = (where: Statement.Fragment, limit = 1, offset = 0) =>
      sql<SequenceWithCounts>`
        SELECT q.id, q.account_id, q.key_id, q.name, q.status, q.from_email, q.from_name, q.reply_to, q.trigger_list_id, q.created_at,
          (SELECT count(*)::integer FROM sequence_steps t WHERE t.sequence_id = q.id) AS step_count,
          coalesce(c.active, 0) AS active, coalesce(c.paused, 0) AS paused,
          coalesce(c.completed, 0) AS completed, coalesce(c.cancelled, 0) AS cancelled
        FROM sequences q
        LEFT JOIN LATERAL (
          SELECT count(*) FILTER (WHERE state = 'active')::integer AS active, count(*) FILTER (WHERE state = 'paused')::integer AS paused,
            count(*) FILTER (WHERE state = 'completed')::integer AS completed, count(*) FILTER (WHERE state = 'cancelled')::integer AS cancelled
          FROM sequence_subscriptions s WHERE s.sequence_id = q.id) c ON TRUE
        WHERE ${where}
        ORDER BY q.created_at DESC, q.id LIMIT ${limit} OFFSET ${offset}`

    const readOne = (owner: Owner, id: string) =>
      Effect.gen(function*() {
        const [row] = yield* withCounts(sql`q.id = ${id} AND q.key_id = ${owner.keyId}`)
        if (row === undefined) return yield* new SequenceNotFound({ id })
        return view(row)
      })

    /** The trigger's list column, its list checked to be the key's (400 `trigger.list_id` otherwise). */
    const triggerListOf = (owner: Owner, trigger: SequenceTrigger | null) =>
      Effect.gen(function*() {
        if (trigger === null) return null
        const [list] = yield* sql`SELECT 1 FROM lists WHERE id = ${trigger.list_id} AND key_id = ${owner.keyId}`
        if (list === undefined) return yield* new SequenceInvalid({ param: "trigger.list_id", message: `This key has no list ${trigger.list_id}` })
        return trigger.list_id
      })

    const create = (owner: Owner, { trigger, ...fields }: SequenceFields) =>
      Effect.gen(function*() {
        const at = yield* now
        const id = newId("sq")
        const trigger_list_id = yield* triggerListOf(owner, trigger)
        yield* sql`INSERT INTO sequences ${sql.insert({ id, account_id: owner.accountId, key_id: owner.keyId, ...fields, trigger_list_id, created_at: at, updated_at: at })}`
        return yield* readOne(owner, id)
      })

    const list = (owner: Owner, limit: number, offset: number) =>
      Effect.gen(function*() {
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::integer AS total FROM sequences WHERE key_id = ${owner.keyId}`
        const rows = yield* withCounts(sql`q.key_id = ${owner.keyId}`, limit, offset)
        return { total: count?.total ?? 0, limit, offset, items: rows.map(view) }
      }).pipe(withPageDeadline(sql, queryTimeoutMs, "sequences"))

    /**
     * A sequence's default sender may not be removed while a step takes its sender from it (no
     * own `from_email`, none from its template): that step could never be sent.
     */
    const refuseStepsLeftWithoutSender = (owner: Owner, id: string) =>
      Effect.gen(function*() {
        const steps = yield* sql<{ id: number; template_id: string | null }>`SELECT id, template_id FROM sequence_steps
          WHERE sequence_id = ${id} AND from_email IS NULL ORDER BY position`
        for (const step of steps) {
          const template = step.template_id === null ? Option.none() : yield* templates.read(owner, step.template_id).pipe(
            Effect.map(Option.some),
            Effect.catchTag("TemplateNotFound", () => Effect.succeed(Option.none()))
          )
          if (Option.isNone(template) || template.value.from_email === null) {
            return yield* new SequenceInvalid({
              param: "from_email",
              message: `Step ${step.id} takes its sender from the sequence: give the step (or its template) a from_email before removing this one`
            })
          }
        }
      })

    const update = (owner: Owner, id: string, { trigger, ...patch }: SequencePatch) =>
      Effect.gen(function*() {
        yield* findSequence(owner, id, true)
        if (patch.from_email === null) yield* refuseStepsLeftWithoutSender(owner, id)
        const given: Record<string, unknown> = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined))
        if (trigger !== undefined) given["trigger_list_id"] = yield* triggerListOf(owner, trigger)
        yield* sql`UPDATE sequences SET ${sql.update({ ...given, updated_at: yield* now })} WHERE id = ${id}`
        return yield* readOne(owner, id)
      }).pipe(sql.withTransaction)

    const remove = (owner: Owner, id: string) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* findSequence(owner, id, true)
        yield* refuseWhileRunning(id, `Sequence ${id} cannot be deleted`)
        yield* sql`DELETE FROM sequences WHERE id = ${id}`
        return { id, deleted: true as const }
      }))

    const subscriptions = (owner: Owner, id: string, params: { readonly state?: SubscriptionState | undefined; readonly limit: number; readonly offset: number }) =>
      Effect.gen(function*() {
        yield* findSequence(owner, id)
        const state = params.state === undefined ? sql`` : sql`AND state = ${params.state}`
        const [count] = yield* sql<{ total: number }>`SELECT count(*)::integer AS total FROM sequence_subscriptions
          WHERE sequence_id = ${id} ${state}`
        const rows = yield* sql<SubscriptionRow>`SELECT ${sql.literal(SUBSCRIPTION_COLUMNS)} FROM sequence_subscriptions
          WHERE sequence_id = ${id} ${state} ORDER BY enrolled_at, id LIMIT ${params.limit} OFFSET ${params.offset}`
        return { total: count?.total ?? 0, limit: params.limit, offset: params.offset, items: rows.map(subscriptionView) }
      })

    /** Applies `change` to a subscription in `from`, or answers why its state forbids it. */
    const transition = (owner: Owner, id: string, subscriptionId: string, verb: string, from: ReadonlyArray<SubscriptionState>, change: (at: Date) => Statement.Fragment) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* findSequence(owner, id)
        const at = yield* now
        const [row] = yield* sql<SubscriptionRow & { readonly account_id: string; readonly key_id: string }>`
          UPDATE sequence_subscriptions SET ${change(at)}, updated_at = ${at}
          WHERE id = ${subscriptionId} AND sequence_id = ${id} AND state IN ${sql.in([...from])}
          RETURNING ${sql.literal(SUBSCRIPTION_COLUMNS)}, account_id, key_id`
        if (row !== undefined) return row
        const [existing] = yield* sql<{ state: string }>`SELECT state FROM sequence_subscriptions WHERE id = ${subscriptionId} AND sequence_id = ${id}`
        if (existing === undefined) return yield* new SubscriptionNotFound({ id, subscriptionId })
        return yield* new SequenceConflict({ message: `Subscription ${subscriptionId} is ${existing.state}: it cannot ${verb}` })
      }))

    const pause = (owner: Owner, id: string, subscriptionId: string) =>
      Effect.map(transition(owner, id, subscriptionId, "be paused", ["active"], () => sql`state = 'paused'`), subscriptionView)

    /**
     * Due at the later of the due time and now. A step that fell due while paused moves the
     * subscription's timeline (`last_due_at` with it) by as long as it was overdue, so a later
     * rescheduling (a step appended, an offset changed: records.ts `reschedule`) keeps counting
     * from the moment of resuming rather than from the old due time.
     */
    const resume = (owner: Owner, id: string, subscriptionId: string) =>
      Effect.map(
        transition(owner, id, subscriptionId, "be resumed", ["paused"], (at) =>
          sql`state = 'active', held_until = NULL, hold_reason = NULL,
            last_due_at = CASE WHEN next_due_at < ${at}::timestamptz THEN last_due_at + (${at}::timestamptz - next_due_at) ELSE last_due_at END,
            next_due_at = CASE WHEN next_due_at IS NULL THEN NULL ELSE greatest(next_due_at, ${at}::timestamptz) END`),
        subscriptionView
      )

    const cancel = (owner: Owner, id: string, subscriptionId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const row = yield* transition(owner, id, subscriptionId, "be cancelled", ["active", "paused"], (at) =>
          sql`state = 'cancelled', reason = 'manual', next_due_at = NULL, finished_at = ${at}::timestamptz`)
        yield* emitEvent({
          accountId: row.account_id,
          keyId: row.key_id,
          event: SequenceCancelled.make({ email: row.email, campaign_id: id, reason: "manual" }),
          at: row.updated_at
        })
        return subscriptionView(row)
      }))

    const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
    return {
      create,
      read: (owner: Owner, id: string) => withSql(readOne(owner, id)),
      list,
      update: (owner: Owner, id: string, patch: SequencePatch) => withSql(update(owner, id, patch)),
      remove: (owner: Owner, id: string) => withSql(remove(owner, id)),
      subscriptions: (owner: Owner, id: string, params: Parameters<typeof subscriptions>[2]) => withSql(subscriptions(owner, id, params)),
      pause: (owner: Owner, id: string, subscriptionId: string) => withSql(pause(owner, id, subscriptionId)),
      resume: (owner: Owner, id: string, subscriptionId: string) => withSql(resume(owner, id, subscriptionId)),
      cancel: (owner: Owner, id: string, subscriptionId: string) => withSql(cancel(owner, id, subscriptionId))
    } as const
  })
}) {}
