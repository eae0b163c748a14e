/**
 * A sequence step whose content the render workers stopped at their deadline three times (issue
 * 26, src/mta/compose/render-at-delivery.ts) holds its subscriptions, as a campaign pauses with
 * `pause_reason: render_failed`: without it, each of the step's recipients would pay the render
 * deadline again at every retry for the queue's 120 h.
 *
 * The held subscriptions are those whose delivery of that step is still waiting in the queue
 * (`queued` or `deferred`): a subscription that already got the step is not the step's victim, and
 * one that has not reached it yet meets the same stops when it does. Each becomes `paused` with
 * `hold_reason = 'render_failed'`: the step scheduler claims only `active` subscriptions, and the
 * MTA holds the queued step of such a subscription (delivery-checks.ts `sequence_render_held`)
 * instead of rendering it. `POST …/subscriptions/{id}/resume`, the way any paused subscription
 * resumes, clears the reason; the held delivery is tried (rendered) again at its next recheck.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { messageHasOpenDeliveries } from "../../mta/queue/read-models/message-progress.ts"

/** The step whose render was stopped: its sequence and step (by id), and a contact to hold alone. */
export interface StoppedStep {
  readonly sequenceId: string
  readonly stepId: number
  /** Only this contact's subscription (a delivery of a step already known to be held): one indexed update. */
  readonly contactId?: string | undefined
}

/** The hold's reason, as the API shows it (`hold_reason`) and the MTA's check reads it. */
export const RENDER_FAILED = "render_failed"

/** Pauses the step's waiting subscriptions with `hold_reason = 'render_failed'`; answers how many. */
export const holdRenderFailed = (step: StoppedStep, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`UPDATE sequence_subscriptions s SET state = 'paused', hold_reason = ${RENDER_FAILED}, held_until = NULL, updated_at = ${at}
      WHERE s.sequence_id = ${step.sequenceId} AND s.state = 'active'
        ${step.contactId === undefined ? sql`` : sql`AND s.contact_id = ${step.contactId}`}
        AND EXISTS (SELECT 1 FROM sequence_step_sends x
          WHERE x.subscription_id = s.id AND x.step_id = ${step.stepId} AND ${messageHasOpenDeliveries(sql, sql`x.message_id`)})
      RETURNING s.id`).pipe(Effect.map((rows) => rows.length))
