/**
 * Bounces: which recipients of a message Herald sent could not be reached, with what status, and
 * which message it was. Pure: reads the parsed message (and its raw bytes for what the MIME walk
 * cannot split) and yields a BounceReport, or null for anything that is not a bounce.
 *
 * Tried in order, most explicit first:
 *   1. an Amazon SES notification whose body is JSON (bounce/ses.ts);
 *   2. an RFC 3464 DSN: `message/delivery-status` parts, or DSN fields written into the text of a
 *      mail-system message (bounce/dsn.ts). A DSN that reports only successes is not a bounce;
 *   3. a plain-text bounce from a mail system, or sent with a null return path and stating a
 *      failure (bounce/vendor-text.ts), unless it is an auto-reply (bounce/autoreply.ts);
 *   4. a mail system's report forwarded as an attachment, read as in 1–3;
 *   5. a report that states a failure but names no address: the returned original's To.
 */
import { field } from "./fields.ts"
import { type ParsedMail, readMail } from "./mail.ts"
import type { BounceReport, BouncedRecipient } from "./types.ts"
import { failedRecipientsHeader, hasBounceSignal, isAutoReply, isDaemonSender } from "./bounce/autoreply.ts"
import { dsnBlocks, dsnRecipients, embeddedDsnBlocks, withTextCodes } from "./bounce/dsn.ts"
import { sesBounce } from "./bounce/ses.ts"
import { type BounceRules, defaultBounceRules } from "./bounce/status.ts"
import { listedAddresses, statesFailure, textRecipients } from "./bounce/vendor-text.ts"
import { forwardedReports, type MailView, mailView, originalOf, originalRecipients } from "./bounce/view.ts"

export { type BounceRules, defaultBounceRules, parseBounceRules } from "./bounce/status.ts"

const report = (view: MailView, recipients: ReadonlyArray<BouncedRecipient>): BounceReport | null =>
  recipients.length === 0 ? null : { recipients, original: originalOf(view) }

const ownAddresses = (view: MailView) => new Set([view.from, ...view.to].filter((a): a is string => a !== null))

/*
 * Where a DSN block names no mailbox, the addresses the message lists stand in: Exim's
 * X-Failed-Recipients, else the addresses the report text opens its lines with (Sendmail's
 * "Final-Recipient: RFC822; @host" beside "<a@b>" in its text).
 */
const listed = (view: MailView, rules: BounceRules) => {
  const failed = failedRecipientsHeader(view)
  return failed.length > 0 ? failed : listedAddresses(view.report, ownAddresses(view), rules)
}

const fromDsn = (view: MailView, rules: BounceRules): BounceReport | null | undefined => {
  const parts = dsnRecipients(dsnBlocks(view.deliveryStatus), rules, () => listed(view, rules))
  if (parts !== null) return report(view, withTextCodes(parts, view.report))
  // DSN fields in the text count only in a report or a mail system's message, not in a person's.
  if (view.contentType !== "multipart/report" && !hasBounceSignal(view)) return undefined
  const embedded = dsnRecipients(embeddedDsnBlocks(view.report), rules, () => listed(view, rules))
  return embedded === null ? undefined : report(view, embedded)
}

/*
 * A bounce that names its recipient nowhere in its own text (Postfix's "Delivery report
 * unavailable" after "could not be delivered"): the recipients the returned original was
 * addressed to.
 */
const fromReturnedHeaders = (view: MailView, rules: BounceRules): BounceReport | null => {
  // Only a report that states a failure and lists no address of its own at all.
  if (!statesFailure(view.report, rules) || listedAddresses(view.report, new Set(), rules).length > 0) return null
  const own = ownAddresses(view)
  const to = originalRecipients(view).filter((a) => !own.has(a))
  return report(view, textRecipients({ report: view.report, subject: view.subject, failed: to, own, sender: view.from }, rules))
}

/*
 * RFC 5321 §4.5.5: a delivery failure notice is sent with a null reverse-path, which the
 * receiving MTA records as "Return-Path: <>". With text that states a failure it is a bounce even
 * from an address that does not look like a mail system (KDDI's no-reply@…dion.ne.jp, "Subject: Mail").
 */
const nullSenderFailure = (view: MailView, rules: BounceRules) =>
  (field(view.headers, "return-path") ?? "").trim() === "<>" && statesFailure(view.report, rules)

const parseView = (view: MailView, rules: BounceRules, depth: number): BounceReport | null => {
  const ses = sesBounce(view.report, rules)
  if (ses !== undefined) return ses
  const dsn = fromDsn(view, rules)
  if (dsn !== undefined) return dsn
  if (!(hasBounceSignal(view) || nullSenderFailure(view, rules)) || (isAutoReply(view) && !isDaemonSender(view))) return null
  const input = { report: view.report, subject: view.subject, failed: failedRecipientsHeader(view), own: ownAddresses(view), sender: view.from }
  const text = report(view, textRecipients(input, rules))
  if (text !== null) return text
  // A mail system's report forwarded as an attachment (an appliance relaying the bounce it got).
  if (depth === 0) {
    for (const part of forwardedReports(view)) {
      const inner = Buffer.from(part, "utf8")
      const found = parseView(mailView(readMail(inner), inner), rules, depth + 1)
      if (found !== null) return found
    }
  }
  return fromReturnedHeaders(view, rules)
}

export const parseBounce = (mail: ParsedMail, raw: Buffer, rules: BounceRules = defaultBounceRules): BounceReport | null =>
  parseView(mailView(mail, raw), rules, 0)
