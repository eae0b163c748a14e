/** The reference's errors and examples for /v1/bulk/sequences (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { SequencesGroup } from "./Api.ts"

const SEQUENCE_ID = "sq_1aS4dF7gH2jK5lZ8xC3v"
const SUBSCRIPTION_ID = "ss_9qW2eR5tY8uI1oP4aS7d"
const NOT_FOUND = "404 `not_found` when this key has no sequence `{id}`."
const STEP_NOT_FOUND = "404 `not_found` when this key has no sequence `{id}` or it has no step `{step_id}`."
const SUBSCRIPTION_NOT_FOUND = "404 `not_found` when this key has no sequence `{id}` or it has no subscription `{subscription_id}`."
const RUNNING = "409 `conflict` while a subscription is active or paused."
const TRIGGER = "400 `validation_failed` (param `trigger.list_id`) when this key has no such list."
const STEP_CONTENT = "400 `validation_failed` (param names the field) for a template_id this key does not have, a step with no "
  + "subject or body of its own nor from its template, or html given while mjml compiles it; `render_failed` when the content "
  + "does not compile; 413 `payload_too_large` over 512 KB of the step's own fields; 503 `render_busy` when every render worker is taken."

const sequence = {
  id: SEQUENCE_ID,
  name: "Onboarding",
  status: "active",
  from_email: "hello@example.org",
  from_name: "Example",
  reply_to: null,
  trigger: { type: "list_joined", list_id: "ls_2kR7mW4pX9vB1nQ6tZ3c" },
  created_at: "2026-11-02T10:15:00.000Z",
  step_count: 2,
  subscriptions: { active: 40, paused: 1, completed: 12, cancelled: 2 }
}

const step = {
  id: 11,
  sequence_id: SEQUENCE_ID,
  position: 1,
  offset_seconds: 0,
  subject: "Welcome, {{ name }}",
  preheader: null,
  mjml: null,
  html: "<p>Welcome, {{ name }}. Here is how to start.</p>",
  body_text: null,
  from_email: null,
  from_name: null,
  reply_to: null,
  template_id: null
}
const second = { ...step, id: 12, position: 2, offset_seconds: 259200, subject: "Three tips", html: null, template_id: "tp_4mQ8vR2kT6wX9zB3nC5d" }

const subscription = {
  id: SUBSCRIPTION_ID,
  sequence_id: SEQUENCE_ID,
  contact_id: "ct_8pL3xN6vQ1sT4wY7zA2b",
  email: "ada@example.org",
  state: "active",
  reason: null,
  last_step_id: 11,
  next_due_at: "2026-11-05T09:00:00.000Z",
  hold_reason: null,
  enrolled_at: "2026-11-02T09:00:00.000Z",
  updated_at: "2026-11-02T09:00:01.000Z"
}

export const sequencesReference: GroupReference<typeof SequencesGroup> = {
  create: {
    errors: TRIGGER,
    request: { name: "Onboarding", status: "active", from_email: "hello@example.org", from_name: "Example" },
    response: { ...sequence, trigger: null, step_count: 0, subscriptions: { active: 0, paused: 0, completed: 0, cancelled: 0 } }
  },
  list: {
    errors: "422 `query_too_expensive` when the read runs past the statement timeout.",
    response: { total: 1, limit: 50, offset: 0, items: [sequence] }
  },
  read: { errors: NOT_FOUND, response: sequence },
  update: {
    errors: `${NOT_FOUND} 400 \`validation_failed\` (param \`from_email\`) when removing the sender while a step takes its sender from the sequence; ${TRIGGER}`,
    request: { trigger: { type: "list_joined", list_id: "ls_2kR7mW4pX9vB1nQ6tZ3c" } },
    response: sequence
  },
  remove: { errors: `${NOT_FOUND} ${RUNNING}`, response: { id: SEQUENCE_ID, deleted: true } },
  createStep: {
    errors: `${NOT_FOUND} ${STEP_CONTENT}`,
    request: { offset_seconds: 0, subject: "Welcome, {{ name }}", html: "<p>Welcome, {{ name }}. Here is how to start.</p>" },
    response: step
  },
  steps: { errors: NOT_FOUND, response: [step, second] },
  order: {
    errors: `${NOT_FOUND} ${RUNNING} 400 \`validation_failed\` (param \`order\`) unless order names every step exactly once.`,
    request: { order: [12, 11] },
    response: [{ ...second, position: 1 }, { ...step, position: 2 }]
  },
  readStep: { errors: STEP_NOT_FOUND, response: step },
  updateStep: {
    errors: `${STEP_NOT_FOUND} ${STEP_CONTENT}`,
    request: { offset_seconds: 3600, subject: "Welcome aboard, {{ name }}" },
    response: { ...step, offset_seconds: 3600, subject: "Welcome aboard, {{ name }}" }
  },
  removeStep: { errors: `${STEP_NOT_FOUND} ${RUNNING}`, response: { id: 12, deleted: true } },
  enroll: {
    errors: `${NOT_FOUND.replace("sequence `{id}`.", "sequence `{id}`, or no such list or segment.")} 400 \`validation_failed\` `
      + "when neither or both of list_id and segment_id are given (param names it), the sequence is inactive (param `status`) or "
      + "has no steps (param `steps`); 422 `query_too_expensive` when the audience query runs past the long statement timeout; "
      + "429 `rate_limit_exceeded` over the key's per-minute window shared with sends.",
    request: { list_id: "ls_2kR7mW4pX9vB1nQ6tZ3c" },
    response: { enrolled: 40, already_in: 2, skipped_terminal: 1, suppressed: 1, total: 44, truncated: false }
  },
  subscriptions: { errors: NOT_FOUND, response: { total: 1, limit: 50, offset: 0, items: [subscription] } },
  pause: {
    errors: `${SUBSCRIPTION_NOT_FOUND} 409 \`conflict\` unless the subscription is active.`,
    response: { ...subscription, state: "paused", updated_at: "2026-11-03T08:00:00.000Z" }
  },
  resume: {
    errors: `${SUBSCRIPTION_NOT_FOUND} 409 \`conflict\` unless the subscription is paused.`,
    response: { ...subscription, updated_at: "2026-11-03T09:00:00.000Z" }
  },
  cancel: {
    errors: `${SUBSCRIPTION_NOT_FOUND} 409 \`conflict\` unless the subscription is active or paused.`,
    response: { ...subscription, state: "cancelled", reason: "manual", next_due_at: null, updated_at: "2026-11-03T08:00:00.000Z" }
  }
}
