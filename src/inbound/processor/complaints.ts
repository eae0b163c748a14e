/**
 * What a feedback report changes (DESIGN "Bounces", feedback part): every report is recorded per
 * recipient; `abuse`, `fraud` and `virus` suppress the address (reason complaint) and emit
 * `email.complained`; `opt-out` / unsubscribe requests suppress it as an unsubscribe; other types
 * (`auth-failure` DMARC failure reports, `not-spam`) change nothing else. Feedback loops send their
 * reports to `fbl@` rather than to the VERP address, so mapping mostly goes through the enclosed
 * original's identity headers; providers that redact the recipient leave the message's own
 * recipients as the best answer.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { emitEvent } from "../../lib/outbox.ts"
import { suppressAutomatically } from "../../platform/suppressions/suppress.ts"
import { isComplaintFeedback, isOptOut } from "../parse/complaint.ts"
import type { ComplaintReport } from "../parse/types.ts"
import { deliveriesByOriginal, type DeliveryIndex, type DeliveryKeys, type DeliveryRef, deliveryByVerp } from "./mapping.ts"

export interface ComplaintContext {
  readonly inboundId: string
  readonly now: Date
}

/** The deliveries a report is about, from the deliveries the message's keys found. */
export const complaintDeliveries = (report: ComplaintReport, keys: DeliveryKeys, index: DeliveryIndex): ReadonlyArray<DeliveryRef> => {
  const byVerp = deliveryByVerp(index, keys)
  if (byVerp !== null) return [byVerp]
  const named = deliveriesByOriginal(index, keys, report.recipients)
  // A redacted or rewritten recipient: fall back to every recipient of the original.
  return named.length === 0 && report.recipients.length > 0 ? deliveriesByOriginal(index, keys, []) : named
}

export const applyComplaint = (report: ComplaintReport, deliveries: ReadonlyArray<DeliveryRef>, ctx: ComplaintContext) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const d of deliveries) {
      yield* sql`
        INSERT INTO inbound_complaints (inbound_message_id, account_id, key_id, message_id, email, feedback_type, isp, created_at)
        VALUES (${ctx.inboundId}, ${d.account_id}, ${d.key_id}, ${d.message_id}, ${d.recipient.toLowerCase()},
          ${report.feedback_type}, ${report.isp}, ${ctx.now})`
      if (isComplaintFeedback(report.feedback_type)) {
        yield* suppressAutomatically(d.account_id, d.recipient, "complaint", `${report.feedback_type} report from ${report.isp}`, ctx.now)
        yield* emitEvent({
          accountId: d.account_id,
          keyId: d.key_id,
          event: "email.complained",
          payload: { email: d.recipient, isp: report.isp, subject: report.original.subject ?? d.subject },
          at: ctx.now
        })
      } else if (isOptOut(report.feedback_type)) {
        yield* suppressAutomatically(d.account_id, d.recipient, "unsubscribe", `opt-out report from ${report.isp}`, ctx.now)
      }
    }
    return { accounts: [...new Set(deliveries.map((d) => d.account_id))] }
  })
