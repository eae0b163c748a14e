/**
 * Which event a delivery's outcome emits depends on where the message came from: shared/DESIGN.md
 * "Outcome events by origin", written down once here. Bulk mail never emits `email.sent` or
 * `email.failed` (those carry a transactional `request_id`); confirmation mail, test-sends and
 * system mail emit nothing when sent or failed (logged and audited only); a bounce or complaint
 * emits the same event whatever the origin, except for system mail, which has no account to tell.
 */
import {
  CampaignEmailFailed,
  CampaignEmailSent,
  EmailBounced,
  EmailComplained,
  EmailFailed,
  EmailSent,
  type HeraldEvent,
  SequenceStepFailed,
  SequenceStepSent
} from "./schema.ts"

export { OUTCOME_EVENTS, type Origin, type OutcomeKind } from "./schema.ts"

/** What the outcome events need to know of the delivery. */
export type DeliveryFacts =
  & { readonly recipient: string; readonly message_id: string; readonly subject: string }
  & (
    | { readonly origin: "transactional"; readonly request_id: string }
    | { readonly origin: "campaign"; readonly campaign_id: string }
    | { readonly origin: "sequence"; readonly sequence_id: string }
    | { readonly origin: "confirmation" | "test_send" | "system" }
  )

export type OutcomeFacts =
  | { readonly _tag: "sent" }
  | { readonly _tag: "failed"; readonly error: string }
  | { readonly _tag: "bounced"; readonly status: string; readonly category: "hard" | "soft"; readonly diagnostic: string | null }
  | { readonly _tag: "complained"; readonly isp: string; readonly subject: string | null }

/** The event an outcome of this delivery emits, or null where its origin emits none. */
export const outcomeEvent = (d: DeliveryFacts, o: OutcomeFacts): HeraldEvent | null => {
  // System mail (a TLS report) belongs to no account: there are no webhooks to tell, so even its
  // bounce is only logged and kept in its delivery's attempts (docs/decisions.md).
  if (d.origin === "system") return null
  switch (o._tag) {
    case "bounced":
      return EmailBounced.make({ recipient: d.recipient, status: o.status, category: o.category, diagnostic: o.diagnostic, message_id: d.message_id })
    case "complained":
      return EmailComplained.make({ email: d.recipient, isp: o.isp, subject: o.subject ?? d.subject })
    case "sent":
    case "failed": {
      const error = o._tag === "failed" ? o.error : ""
      switch (d.origin) {
        case "transactional": {
          const fields = { request_id: d.request_id, to: [d.recipient], subject: d.subject, message_id: d.message_id }
          return o._tag === "sent" ? EmailSent.make(fields) : EmailFailed.make({ ...fields, error })
        }
        case "campaign": {
          const fields = { email: d.recipient, campaign_id: d.campaign_id }
          return o._tag === "sent" ? CampaignEmailSent.make(fields) : CampaignEmailFailed.make({ ...fields, error })
        }
        case "sequence": {
          const fields = { email: d.recipient, campaign_id: d.sequence_id }
          return o._tag === "sent" ? SequenceStepSent.make(fields) : SequenceStepFailed.make(fields)
        }
        default:
          return null
      }
    }
  }
}
