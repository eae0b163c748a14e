/**
 * A sequence's steps: appended at the end (ids numbered from the sequence's `step_seq` under its
 * row lock), edited, deleted and reordered. Every save is checked with the step's template and
 * the sequence's sender defaults (step-content.ts). Deleting or reordering is refused while a
 * subscription is active or paused; a reorder's body is checked first (it must name exactly every
 * step), then the state.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { RenderEngine } from "../render/RenderEngine.ts"
import { Templates } from "../templates/Templates.ts"
import {
  findSequence,
  type Owner,
  refuseWhileRunning,
  reschedule,
  type SequenceRow,
  SequenceInvalid,
  StepNotFound,
  type StepRow,
  stepView
} from "./records.ts"
import { readyStep, type StepFields, type TemplateContent } from "./step-content.ts"

export type StepPatch = { readonly [K in keyof StepFields]?: StepFields[K] | undefined }

const STEP_COLUMNS = "sequence_id, id, position, offset_seconds, subject, preheader, mjml, html, body_text, from_email, from_name, reply_to, template_id"

/** An html given for a step whose html is compiled from its mjml would be overwritten. */
const htmlFromMjml = new SequenceInvalid({
  param: "html",
  message: "This step's html is compiled from its mjml: change the mjml, or send mjml: null with the html"
})

export class Steps extends Effect.Service<Steps>()("herald/SequenceSteps", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const engine = yield* RenderEngine
    const templates = yield* Templates
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** The key's template a step names (another key's or an unknown one is refused on the field). */
    const templateOf = (owner: Owner, id: string | null) =>
      id === null ? Effect.succeed(null as TemplateContent | null) : templates.read(owner, id).pipe(
        Effect.map((t): TemplateContent | null => t),
        Effect.catchTag("TemplateNotFound", () => new SequenceInvalid({ param: "template_id", message: `No template ${id}` }))
      )

    const checked = (owner: Owner, sequence: SequenceRow, fields: StepFields) =>
      Effect.flatMap(templateOf(owner, fields.template_id), (template) => readyStep(engine, owner.accountId, fields, template, sequence))

    const findStep = (sequenceId: string, stepId: number) =>
      Effect.gen(function*() {
        const rows = yield* sql<StepRow>`SELECT ${sql.literal(STEP_COLUMNS)} FROM sequence_steps WHERE sequence_id = ${sequenceId} AND id = ${stepId}`
        if (rows[0] === undefined) return yield* new StepNotFound({ id: sequenceId, stepId })
        return rows[0]
      })

    const stepsOf = (sequenceId: string) =>
      sql<StepRow>`SELECT ${sql.literal(STEP_COLUMNS)} FROM sequence_steps WHERE sequence_id = ${sequenceId} ORDER BY position`

    const create = (owner: Owner, sequenceId: string, fields: StepFields) =>
      sql.withTransaction(Effect.gen(function*() {
        const sequence = yield* findSequence(owner, sequenceId, true)
        const ready = yield* checked(owner, sequence, fields)
        const at = yield* now
        const [seq] = yield* sql<{ step_seq: number }>`UPDATE sequences SET step_seq = step_seq + 1, updated_at = ${at}
          WHERE id = ${sequenceId} RETURNING step_seq`
        // Appended at the end (the sequence's row lock orders two appends).
        const [last] = yield* sql<{ position: number }>`SELECT coalesce(max(position), 0)::integer AS position
          FROM sequence_steps WHERE sequence_id = ${sequenceId}`
        const [placed] = yield* sql<StepRow>`INSERT INTO sequence_steps ${
          sql.insert({ ...ready, sequence_id: sequenceId, id: seq!.step_seq, position: last!.position + 1, created_at: at, updated_at: at })
        }
          RETURNING ${sql.literal(STEP_COLUMNS)}`
        // Subscriptions that had every step queued now have one more to come.
        yield* reschedule(sequenceId, at)
        return stepView(placed!)
      }))

    const list = (owner: Owner, sequenceId: string) =>
      Effect.gen(function*() {
        yield* findSequence(owner, sequenceId)
        return (yield* stepsOf(sequenceId)).map(stepView)
      })

    const read = (owner: Owner, sequenceId: string, stepId: number) =>
      Effect.gen(function*() {
        yield* findSequence(owner, sequenceId)
        return stepView(yield* findStep(sequenceId, stepId))
      })

    const update = (owner: Owner, sequenceId: string, stepId: number, patch: StepPatch) =>
      sql.withTransaction(Effect.gen(function*() {
        const sequence = yield* findSequence(owner, sequenceId, true)
        const current = yield* findStep(sequenceId, stepId)
        const given = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined))
        const merged: StepFields = { ...current, ...given }
        if (patch.html !== undefined && patch.html !== null && merged.mjml !== null && patch.mjml === undefined) return yield* htmlFromMjml
        const ready = yield* checked(owner, sequence, merged)
        const at = yield* now
        const { offset_seconds, subject, preheader, mjml, html, body_text, from_email, from_name, reply_to, template_id } = ready
        const [row] = yield* sql<StepRow>`UPDATE sequence_steps SET ${
          sql.update({ offset_seconds, subject, preheader, mjml, html, body_text, from_email, from_name, reply_to, template_id, updated_at: at })
        }
          WHERE sequence_id = ${sequenceId} AND id = ${stepId} RETURNING ${sql.literal(STEP_COLUMNS)}`
        if (offset_seconds !== current.offset_seconds) yield* reschedule(sequenceId, at)
        return stepView(row!)
      }))

    const remove = (owner: Owner, sequenceId: string, stepId: number) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* findSequence(owner, sequenceId, true)
        const step = yield* findStep(sequenceId, stepId)
        yield* refuseWhileRunning(sequenceId, `Step ${stepId} cannot be deleted`)
        yield* sql`DELETE FROM sequence_steps WHERE sequence_id = ${sequenceId} AND id = ${stepId}`
        // The steps stay numbered 1..N.
        yield* sql`UPDATE sequence_steps SET position = position - 1 WHERE sequence_id = ${sequenceId} AND position > ${step.position}`
        return { id: stepId, deleted: true as const }
      }))

    const reorder = (owner: Owner, sequenceId: string, order: ReadonlyArray<number>) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* findSequence(owner, sequenceId, true)
        const ids = (yield* stepsOf(sequenceId)).map((s) => s.id)
        const given = new Set(order)
        if (given.size !== order.length || order.length !== ids.length || !ids.every((id) => given.has(id))) {
          return yield* new SequenceInvalid({
            param: "order",
            message: `order must name every step of the sequence exactly once: [${[...ids].sort((a, b) => a - b).join(", ")}]`
          })
        }
        yield* refuseWhileRunning(sequenceId, "The steps cannot be reordered")
        const at = yield* now
        yield* sql`UPDATE sequence_steps s SET position = o.position, updated_at = ${at}
          FROM unnest(${[...order]}::integer[]) WITH ORDINALITY AS o(id, position)
          WHERE s.sequence_id = ${sequenceId} AND s.id = o.id`
        return (yield* stepsOf(sequenceId)).map(stepView)
      }))

    const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
    return {
      create: (owner: Owner, sequenceId: string, fields: StepFields) => withSql(create(owner, sequenceId, fields)),
      list: (owner: Owner, sequenceId: string) => withSql(list(owner, sequenceId)),
      read: (owner: Owner, sequenceId: string, stepId: number) => withSql(read(owner, sequenceId, stepId)),
      update: (owner: Owner, sequenceId: string, stepId: number, patch: StepPatch) => withSql(update(owner, sequenceId, stepId, patch)),
      remove: (owner: Owner, sequenceId: string, stepId: number) => withSql(remove(owner, sequenceId, stepId)),
      reorder: (owner: Owner, sequenceId: string, order: ReadonlyArray<number>) => withSql(reorder(owner, sequenceId, order))
    } as const
  })
}) {}
