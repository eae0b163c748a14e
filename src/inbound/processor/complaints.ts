/**
 * What a feedback report changes (DESIGN "Bounces", feedback part): every report is recorded per
 * recipient; `abuse`, `fraud` and `virus` suppress the address (reason complaint) and emit
 * `email.complained`; `opt-out` / unsubscribe requests suppress it as an unsubscribe; other types
 * (`auth-failure` DMARC failure reports, `not-spam`) change nothing else. Feedback loops send their
 * reports to `fbl@` rather than to the VERP address, so mapping mostly goes through the enclosed
 * original's identity headers — acted on only for an authenticated feedback loop (trust.ts), and
 * only for the recipients the report names: a redacted report is about nobody in particular, and
 * suppressing every recipient of the message (Bcc ones too) is what a forger would want.
 * A delivery is complained about once: a repeated report is recorded by nothing and counts for
 * nothing (the unique index inbound_complaints_once), so replaying it cannot pause an account.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { emitEvent } from "../../events/outbox.ts"
import { EmailComplained } from "../../events/schema.ts"
import { suppressAutomatically } from "../../platform/suppressions/suppress.ts"
import { isComplaintFeedback, isOptOut } from "../parse/complaint.ts"
import type { ComplaintReport } from "../parse/types.ts"
import { deliveriesByOriginal, type DeliveryIndex, type DeliveryKeys, deliveryByVerp } from "./mapping.ts"
import { type DeliveryRef, ReportHooks } from "./ports.ts"

export interface ComplaintContext {
  readonly inboundId: string
  readonly now: Date
}

/**
 * The deliveries a report is about: the one its VERP address names, else — when `byOriginal`, the
 * sender being an authenticated feedback loop — those of the original to the recipients it names.
 */
export const complaintDeliveries = (
  report: ComplaintReport,
  keys: DeliveryKeys,
  index: DeliveryIndex,
  byOriginal: boolean
): ReadonlyArray<DeliveryRef> => {
  const byVerp = deliveryByVerp(index, keys)
  if (byVerp !== null) return [byVerp]
  return byOriginal ? deliveriesByOriginal(index, keys, report.recipients) : []
}

export const applyComplaint = (report: ComplaintReport, deliveries: ReadonlyArray<DeliveryRef>, ctx: ComplaintContext) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // What bulk records of the address (its history, its contacts' status, an opt-out's unsubscribe).
    const hooks = yield* ReportHooks
    const touched = new Set<string>()
    for (const d of deliveries) {
      const recorded = yield* sql`
        INSERT INTO inbound_complaints (inbound_message_id, account_id, key_id, delivery_id, message_id, email, feedback_type,
          isp, created_at)
        VALUES (${ctx.inboundId}, ${d.account_id}, ${d.key_id}, ${d.id}, ${d.message_id}, ${d.recipient.toLowerCase()},
          ${report.feedback_type}, ${report.isp}, ${ctx.now})
        ON CONFLICT (delivery_id) WHERE feedback_type IN ('abuse', 'fraud', 'virus') DO NOTHING
        RETURNING id`
      if (recorded.length === 0) continue // this delivery was complained about already
      touched.add(d.account_id)
      if (isComplaintFeedback(report.feedback_type)) {
        const detail = `${report.feedback_type} report from ${report.isp}`
        yield* suppressAutomatically(d.account_id, d.recipient, "complaint", detail, ctx.now)
        yield* hooks.addressComplained({
          accountId: d.account_id,
          email: d.recipient,
          at: ctx.now,
          messageId: d.message_id,
          campaignId: d.campaign_id,
          detail
        })
        yield* emitEvent({
          accountId: d.account_id,
          keyId: d.key_id,
          event: EmailComplained.make({ email: d.recipient, isp: report.isp, subject: report.original.subject ?? d.subject }),
          at: ctx.now
        })
      } else if (isOptOut(report.feedback_type)) {
        // An opt-out is an unsubscribe: the one fact (suppression, contacts, contact.unsubscribed).
        yield* hooks.addressOptedOut({ accountId: d.account_id, email: d.recipient, source: `opt-out report from ${report.isp}`, at: ctx.now })
      }
    }
    return { accounts: [...touched] }
  })
