/**
 * Which personalizations of a send are queued, and for whom: the pure decision behind `items[]`.
 *
 * Statuses (docs/sending.md "Item statuses"), decided per personalization in request order:
 * - skipped: every recipient was already addressed by an earlier personalization of this request
 *   (de-duplication across personalizations; case-insensitive), so nothing is left to send;
 * - failed: it could not be queued: more recipients than one message may carry (maxRecipients,
 *   HERALD_MAX_RECIPIENTS; MX servers refuse long RCPT lists);
 * - rejected: every remaining recipient is refused by policy (a recipient domain on the platform
 *   block list), possibly mixed with suppressed ones;
 * - suppressed: every remaining recipient is on the account's or the platform's suppression list
 *   (or is the simulator's `suppressed@simulator.herald.invalid`, which acts as if it were, without
 *   being on any list);
 * - queued: at least one recipient remains; suppressed and blocked recipients are left out.
 */
import { domainOf } from "../lib/email.ts"
import { simulatorScenario } from "../lib/simulator.ts"

export interface Recipient {
  readonly email: string
  readonly name?: string | undefined
  readonly kind: "to" | "cc" | "bcc"
}

export type ItemStatus = "queued" | "failed" | "skipped" | "suppressed" | "rejected"

export interface PlannedItem {
  readonly index: number
  readonly status: ItemStatus
  /** The recipients to deliver to (queued items only). */
  readonly recipients: ReadonlyArray<Recipient>
  readonly error?: string
}

export interface PlanInput {
  readonly personalizations: ReadonlyArray<ReadonlyArray<Recipient>>
  readonly suppressed: ReadonlyMap<string, string>
  readonly blockedDomains: ReadonlySet<string>
  readonly maxRecipients: number
}

/** Why `email` is suppressed, if it is: its suppression's reason, or the simulator's scenario. */
const suppressionOf = (input: PlanInput, email: string): string | undefined =>
  input.suppressed.get(email.toLowerCase()) ?? (simulatorScenario(email) === "suppressed" ? "simulator" : undefined)

export const planItems = (input: PlanInput): ReadonlyArray<PlannedItem> => {
  const seen = new Set<string>()
  return input.personalizations.map((recipients, index): PlannedItem => {
    const fresh = recipients.filter((r) => {
      const key = r.email.toLowerCase()
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
    if (fresh.length === 0) {
      return { index, status: "skipped", recipients: [], error: "every recipient is already addressed by an earlier personalization" }
    }
    if (fresh.length > input.maxRecipients) {
      return {
        index,
        status: "failed",
        recipients: [],
        error: `${fresh.length} recipients; one message may have at most ${input.maxRecipients}`
      }
    }
    const blocked = fresh.filter((r) => input.blockedDomains.has(domainOf(r.email)))
    const suppressed = fresh.filter((r) => suppressionOf(input, r.email) !== undefined)
    const deliverable = fresh.filter((r) => !blocked.includes(r) && !suppressed.includes(r))
    if (deliverable.length > 0) return { index, status: "queued", recipients: deliverable }
    if (blocked.length > 0) {
      return {
        index,
        status: "rejected",
        recipients: [],
        error: `recipient domain refused by policy: ${[...new Set(blocked.map((r) => domainOf(r.email)))].join(", ")}`
      }
    }
    return {
      index,
      status: "suppressed",
      recipients: [],
      error: `every recipient is suppressed (${suppressed.map((r) => `${r.email}: ${suppressionOf(input, r.email)}`).join(", ")})`
    }
  })
}
