/**
 * ARF feedback reports (RFC 5965) and DMARC failure reports in the same format (RFC 6591), plus
 * Microsoft's JMRP, which encloses the original without a `message/feedback-report` part.
 *
 * The feedback part is found wherever it sits: reports come as multipart/report, as multipart/mixed
 * (re-sent through Exchange), base64-encoded, named ATT00001, or forwarded inside a message/rfc822.
 */
import { type Fields, field, headerBlock, noOriginal, originalFromHeaders, parseFields, stripAngles } from "../fields.ts"
import type { OriginalMessage } from "../types.ts"
import { addressList, emptyDetails, type FeedbackDetails, normaliseAddress, type ParsedComplaint, unique } from "./common.ts"
import { resolveIsp } from "./isp.ts"
import { headerParam, type MimePart } from "./mime.ts"

/** Parts that enclose the original: whole (RFC 5965 §2 (d)) or headers only (RFC 6591 §3.2; RFC 6533). */
const ORIGINAL_TYPES = new Set([
  "message/rfc822",
  "message/global",
  "text/rfc822-headers",
  "message/rfc822-headers",
  "message/global-headers",
  // Seen in the wild (sisimai arf-12): the singular form.
  "text/rfc822-header"
])

const isMessage = (part: MimePart) => part.contentType === "message/rfc822" || part.contentType === "message/global"

/**
 * A part whose content type was lost on the way (Exchange re-sends it as an attachment such as
 * ATT00001 with a generic type) but whose body is the RFC 5965 §3.1 field block.
 */
const looksLikeFeedbackFields = (part: MimePart): boolean => {
  if (part.parts.length > 0 || !/^\s*[A-Za-z-]+:/.test(part.body)) return false
  const fields = parseFields(part.body.replace(/^\s+/, ""))
  return fields.has("feedback-type") && (fields.has("version") || fields.has("user-agent"))
}

/**
 * A delivery or disposition report (RFC 3464, RFC 8098). What it returns is somebody else's
 * message, so a feedback report or a JMRP original found inside it is that message, not a report
 * to us: a bounce of a forwarded complaint stays a bounce.
 */
const isOtherReport = (root: MimePart, own: ReadonlyArray<MimePart>): boolean => {
  const reportType = headerParam(field(root.headers, "content-type") ?? "", "report-type")?.toLowerCase()
  return (
    (root.contentType === "multipart/report" && reportType !== undefined && reportType !== "feedback-report") ||
    own.some((p) => /^message\/(global-)?(delivery-status|disposition-notification)$/.test(p.contentType))
  )
}

/** The parts inside a multipart, depth-first, without entering enclosed messages. */
const descendants = (part: MimePart): ReadonlyArray<MimePart> =>
  part.contentType.startsWith("multipart/") ? part.parts.flatMap((p) => [p, ...descendants(p)]) : []

export interface FeedbackReport {
  /** The `message/feedback-report` part (or the part that carries its fields). */
  readonly feedback: MimePart
  /** The multipart that holds it, where the enclosed original is looked for. */
  readonly container: MimePart
}

/**
 * The report's feedback part. Enclosed messages are entered only when the report itself has none:
 * an abuse desk may forward a report as an attachment, but the original inside a report is never
 * itself the report.
 */
export const findFeedbackReport = (root: MimePart, depth = 0): FeedbackReport | null => {
  const own = descendants(root)
  const feedback = own.find((p) => p.contentType === "message/feedback-report") ?? own.find(looksLikeFeedbackFields)
  if (feedback !== undefined) {
    const container = [root, ...own].find((p) => p.parts.includes(feedback)) ?? root
    return { feedback, container }
  }
  if (depth >= 2 || isOtherReport(root, own)) return null
  for (const part of [root, ...own].filter(isMessage)) {
    const inner = part.parts[0]
    const found = inner === undefined ? null : findFeedbackReport(inner, depth + 1)
    if (found !== null) return found
  }
  return null
}

/** The text (a message, or a header block) of the original enclosed in `container`. */
const enclosedText = (container: MimePart): string | null => {
  const part = descendants(container).find((p) => ORIGINAL_TYPES.has(p.contentType))
  // Some reporters put a blank line before the enclosed headers.
  return part === undefined ? null : part.body.replace(/^(\r\n|\n|\r)+/, "")
}

interface Enclosed {
  readonly original: OriginalMessage
  readonly headers: Fields
}

const readEnclosed = (text: string | null): Enclosed =>
  text === null
    ? { original: noOriginal, headers: new Map() }
    : { original: originalFromHeaders(text), headers: parseFields(headerBlock(text)) }

const addresses = (values: ReadonlyArray<string> | undefined): ReadonlyArray<string> =>
  unique((values ?? []).map(normaliseAddress).filter((a): a is string => a !== null))

const nonEmpty = (value: string | null): string | null => (value === null || value.trim() === "" ? null : value.trim())

/**
 * The RFC 5965 §3.1-3.2 fields of a `message/feedback-report` body (and RFC 6591 §3.1's
 * Auth-Failure). `Received-Date` is the pre-RFC drafts' name for `Arrival-Date`, still sent by
 * some loops.
 */
export const parseFeedbackFields = (text: string): Omit<FeedbackDetails, "format" | "reporter_from" | "enclosed_to" | "unsubscribe_to"> & {
  readonly feedback_type: string | null
} => {
  const fields = parseFields(text.replace(/^\s+/, ""))
  const type = /^[A-Za-z0-9_-]+/.exec(field(fields, "feedback-type")?.trim() ?? "")
  return {
    feedback_type: type === null ? null : type[0].toLowerCase(),
    user_agent: nonEmpty(field(fields, "user-agent")),
    version: nonEmpty(field(fields, "version")),
    source_ip: nonEmpty(field(fields, "source-ip")),
    arrival_date: nonEmpty(field(fields, "arrival-date") ?? field(fields, "received-date")),
    original_mail_from: nonEmpty(stripAngles(field(fields, "original-mail-from"))),
    original_rcpt_to: addresses(fields.get("original-rcpt-to")),
    removal_recipient: addresses(fields.get("removal-recipient")),
    reported_domain: unique((fields.get("reported-domain") ?? []).map((d) => d.trim().toLowerCase()).filter((d) => d !== "")),
    auth_failure: nonEmpty(field(fields, "auth-failure"))
  }
}

const firstNonEmpty = (...lists: ReadonlyArray<ReadonlyArray<string>>): ReadonlyArray<string> =>
  lists.find((l) => l.length > 0) ?? []

/** An ARF report, or null when the message holds no feedback part. */
export const parseArf = (root: MimePart, reporterFrom: string | null): ParsedComplaint | null => {
  const report = findFeedbackReport(root)
  if (report === null) return null
  const { feedback_type, ...fields } = parseFeedbackFields(report.feedback.body)
  const enclosed = readEnclosed(enclosedText(report.container))
  const enclosedTo = addressList(field(enclosed.headers, "to"))
  return {
    // RFC 5965 §3.1 makes Feedback-Type required; without it the report is kept but acted on as nothing.
    feedback_type: feedback_type ?? "other",
    isp: resolveIsp(reporterFrom, fields.user_agent),
    recipients: firstNonEmpty(fields.original_rcpt_to, fields.removal_recipient, enclosedTo),
    original_message_id: enclosed.original.messageId,
    original: enclosed.original,
    details: { ...emptyDetails("arf", reporterFrom), ...fields, enclosed_to: enclosedTo }
  }
}

/**
 * Microsoft JMRP (Hotmail / Outlook.com junk mail reporting): a multipart/mixed whose only useful
 * part is the original as message/rfc822, with the complaining mailbox stamped into its headers
 * as `X-HmXmrOriginalRecipient`. No Feedback-Type exists; a JMRP report is always a junk vote.
 */
export const parseJmrp = (root: MimePart, reporterFrom: string | null): ParsedComplaint | null => {
  const own = descendants(root)
  if (isOtherReport(root, own)) return null
  for (const part of own.filter(isMessage)) {
    const enclosed = readEnclosed(part.body.replace(/^(\r\n|\n|\r)+/, ""))
    if (!enclosed.headers.has("x-hmxmroriginalrecipient")) continue
    const stamped = addresses(enclosed.headers.get("x-hmxmroriginalrecipient"))
    const enclosedTo = addressList(field(enclosed.headers, "to"))
    return {
      feedback_type: "abuse",
      isp: resolveIsp(reporterFrom, null),
      recipients: firstNonEmpty(stamped, enclosedTo),
      original_message_id: enclosed.original.messageId,
      original: enclosed.original,
      details: { ...emptyDetails("jmrp", reporterFrom), original_rcpt_to: stamped, enclosed_to: enclosedTo }
    }
  }
  return null
}
