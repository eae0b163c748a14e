/**
 * The step scheduler's pass plan, as pure functions: which step of a claimed subscription is due,
 * what it comes to (ended, held by a send-time rule, or a message to queue with the next due
 * time), how a pass's plans split into ends, sends and holds, what each key is charged, and
 * whether another pass follows at once. StepScheduler.ts reads the rows and writes what these
 * decide; tested as tables in test/unit/pass-plan.test.ts.
 */
import type { Footer } from "../render/footer.ts"
import { quotaCountOf } from "../../lib/simulator.ts"
import type { SequenceReference } from "../../mta/queue/StoredMessage.ts"
import { textFromHtml, withPreheader } from "../render/text.ts"
import type { StepRow } from "./records.ts"
import type { EffectiveContent } from "./step-content.ts"

/** How long a held step waits before the rules are read again. */
export const HOLD_RECHECK_MS = 30_000
/** A failure's text kept as a hold reason, at most this long. */
const REASON_LENGTH = 200

/** A claimed subscription, as the claim reads it. */
export interface Claimed {
  readonly id: string
  readonly sequence_id: string
  readonly account_id: string
  readonly key_id: string
  readonly contact_id: string
  readonly last_step_id: number | null
  readonly next_due_at: Date
}

export interface ContactRow {
  readonly email: string
  readonly name: string | null
  readonly metadata: Readonly<Record<string, unknown>>
}

/** What a subscription's due step came to. */
export type Sent = { readonly _tag: "queued" } | { readonly _tag: "held"; readonly reason: string } | { readonly _tag: "ended" }
export const queued: Sent = { _tag: "queued" }
export const ended: Sent = { _tag: "ended" }
export const held = (reason: string): Sent => ({ _tag: "held", reason })
/** A step that failed to queue waits like a held one; the failure is its reason. */
export const failed = (error: unknown): Sent => held(`error: ${error}`.slice(0, REASON_LENGTH))

/** When a held step is looked at again. */
export const heldUntil = (now: Date) => new Date(now.getTime() + HOLD_RECHECK_MS)

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

/** The step after the one with id `lastStepId` (null: the first), by position; `steps` in position order. */
export const stepAfter = (steps: ReadonlyArray<StepRow>, lastStepId: number | null): StepRow | undefined => {
  const last = lastStepId === null ? undefined : steps.find((step) => step.id === lastStepId)
  return steps.find((step) => step.position > (last?.position ?? 0))
}

/** The next step falls due its offset after this one's due time (not after the queueing), so timing does not drift with the queue. */
export const nextDueAt = (dueAt: Date, following: StepRow | undefined): Date | null =>
  following === undefined ? null : new Date(dueAt.getTime() + following.offset_seconds * 1000)

/** The hold reason of each send-time refusal (refuseSender's errors). */
export const holdReasons = {
  AccountSuspended: "account_suspended",
  SendingPaused: "sending_paused",
  SenderDomainNotAuthorized: "domain_unverified"
} as const

/** The shared part of a step's messages: the text part from the HTML when the step has none, the preheader in the HTML. */
export const stepMessage = (content: EffectiveContent, from: string, footer?: Footer): typeof SequenceReference.Type["message"] => {
  const html = content.html === "" ? null : withPreheader(content.html, content.preheader)
  const text = content.body_text !== "" ? content.body_text : textFromHtml(content.html)
  return {
    // The key's footer, added at render time to each part without `{{ unsubscribe_url }}` (src/bulk/render/footer.ts).
    ...(footer === undefined ? {} : { footer }),
    from: content.from_name === null ? { email: from } : { email: from, name: content.from_name },
    ...(content.reply_to === null ? {} : { reply_to: { email: content.reply_to } }),
    subject: content.subject,
    content: [
      { type: "text/plain" as const, value: text },
      ...(html === null ? [] : [{ type: "text/html" as const, value: html }])
    ]
  }
}

/** The stored message of one subscription's step: the step's shared part and the contact's own fields. */
export const storedStep = (
  sub: Claimed,
  step: StepRow,
  content: EffectiveContent,
  contact: ContactRow,
  message: typeof SequenceReference.Type["message"]
): typeof SequenceReference.Type => ({
  _tag: "sequence",
  origin: "sequence",
  channel: "bulk",
  sequence_id: sub.sequence_id,
  step: step.id,
  contact_id: sub.contact_id,
  to: contact.name === null ? { email: contact.email } : { email: contact.email, name: contact.name },
  variables: contactVariables(content.vars, contact),
  message
})

/** Simulator recipients never count against the monthly quota (src/lib/simulator.ts). */
export const countsAgainstQuota = (contact: ContactRow) => quotaCountOf([contact.email]) > 0

const isSend = <S extends { readonly _tag: "send" }>(plan: S | Sent): plan is S => plan._tag === "send"

/** A pass's plans split: subscriptions with no step left, steps to queue, and steps held with their reason. */
export const splitPass = <S extends { readonly _tag: "send" }>(
  plans: ReadonlyArray<{ readonly sub: Claimed; readonly plan: S | Sent }>
) => ({
  ends: plans.filter(({ plan }) => plan._tag === "ended").map(({ sub }) => sub),
  sends: plans.flatMap(({ plan }) => (isSend(plan) ? [plan] : [])),
  holds: plans.flatMap(({ sub, plan }) => (!isSend(plan) && plan._tag === "held" ? [{ sub, reason: plan.reason }] : []))
})

/** What each key is charged for a pass's freshly recorded steps: one reservation per key (with that key's limits). */
export const chargesByKey = <L>(fresh: ReadonlyArray<{ readonly sub: Claimed; readonly limits: L; readonly charged: boolean }>) => {
  const perKey = new Map<string, { readonly limits: L; count: number }>()
  for (const x of fresh) {
    if (!x.charged) continue
    const entry = perKey.get(x.sub.key_id) ?? { limits: x.limits, count: 0 }
    entry.count += 1
    perKey.set(x.sub.key_id, entry)
  }
  return perKey
}

/** A pass that claimed its whole batch leaves more due: the next pass follows at once rather than at the tick. */
export const morePassesDue = (claimed: number, batch: number) => claimed >= batch
