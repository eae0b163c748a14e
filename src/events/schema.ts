/**
 * Every event Herald emits, as one closed vocabulary: an `effect/Schema` struct per event with
 * exactly the spec's fields ("Event kinds and fields"), joined in one union. The outbox writer
 * (./outbox.ts) accepts only `HeraldEvent`, so an event with a misspelt name or a missing field does
 * not compile; the webhook documents (./documents.ts) are generated from the same structs.
 *
 * A struct holds the event-specific fields and its `event` name. The receiver's body adds the
 * common fields `id`, `ts` and `app` (`WebhookStore` RECEIVER_BODY, the one place that builds it),
 * described here by `ReceiverBody`.
 */
import { Option, Schema, SchemaAST } from "effect"

const Email = Schema.String.annotations({ description: "The recipient's address" })
const CampaignId = Schema.String.annotations({ description: "The campaign's id (for sequence events, the sequence's id)" })

/** An event struct: `event` is a tag, filled in by `make`, so constructors take only the fields. */
const event = <const Name extends string, Fields extends Schema.Struct.Fields>(
  name: Name,
  description: string,
  fields: Fields
) => Schema.Struct({ event: Schema.tag(name), ...fields }).annotations({ identifier: name, description })

const transactional = {
  request_id: Schema.String.annotations({ description: "The send request's id (the 202 answer's `request_id`)" }),
  to: Schema.Array(Email).annotations({ description: "The delivery's recipient (one per event)" }),
  subject: Schema.String,
  message_id: Schema.String.annotations({ description: "The message's id (header X-Herald-Message-Id)" })
}

export const EmailSent = event("email.sent", "Transactional email accepted by the recipient's server", transactional)
export const EmailFailed = event("email.failed", "Transactional email failed for good (retries exhausted, refused at delivery time)", {
  ...transactional,
  error: Schema.String.annotations({ description: "Why, e.g. the last SMTP reply" })
})
export const EmailOpened = event("email.opened", "First open of a campaign email (tracking pixel)", {
  campaign_id: CampaignId,
  email: Email
})
export const EmailClicked = event("email.clicked", "First click on a tracked link of a campaign email", {
  campaign_id: CampaignId,
  email: Email,
  url: Schema.String.annotations({ description: "The original link" })
})
export const EmailBounced = event("email.bounced", "Hard or soft bounce, at SMTP time or by a DSN", {
  recipient: Email,
  status: Schema.String.annotations({ description: "Enhanced status code (RFC 3463), e.g. 5.1.1" }),
  category: Schema.Literal("hard", "soft").annotations({ description: "hard for 5.x.x, soft for 4.x.x" }),
  diagnostic: Schema.NullOr(Schema.String).annotations({ description: "The remote server's reply or the DSN's diagnostic" }),
  message_id: Schema.String
})
export const EmailComplained = event("email.complained", "Recipient marked the message as spam (feedback loop)", {
  email: Email,
  isp: Schema.String.annotations({ description: "The reporting provider" }),
  subject: Schema.String
})
export const ContactUnsubscribed = event("contact.unsubscribed", "Contact unsubscribed", {
  email: Email,
  scope: Schema.Literal("list", "account").annotations({
    description: "list: from one list only (list_id), the address stays mailable from other lists and for transactional mail; account: from all the account's mail (suppressed)"
  }),
  list_id: Schema.optional(Schema.String).annotations({ description: "With scope list: the list (one event per membership)" })
})
export const ContactConfirmed = event("contact.confirmed", "Double opt-in confirmed", {
  email: Email,
  list_id: Schema.String,
  list_name: Schema.String
})
export const CampaignEmailSent = event("campaign.email.sent", "Campaign email accepted by the recipient's server", {
  email: Email,
  campaign_id: CampaignId
})
export const CampaignEmailFailed = event("campaign.email.failed", "Campaign email failed for good", {
  email: Email,
  campaign_id: CampaignId,
  error: Schema.String
})
export const CampaignCompleted = event("campaign.completed", "Every delivery of the campaign reached a final state", {
  campaign_id: CampaignId,
  name: Schema.String,
  sent_count: Schema.Int,
  failed_count: Schema.Int,
  delivery_rate: Schema.Number.annotations({ description: "sent_count / total_contacts as a fraction, rounded to 4 decimals; 0 when the campaign had no contacts" })
})
export const SequenceSubscribed = event("sequence.subscribed", "Contact subscribed to a sequence", {
  email: Email,
  campaign_id: CampaignId
})
export const SequenceStepSent = event("sequence.step.sent", "Sequence step accepted by the recipient's server", {
  email: Email,
  campaign_id: CampaignId
})
export const SequenceStepFailed = event("sequence.step.failed", "Sequence step failed for good", {
  email: Email,
  campaign_id: CampaignId
})
export const SequenceCompleted = event("sequence.completed", "Sequence completed for a contact", {
  email: Email,
  campaign_id: CampaignId
})
export const SequenceCancelled = event("sequence.cancelled", "Sequence cancelled for a contact", {
  email: Email,
  campaign_id: CampaignId,
  reason: Schema.Literal("unsubscribed", "manual", "bounced", "complained", "suppressed")
})
export const DmarcAlignmentFailure = event("dmarc.alignment_failure", "A domain exceeded the DMARC alignment-failure threshold", {
  domain: Schema.String,
  fail_rate: Schema.Number.annotations({ description: "Share of reported messages that failed both DKIM and SPF" }),
  volume: Schema.Int.annotations({ description: "Messages reported within the window" }),
  policy_p: Schema.String.annotations({ description: "The domain's published policy (none, quarantine, reject)" }),
  window_days: Schema.Int,
  top_failing_sources: Schema.Array(Schema.Struct({ source_ip: Schema.String, count: Schema.Int }))
})
export const WebhookTest = event("webhook.test", "Sent by POST /v1/client/keys/{id}/webhook/test", {
  message: Schema.String
})

/** Every event by name, in the spec's order. */
export const EVENTS = {
  "email.sent": EmailSent,
  "email.failed": EmailFailed,
  "email.opened": EmailOpened,
  "email.clicked": EmailClicked,
  "email.bounced": EmailBounced,
  "email.complained": EmailComplained,
  "contact.unsubscribed": ContactUnsubscribed,
  "contact.confirmed": ContactConfirmed,
  "campaign.email.sent": CampaignEmailSent,
  "campaign.email.failed": CampaignEmailFailed,
  "campaign.completed": CampaignCompleted,
  "sequence.subscribed": SequenceSubscribed,
  "sequence.step.sent": SequenceStepSent,
  "sequence.step.failed": SequenceStepFailed,
  "sequence.completed": SequenceCompleted,
  "sequence.cancelled": SequenceCancelled,
  "dmarc.alignment_failure": DmarcAlignmentFailure,
  "webhook.test": WebhookTest
} as const

export type EventName = keyof typeof EVENTS
export const EVENT_NAMES = Object.keys(EVENTS) as ReadonlyArray<EventName>

export const HeraldEvent = Schema.Union(...Object.values(EVENTS))
export type HeraldEvent = typeof HeraldEvent.Type

/** The fields every receiver's body carries beside the event's own. */
export const CommonFields = {
  id: Schema.String.annotations({ description: "The event's id (evt_…); the same on every retry (header X-Herald-Event-Id)" }),
  ts: Schema.String.annotations({ description: "When the event happened, ISO 8601 UTC with milliseconds" }),
  app: Schema.String.annotations({ description: "The API key id the event belongs to" })
}

/** The receiver's body of one event: its struct with the common fields. */
export const receiverBody = (name: EventName) => {
  const schema = EVENTS[name]
  return Schema.Struct({ ...CommonFields, ...schema.fields }).annotations({
    identifier: `event.${name}`,
    description: SchemaAST.getDescriptionAnnotation(schema.ast).pipe(Option.getOrElse(() => name))
  })
}

/** The events SQL reads back from the outbox by name (reputation counts, the message lookup). */
export const BOUNCED_EVENT = "email.bounced" satisfies EventName
export const COMPLAINED_EVENT = "email.complained" satisfies EventName

/**
 * Outcome events by origin (DESIGN.md): which event a delivery's outcome emits. Written once,
 * next to the schemas; `outcomeEvent` (./outcomes.ts) builds them, and a unit test keeps the two
 * in step.
 */
/** Where a queued message came from. SMTP submission is `transactional`: same events, same audit. */
export type Origin = "transactional" | "campaign" | "sequence" | "confirmation" | "test_send" | "system"
export type OutcomeKind = "sent" | "failed" | "bounced" | "complained"

export const OUTCOME_EVENTS = {
  transactional: { sent: "email.sent", failed: "email.failed", bounced: BOUNCED_EVENT, complained: COMPLAINED_EVENT },
  campaign: { sent: "campaign.email.sent", failed: "campaign.email.failed", bounced: BOUNCED_EVENT, complained: COMPLAINED_EVENT },
  sequence: { sent: "sequence.step.sent", failed: "sequence.step.failed", bounced: BOUNCED_EVENT, complained: COMPLAINED_EVENT },
  confirmation: { sent: null, failed: null, bounced: BOUNCED_EVENT, complained: COMPLAINED_EVENT },
  test_send: { sent: null, failed: null, bounced: BOUNCED_EVENT, complained: COMPLAINED_EVENT },
  // System mail (TLS reports) belongs to no account: no webhooks could hear of it (docs/decisions.md).
  system: { sent: null, failed: null, bounced: null, complained: null }
} as const satisfies Record<Origin, Record<OutcomeKind, EventName | null>>

/**
 * One example body per event, for the webhook documents. Typed against the schemas, so an example
 * that loses a field or keeps a removed one does not compile.
 */
type Fields<N extends EventName> = Omit<(typeof EVENTS)[N]["Type"], "event">

const sources = [{ source_ip: "203.0.113.7", count: 140 }, { source_ip: "198.51.100.23", count: 12 }]

export const EXAMPLES: { readonly [N in EventName]: Fields<N> } = {
  "email.sent": { request_id: "req_4f9c2a7d1b", to: ["ada@example.com"], subject: "Your receipt", message_id: "msg_8d1e0c5a3f" },
  "email.failed": {
    request_id: "req_4f9c2a7d1b",
    to: ["ada@example.com"],
    subject: "Your receipt",
    message_id: "msg_8d1e0c5a3f",
    error: "452 4.2.2 mailbox full (retries exhausted after 120 hours)"
  },
  "email.opened": { campaign_id: "cp_k2j9x7", email: "ada@example.com" },
  "email.clicked": { campaign_id: "cp_k2j9x7", email: "ada@example.com", url: "https://example.com/pricing" },
  "email.bounced": {
    recipient: "ada@example.com",
    status: "5.1.1",
    category: "hard",
    diagnostic: "550 5.1.1 <ada@example.com>: user unknown",
    message_id: "msg_8d1e0c5a3f"
  },
  "email.complained": { email: "ada@example.com", isp: "Yahoo", subject: "Spring sale" },
  "contact.unsubscribed": { email: "ada@example.com", scope: "list", list_id: "ls_q8w3e1" },
  "contact.confirmed": { email: "ada@example.com", list_id: "ls_q8w3e1", list_name: "Newsletter" },
  "campaign.email.sent": { email: "ada@example.com", campaign_id: "cp_k2j9x7" },
  "campaign.email.failed": { email: "ada@example.com", campaign_id: "cp_k2j9x7", error: "recipient suppressed (unsubscribe)" },
  "campaign.completed": { campaign_id: "cp_k2j9x7", name: "Spring sale", sent_count: 982, failed_count: 18, delivery_rate: 0.982 },
  "sequence.subscribed": { email: "ada@example.com", campaign_id: "sq_m4n7b2" },
  "sequence.step.sent": { email: "ada@example.com", campaign_id: "sq_m4n7b2" },
  "sequence.step.failed": { email: "ada@example.com", campaign_id: "sq_m4n7b2" },
  "sequence.completed": { email: "ada@example.com", campaign_id: "sq_m4n7b2" },
  "sequence.cancelled": { email: "ada@example.com", campaign_id: "sq_m4n7b2", reason: "unsubscribed" },
  "dmarc.alignment_failure": {
    domain: "example.com",
    fail_rate: 0.152,
    volume: 1000,
    policy_p: "none",
    window_days: 7,
    top_failing_sources: sources
  },
  "webhook.test": { message: "Test event from Herald" }
}
