/**
 * Spam complaints and other feedback reports received on the MX. Forms understood:
 *  - ARF (RFC 5965): multipart/report; report-type=feedback-report, or the same parts re-sent as
 *    multipart/mixed, or forwarded inside a message/rfc822 attachment;
 *  - DMARC failure reports (RFC 6591), ARF with Feedback-Type auth-failure (recorded only);
 *  - Microsoft JMRP (Hotmail / Outlook.com): the original attached, X-HmXmrOriginalRecipient;
 *  - Amazon SES complaint notifications (SNS JSON in the body);
 *  - Apple Mail's one-click unsubscribe request (X-Apple-Unsubscribe: true), as opt-out.
 *
 * What happens next depends on the feedback type (DESIGN rule): abuse, fraud and virus suppress
 * the recipient as a complaint and emit `email.complained`; opt-out suppresses as an unsubscribe;
 * auth-failure, not-spam and the rest are recorded only.
 */
import type { ParsedMail } from "./mail.ts"
import { parseArf, parseJmrp } from "./complaint/arf.ts"
import { normaliseAddress, type ParsedComplaint } from "./complaint/common.ts"
import { mimeTree } from "./complaint/mime.ts"
import { parseSes } from "./complaint/ses.ts"
import { parseAppleUnsubscribe } from "./complaint/unsubscribe.ts"

export type { ComplaintFormat, FeedbackDetails, ParsedComplaint } from "./complaint/common.ts"
export { parseFeedbackFields } from "./complaint/arf.ts"
export { resolveIsp } from "./complaint/isp.ts"

/** The address of the report's own From:, lower-cased. */
const reporterAddress = (mail: ParsedMail): string | null => {
  const address = mail.from?.value.find((a) => a.address !== undefined && a.address !== "")?.address
  return address === undefined ? null : normaliseAddress(address)
}

/**
 * The feedback report in `mail` (whose bytes are `raw`), or null when it is none. The ARF and
 * JMRP forms read the MIME structure itself, enclosed messages entered (complaint/mime.ts); `mail`
 * supplies the top-level headers and the decoded text of a single-part body.
 */
export const parseComplaint = (mail: ParsedMail, raw: Buffer): ParsedComplaint | null => {
  const reporter = reporterAddress(mail)
  const root = mimeTree(mail.root, raw)
  return (
    parseArf(root, reporter) ??
    parseJmrp(root, reporter) ??
    parseSes(typeof mail.text === "string" ? mail.text : null, reporter) ??
    parseAppleUnsubscribe(mail, reporter)
  )
}

const normal = (feedbackType: string) => feedbackType.trim().toLowerCase()

/** abuse, fraud, virus (RFC 5965 §7.3): suppress the recipient as a complaint, emit `email.complained`. */
export const isComplaintFeedback = (feedbackType: string): boolean => ["abuse", "fraud", "virus"].includes(normal(feedbackType))

/**
 * An unsubscribe request: `opt-out` and `opt-out-list` (the ARF drafts before RFC 5965, still sent),
 * `unsubscribe`. Suppress the recipient as an unsubscribe, not as a complaint.
 */
export const isOptOut = (feedbackType: string): boolean => ["opt-out", "opt-out-list", "unsubscribe"].includes(normal(feedbackType))
