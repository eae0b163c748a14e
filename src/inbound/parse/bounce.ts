/**
 * Bounces: which recipients of a message Herald sent could not be reached, with what status, and
 * which message it was. Pure: reads the parsed message (and its raw bytes for what the MIME walk
 * cannot split) and yields a BounceReport, or null for anything that is not a bounce.
 *
 * Tried in order, most explicit first:
 *   1. an Amazon SES notification whose body is JSON (bounce/ses.ts);
 *   2. an RFC 3464 DSN: `message/delivery-status` parts, or DSN fields written into the text of a
 *      mail-system message (bounce/dsn.ts). A DSN that reports only successes is not a bounce;
 *   3. a plain-text bounce from a mail system (bounce/vendor-text.ts), unless it is an auto-reply
 *      (bounce/autoreply.ts).
 */
import type { ParsedMail } from "./mail.ts"
import type { BounceReport, BouncedRecipient } from "./types.ts"
import { failedRecipientsHeader, hasBounceSignal, isAutoReply, isDaemonSender } from "./bounce/autoreply.ts"
import { dsnBlocks, dsnRecipients, embeddedDsnBlocks } from "./bounce/dsn.ts"
import { sesBounce } from "./bounce/ses.ts"
import { type BounceRules, defaultBounceRules } from "./bounce/status.ts"
import { textRecipients } from "./bounce/vendor-text.ts"
import { type MailView, mailView, originalOf } from "./bounce/view.ts"

export { type BounceRules, defaultBounceRules, parseBounceRules } from "./bounce/status.ts"

const report = (view: MailView, recipients: ReadonlyArray<BouncedRecipient>): BounceReport | null =>
  recipients.length === 0 ? null : { recipients, original: originalOf(view) }

const fromDsn = (view: MailView, rules: BounceRules): BounceReport | null | undefined => {
  const parts = dsnRecipients(dsnBlocks(view.deliveryStatus), rules)
  if (parts !== null) return report(view, parts)
  // DSN fields in the text count only in a report or a mail system's message, not in a person's.
  if (view.contentType !== "multipart/report" && !hasBounceSignal(view)) return undefined
  const embedded = dsnRecipients(embeddedDsnBlocks(view.report), rules)
  return embedded === null ? undefined : report(view, embedded)
}

export const parseBounce = (mail: ParsedMail, raw: Buffer, rules: BounceRules = defaultBounceRules): BounceReport | null => {
  const view = mailView(mail, raw)
  const ses = sesBounce(view.report, rules)
  if (ses !== undefined) return ses
  const dsn = fromDsn(view, rules)
  if (dsn !== undefined) return dsn
  if (!hasBounceSignal(view) || (isAutoReply(view) && !isDaemonSender(view))) return null
  const own = new Set([view.from, ...view.to].filter((a): a is string => a !== null))
  const recipients = textRecipients(
    { report: view.report, subject: view.subject, failed: failedRecipientsHeader(view), own },
    rules
  )
  return report(view, recipients)
}
