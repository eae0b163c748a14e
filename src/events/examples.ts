/**
 * One example body per event, for the webhook documents. Typed against the schemas, so an example
 * that loses a field or keeps a removed one does not compile.
 */
import type { EVENTS, EventName } from "./schema.ts"

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
  "contact.unsubscribed": { email: "ada@example.com" },
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
