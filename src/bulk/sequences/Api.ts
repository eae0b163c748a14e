/**
 * /v1/bulk/sequences: automated multi-step mailings of the calling key (REST conventions of
 * shared/DESIGN.md "Rules shared by the bulk issues"), their steps (the spec's "Sequence step"
 * shape exactly), the steps' order, enrolment of a list, and the subscriptions with their
 * pause, resume and cancel actions.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { BadRequest, Conflict, NotFound, PayloadTooLarge, RateLimited, Unprocessable } from "../../http/errors.ts"
import { EmailAddress } from "../../lib/email.ts"
import { boundedArray, boundedText, ContentText, IdText, LineText, MAX_NAME_LENGTH, queryInt } from "../../http/bounds.ts"

const Name = boundedText(MAX_NAME_LENGTH, { trim: true, minLength: 1 })
const Short = LineText
/** More steps than any drip sequence has; the order call names them all. */
const MAX_STEPS_IN_ORDER = 1000
const Status = Schema.Literal("active", "inactive")
const State = Schema.Literal("active", "paused", "completed", "cancelled")
const Reason = Schema.Literal("unsubscribed", "manual", "bounced", "complained", "suppressed")

const TRIGGER_DESCRIPTION = "list_joined: a contact whose membership of list_id becomes sendable (added confirmed, or confirmed from pending) "
  + "is enrolled, in the same transaction, while the sequence is active (no backfill of members already there). The list must be this key's; "
  + "a list a trigger names is in use: not deleted (409)"
const TriggerView = Schema.Struct({ type: Schema.Literal("list_joined"), list_id: Schema.String })
  .annotations({ identifier: "SequenceTrigger", description: TRIGGER_DESCRIPTION })
const TriggerInput = Schema.Struct({ type: Schema.Literal("list_joined"), list_id: IdText }).annotations({ description: TRIGGER_DESCRIPTION })

export const Sequence = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: Status.annotations({ description: "inactive: enrolment is refused and due steps are held, then sent when active again" }),
  from_email: Schema.NullOr(Schema.String),
  from_name: Schema.NullOr(Schema.String),
  reply_to: Schema.NullOr(Schema.String),
  trigger: Schema.NullOr(TriggerView),
  created_at: Schema.String,
  step_count: Schema.Int,
  subscriptions: Schema.Struct({ active: Schema.Int, paused: Schema.Int, completed: Schema.Int, cancelled: Schema.Int })
    .annotations({ description: "Subscriptions by state" })
}).annotations({ identifier: "Sequence" })

export const Step = Schema.Struct({
  id: Schema.Int,
  sequence_id: Schema.String,
  position: Schema.Int,
  offset_seconds: Schema.Int.annotations({ description: "From the previous step's due time (from enrolment for the first)" }),
  subject: Schema.NullOr(Schema.String),
  preheader: Schema.NullOr(Schema.String).annotations({ description: "Inbox preview text" }),
  mjml: Schema.NullOr(Schema.String).annotations({ description: "MJML design source; html is what is sent (compiled when saved)" }),
  html: Schema.NullOr(Schema.String),
  body_text: Schema.NullOr(Schema.String),
  from_email: Schema.NullOr(Schema.String),
  from_name: Schema.NullOr(Schema.String),
  reply_to: Schema.NullOr(Schema.String),
  template_id: Schema.NullOr(Schema.String).annotations({ description: "Content taken from this template where the step's own field is null" })
}).annotations({ identifier: "SequenceStep" })

export const Subscription = Schema.Struct({
  id: Schema.String,
  sequence_id: Schema.String,
  contact_id: Schema.NullOr(Schema.String).annotations({ description: "null once the contact was deleted (its ended subscription is kept, so the address is not enrolled again)" }),
  email: Schema.String,
  state: State,
  reason: Schema.NullOr(Reason).annotations({ description: "Why a cancelled subscription was cancelled" }),
  last_step_id: Schema.NullOr(Schema.Int).annotations({ description: "The last step queued for this contact" }),
  next_due_at: Schema.NullOr(Schema.String),
  hold_reason: Schema.NullOr(Schema.String).annotations({
    description: "Why a due step waits (quota, account, sender domain, postal_address_missing: the key has no postal address); render_failed: the subscription is paused because its step's content was stopped at the render deadline 3 times (resume tries again)"
  }),
  enrolled_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "SequenceSubscription" })

const Limit = Schema.optionalWith(queryInt(1, 200), { default: () => 50 })
const Offset = Schema.optionalWith(queryInt(0), { default: () => 0 })
const page = <A, I>(item: Schema.Schema<A, I>) => Schema.Struct({ total: Schema.Int, limit: Schema.Int, offset: Schema.Int, items: Schema.Array(item) })

const SequenceCreate = Schema.Struct({
  name: Name,
  status: Schema.optionalWith(Status, { default: () => "active" as const }),
  from_email: Schema.optionalWith(Schema.NullOr(EmailAddress), { default: () => null }),
  from_name: Schema.optionalWith(Schema.NullOr(Short), { default: () => null }),
  reply_to: Schema.optionalWith(Schema.NullOr(EmailAddress), { default: () => null }),
  trigger: Schema.optionalWith(Schema.NullOr(TriggerInput), { default: () => null })
})
const SequencePatch = Schema.Struct({
  name: Schema.optional(Name),
  status: Schema.optional(Status),
  from_email: Schema.optional(Schema.NullOr(EmailAddress)),
  from_name: Schema.optional(Schema.NullOr(Short)),
  reply_to: Schema.optional(Schema.NullOr(EmailAddress)),
  trigger: Schema.optional(Schema.NullOr(TriggerInput).annotations({ description: "null removes the trigger" }))
})

const Offset_seconds = Schema.Int.pipe(Schema.between(0, 10 * 365 * 86_400))
const stepFields = {
  subject: Schema.NullOr(Short),
  preheader: Schema.NullOr(Short),
  mjml: Schema.NullOr(ContentText),
  html: Schema.NullOr(ContentText),
  body_text: Schema.NullOr(ContentText),
  from_email: Schema.NullOr(EmailAddress),
  from_name: Schema.NullOr(Short),
  reply_to: Schema.NullOr(EmailAddress),
  template_id: Schema.NullOr(IdText)
}
const StepCreate = Schema.Struct({
  offset_seconds: Schema.optionalWith(Offset_seconds, { default: () => 0 }),
  subject: Schema.optionalWith(stepFields.subject, { default: () => null }),
  preheader: Schema.optionalWith(stepFields.preheader, { default: () => null }),
  mjml: Schema.optionalWith(stepFields.mjml, { default: () => null }),
  html: Schema.optionalWith(stepFields.html, { default: () => null }),
  body_text: Schema.optionalWith(stepFields.body_text, { default: () => null }),
  from_email: Schema.optionalWith(stepFields.from_email, { default: () => null }),
  from_name: Schema.optionalWith(stepFields.from_name, { default: () => null }),
  reply_to: Schema.optionalWith(stepFields.reply_to, { default: () => null }),
  template_id: Schema.optionalWith(stepFields.template_id, { default: () => null })
})
const StepPatch = Schema.Struct({
  offset_seconds: Schema.optional(Offset_seconds),
  subject: Schema.optional(stepFields.subject),
  preheader: Schema.optional(stepFields.preheader),
  mjml: Schema.optional(stepFields.mjml),
  html: Schema.optional(stepFields.html),
  body_text: Schema.optional(stepFields.body_text),
  from_email: Schema.optional(stepFields.from_email),
  from_name: Schema.optional(stepFields.from_name),
  reply_to: Schema.optional(stepFields.reply_to),
  template_id: Schema.optional(stepFields.template_id)
})

const EnrollRequest = Schema.Struct({
  list_id: Schema.optional(IdText).annotations({ description: "The list whose sendable contacts are enrolled (exactly one of list_id, segment_id)" }),
  segment_id: Schema.optional(IdText).annotations({ description: "The saved segment whose sendable contacts are enrolled (exactly one of list_id, segment_id)" })
}).annotations({ examples: [{ list_id: "ls_4Tg8Hk2Mn6Pq1Rs5Vw9X" }, { segment_id: "sg_2Bc6Df0Gh4Jk8Lm1Np5Q" }] })
const EnrollResult = Schema.Struct({
  enrolled: Schema.Int.annotations({ description: "New subscriptions" }),
  already_in: Schema.Int.annotations({ description: "Active or paused subscriptions, unchanged" }),
  skipped_terminal: Schema.Int.annotations({ description: "An earlier subscription ended: not enrolled again" }),
  suppressed: Schema.Int.annotations({ description: "Active contacts whose address is on a suppression list (account or platform)" }),
  total: Schema.Int.annotations({ description: "Active contacts in the list or segment" }),
  truncated: Schema.Boolean.annotations({ description: "Eligible contacts remain unenrolled (HERALD_ENROLL_CAP per run): enrol again to continue" })
}).annotations({ identifier: "EnrollResult" })

const ById = Schema.Struct({ id: IdText })
const StepPath = Schema.Struct({ id: IdText, step_id: queryInt(0) })
const SubscriptionPath = Schema.Struct({ id: IdText, subscription_id: IdText })
const Deleted = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })
const StepDeleted = Schema.Struct({ id: Schema.Int, deleted: Schema.Literal(true) })

const action = <const Name extends "pause" | "resume" | "cancel">(name: Name, summary: string) =>
  HttpApiEndpoint.post(name, `/v1/bulk/sequences/:id/subscriptions/:subscription_id/${name}`).setPath(SubscriptionPath)
    .addSuccess(Subscription).annotate(OpenApi.Summary, summary)

export class SequencesGroup extends HttpApiGroup.make("sequences")
  .add(
    HttpApiEndpoint.post("create", "/v1/bulk/sequences").setPayload(SequenceCreate).addSuccess(Sequence, { status: 201 })
      .annotate(OpenApi.Summary, "Create a sequence (automated steps sent at offsets after enrolment)")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/bulk/sequences").setUrlParams(Schema.Struct({ limit: Limit, offset: Offset })).addSuccess(page(Sequence)).addError(Unprocessable)
      .annotate(OpenApi.Summary, "List the key's sequences with their step and subscription counts")
  )
  .add(
    HttpApiEndpoint.get("read", "/v1/bulk/sequences/:id").setPath(ById).addSuccess(Sequence)
      .annotate(OpenApi.Summary, "A sequence with its step and subscription counts")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/bulk/sequences/:id").setPath(ById).setPayload(SequencePatch).addSuccess(Sequence)
      .annotate(OpenApi.Summary, "Update a sequence's name, status, sender or trigger")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/bulk/sequences/:id").setPath(ById).addSuccess(Deleted)
      .annotate(OpenApi.Summary, "Delete a sequence (409 while a subscription is active or paused)")
  )
  .add(
    HttpApiEndpoint.post("createStep", "/v1/bulk/sequences/:id/steps").setPath(ById).setPayload(StepCreate).addSuccess(Step, { status: 201 })
      .annotate(OpenApi.Summary, "Append a step (content from its template or its own fields; its own win)")
  )
  .add(
    HttpApiEndpoint.get("steps", "/v1/bulk/sequences/:id/steps").setPath(ById).addSuccess(Schema.Array(Step))
      .annotate(OpenApi.Summary, "The sequence's steps in order")
  )
  .add(
    HttpApiEndpoint.put("order", "/v1/bulk/sequences/:id/steps/order").setPath(ById)
      .setPayload(Schema.Struct({ order: boundedArray(Schema.Int, MAX_STEPS_IN_ORDER).annotations({ description: "Ids of ALL steps of the sequence in the desired order" }) }))
      .addSuccess(Schema.Array(Step))
      .annotate(OpenApi.Summary, "Reorder the steps (409 while a subscription is active or paused); answers them renumbered 1..N")
  )
  .add(
    HttpApiEndpoint.get("readStep", "/v1/bulk/sequences/:id/steps/:step_id").setPath(StepPath).addSuccess(Step)
      .annotate(OpenApi.Summary, "One step of a sequence")
  )
  .add(
    HttpApiEndpoint.patch("updateStep", "/v1/bulk/sequences/:id/steps/:step_id").setPath(StepPath).setPayload(StepPatch).addSuccess(Step)
      .annotate(OpenApi.Summary, "Update some fields of a step")
  )
  .add(
    HttpApiEndpoint.del("removeStep", "/v1/bulk/sequences/:id/steps/:step_id").setPath(StepPath).addSuccess(StepDeleted)
      .annotate(OpenApi.Summary, "Delete a step (409 while a subscription is active or paused)")
  )
  .add(
    HttpApiEndpoint.post("enroll", "/v1/bulk/sequences/:id/enroll").setPath(ById).setPayload(EnrollRequest).addSuccess(EnrollResult)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "Enrol every sendable contact of a list or a segment (idempotent; counts against the per-minute rate limit)")
      .annotate(OpenApi.Description, "Exactly one of list_id and segment_id (neither or both → 400 validation_failed naming it); another key's "
        + "list or segment → 404. At most HERALD_ENROLL_CAP new subscriptions per call (truncated: enrol again to continue).")
  )
  .add(
    HttpApiEndpoint.get("subscriptions", "/v1/bulk/sequences/:id/subscriptions").setPath(ById)
      .setUrlParams(Schema.Struct({ state: Schema.optional(State), limit: Limit, offset: Offset }))
      .addSuccess(page(Subscription))
      .annotate(OpenApi.Summary, "The sequence's subscriptions (filter by state)")
  )
  .add(action("pause", "Pause a subscription (active → paused)"))
  .add(action("resume", "Resume a subscription (paused → active; due at the later of its due time and now)"))
  .add(action("cancel", "Cancel a subscription (active or paused → cancelled, reason manual)"))
  .addError(NotFound)
  .addError(BadRequest)
  .addError(Conflict)
  .addError(PayloadTooLarge)
  .addError(RateLimited)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sequences")
{}
