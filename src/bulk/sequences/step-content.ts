/**
 * What a step sends: each field is the step's own when it has one, else its template's, and the
 * sender falls back to the sequence's defaults. The same merge decides at save time (so a broken
 * or empty step is refused when saved) and at due time (so a step or template edited after
 * enrolment is sent as it is when it falls due). MJML is compiled when the step is saved, never
 * per recipient (DESIGN "One rendering engine").
 */
import { Data, Effect } from "effect"
import type { RenderEngineShape } from "../render/RenderEngine.ts"
import { MAX_TEMPLATE_BYTES, type MessageContent } from "../templates/fields.ts"

/** A step's own content fields, as stored (null: taken from the template). */
export interface StepFields {
  readonly offset_seconds: number
  readonly subject: string | null
  readonly preheader: string | null
  readonly mjml: string | null
  readonly html: string | null
  readonly body_text: string | null
  readonly from_email: string | null
  readonly from_name: string | null
  readonly reply_to: string | null
  readonly template_id: string | null
}

/** The part of a template a step may take. */
export type TemplateContent = MessageContent

export interface SenderDefaults {
  readonly from_email: string | null
  readonly from_name: string | null
  readonly reply_to: string | null
}

export type EffectiveContent = MessageContent

/** A step that would send nothing usable: `param` names the field to give. */
export class StepIncomplete extends Data.TaggedError("StepIncomplete")<{ readonly param: string; readonly message: string }> {}
export class StepTooLarge extends Data.TaggedError("StepTooLarge")<{ readonly bytes: number }> {}

const pick = <A>(own: A | null, inherited: A | null | undefined): A | null => own ?? inherited ?? null

export const effectiveContent = (step: StepFields, template: TemplateContent | null, sequence: SenderDefaults): EffectiveContent => ({
  subject: pick(step.subject, template?.subject) ?? "",
  html: pick(step.html, template?.html) ?? "",
  body_text: pick(step.body_text, template?.body_text) ?? "",
  preheader: pick(step.preheader, template?.preheader),
  vars: template?.vars ?? {},
  from_email: pick(step.from_email, template?.from_email) ?? sequence.from_email,
  from_name: pick(step.from_name, template?.from_name) ?? sequence.from_name,
  reply_to: pick(step.reply_to, template?.reply_to) ?? sequence.reply_to
})

const ownBytes = (s: StepFields) =>
  [s.subject, s.preheader, s.mjml, s.html, s.body_text, s.from_email, s.from_name, s.reply_to]
    .reduce((n, f) => n + (f === null ? 0 : Buffer.byteLength(f)), 0)

/**
 * The step as it will be stored (html compiled from its mjml), checked: at most 512 KB of own
 * fields, a subject and a body from somewhere, a sender from somewhere, every field parsed.
 */
export const readyStep = (engine: RenderEngineShape, accountId: string, step: StepFields, template: TemplateContent | null, sequence: SenderDefaults) =>
  Effect.gen(function*() {
    const before = ownBytes(step)
    if (before > MAX_TEMPLATE_BYTES) return yield* new StepTooLarge({ bytes: before })
    const ready: StepFields = step.mjml === null ? step : { ...step, html: yield* engine.mjml(accountId, step.mjml) }
    const after = ownBytes(ready)
    if (after > MAX_TEMPLATE_BYTES) return yield* new StepTooLarge({ bytes: after })
    const content = effectiveContent(ready, template, sequence)
    if (content.subject.trim() === "") {
      return yield* new StepIncomplete({ param: "subject", message: "A step needs a subject: give subject, or a template_id whose template has one" })
    }
    if (content.html === "" && content.body_text === "") {
      return yield* new StepIncomplete({ param: "html", message: "A step needs a body: give html, mjml or body_text, or a template_id" })
    }
    if (content.from_email === null) {
      return yield* new StepIncomplete({
        param: "from_email",
        message: "No sender: give from_email on the step, its template or the sequence"
      })
    }
    yield* engine.check(accountId, content)
    return ready
  })
