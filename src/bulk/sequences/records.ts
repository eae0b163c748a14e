/**
 * The sequences' rows and their API shapes, and the lookups every part of the area shares: a
 * sequence of the calling key (another key's is not found), and whether it has subscriptions that
 * still run (active or paused), which forbids reordering, deleting steps and deleting it.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import type { StepFields } from "./step-content.ts"

export interface Owner {
  readonly accountId: string
  readonly keyId: string
}

export type SequenceStatus = "active" | "inactive"
export type SubscriptionState = "active" | "paused" | "completed" | "cancelled"
export type CancelReason = "unsubscribed" | "manual" | "bounced" | "complained" | "suppressed"

export interface SequenceRow {
  readonly id: string
  readonly account_id: string
  readonly key_id: string
  readonly name: string
  readonly status: SequenceStatus
  readonly from_email: string | null
  readonly from_name: string | null
  readonly reply_to: string | null
  /** The list whose joining members it enrols (`trigger: {type: "list_joined", list_id}`; triggered.ts). */
  readonly trigger_list_id: string | null
  readonly created_at: Date
}

export interface StepRow extends StepFields {
  readonly sequence_id: string
  readonly id: number
  readonly position: number
}

export interface SubscriptionRow {
  readonly id: string
  readonly sequence_id: string
  readonly contact_id: string | null
  readonly email: string
  readonly state: SubscriptionState
  readonly reason: CancelReason | null
  readonly last_step_id: number | null
  readonly next_due_at: Date | null
  readonly hold_reason: string | null
  readonly enrolled_at: Date
  readonly updated_at: Date
}

export class SequenceNotFound extends Data.TaggedError("SequenceNotFound")<{ readonly id: string }> {}
export class StepNotFound extends Data.TaggedError("StepNotFound")<{ readonly id: string; readonly stepId: number }> {}
export class SubscriptionNotFound extends Data.TaggedError("SubscriptionNotFound")<{ readonly id: string; readonly subscriptionId: string }> {}
/** The state forbids the call (409 `conflict`); `message` says which state. */
export class SequenceConflict extends Data.TaggedError("SequenceConflict")<{ readonly message: string }> {}
/** A refused field of a request (400 `validation_failed`). */
export class SequenceInvalid extends Data.TaggedError("SequenceInvalid")<{ readonly param: string; readonly message: string }> {}

export const stepView = (row: StepRow) => ({
  id: row.id,
  sequence_id: row.sequence_id,
  position: row.position,
  offset_seconds: row.offset_seconds,
  subject: row.subject,
  preheader: row.preheader,
  mjml: row.mjml,
  html: row.html,
  body_text: row.body_text,
  from_email: row.from_email,
  from_name: row.from_name,
  reply_to: row.reply_to,
  template_id: row.template_id
})

export const subscriptionView = (row: SubscriptionRow) => ({
  id: row.id,
  sequence_id: row.sequence_id,
  contact_id: row.contact_id,
  email: row.email,
  state: row.state,
  reason: row.reason,
  last_step_id: row.last_step_id,
  next_due_at: row.next_due_at?.toISOString() ?? null,
  hold_reason: row.hold_reason,
  enrolled_at: row.enrolled_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

/** The key's sequence, locked when `forUpdate` (steps are numbered and reordered under this lock). */
export const findSequence = (owner: Owner, id: string, forUpdate = false) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<SequenceRow>`SELECT id, account_id, key_id, name, status, from_email, from_name, reply_to, trigger_list_id, created_at
      FROM sequences WHERE id = ${id} AND key_id = ${owner.keyId} ${forUpdate ? sql`FOR UPDATE` : sql``}`
    if (rows[0] === undefined) return yield* new SequenceNotFound({ id })
    return rows[0]
  })

/** Refuses `what` while the sequence has an active or paused subscription. */
export const refuseWhileRunning = (sequenceId: string, what: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ running: number }>`SELECT count(*)::integer AS running FROM sequence_subscriptions
      WHERE sequence_id = ${sequenceId} AND state IN ('active', 'paused')`
    const running = row?.running ?? 0
    if (running > 0) {
      return yield* new SequenceConflict({ message: `${what}: sequence ${sequenceId} has ${running} active or paused subscription(s)` })
    }
  })

/**
 * Sets the next due time of the sequence's running subscriptions from their last step's due time
 * and the offset of the step after it (by position), or null when no step follows: after a step
 * is appended or its offset changes, so timing follows the steps as they are now.
 */
export const reschedule = (sequenceId: string, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE sequence_subscriptions s SET updated_at = ${at}, next_due_at = (
        SELECT s.last_due_at + make_interval(secs => n.offset_seconds) FROM sequence_steps n
        WHERE n.sequence_id = s.sequence_id AND n.position > coalesce(
          (SELECT l.position FROM sequence_steps l WHERE l.sequence_id = s.sequence_id AND l.id = s.last_step_id), 0)
        ORDER BY n.position LIMIT 1)
      WHERE s.sequence_id = ${sequenceId} AND s.state IN ('active', 'paused')`.pipe(Effect.asVoid))
