/** Complaints in Amazon SES notifications (../ses.ts reads the notification). */
import { list, obj, sesNotification, sesOriginal, sesType, str } from "../ses.ts"
import { emptyDetails, normaliseAddress, type ParsedComplaint, unique } from "./common.ts"
import { resolveIsp } from "./isp.ts"

/** An SES complaint notification, or null for any other body (bounces, deliveries, prose). */
export const parseSes = (text: string | null, reporterFrom: string | null): ParsedComplaint | null => {
  if (text === null || !text.includes("Complaint")) return null
  const message = sesNotification(text.slice(Math.max(0, text.indexOf("{"))))
  if (message === null || sesType(message) !== "Complaint") return null
  const complaint = obj(message["complaint"])
  const mail = obj(message["mail"])
  const recipients = unique(
    list(complaint["complainedRecipients"])
      .map((r) => str(obj(r)["emailAddress"]))
      .map((a) => (a === null ? null : normaliseAddress(a)))
      .filter((a): a is string => a !== null)
  )
  const userAgent = str(complaint["userAgent"])
  const original = sesOriginal(mail)
  return {
    // SES sends complaintFeedbackType only when the ISP's report carried one; a complaint without it is spam.
    feedback_type: str(complaint["complaintFeedbackType"])?.toLowerCase() ?? "abuse",
    isp: resolveIsp(reporterFrom, userAgent),
    recipients,
    original_message_id: original.messageId,
    original,
    details: {
      ...emptyDetails("ses", reporterFrom),
      user_agent: userAgent,
      source_ip: str(mail["sourceIp"]),
      arrival_date: str(complaint["arrivalDate"]) ?? str(complaint["timestamp"]),
      original_mail_from: str(mail["source"]),
      original_rcpt_to: recipients,
      enclosed_to: unique(
        list(obj(mail["commonHeaders"])["to"])
          .map((a) => (typeof a === "string" ? normaliseAddress(a) : null))
          .filter((a): a is string => a !== null)
      )
    }
  }
}
