/**
 * A sequence step whose content the render workers stopped at their deadline three times (issue
 * 26, src/mta/render-at-delivery.ts) holds its subscriptions, as a campaign pauses with
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
import { Effect, Layer } from "effect"
import { SequenceStepHold } from "../../mta/render-at-delivery.ts"

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
        AND EXISTS (SELECT 1 FROM sequence_step_sends x JOIN deliveries d ON d.message_id = x.message_id
          WHERE x.subscription_id = s.id AND x.step_id = ${step.stepId} AND d.state IN ('queued', 'deferred'))
      RETURNING s.id`).pipe(Effect.map((rows) => rows.length))

/** The MTA's port (render-at-delivery.ts) provided by this module: a failed hold is a defect of the database. */
export const SequenceStepHoldLive = Layer.effect(
  SequenceStepHold,
  Effect.map(SqlClient.SqlClient, (sql) =>
    SequenceStepHold.of({
      hold: (step, at) => holdRenderFailed(step, at).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie)
    }))
)
