/**
 * How a mail system names itself and its bounces: the sender addresses and display names of
 * reporting daemons, and the subjects of their reports. Read of the bounce itself (autoreply.ts)
 * and of a header block quoted in its text (view.ts: a forwarded bounce is not the returned original).
 */
/* post_master: Verizon's vtext.com gateway. */
export const DAEMON_ADDRESS = /^(mailer-?daemon|mail-?daemon|post_?master|mail-?delivery|maildelivery|mdaemon|bounces?|double-bounce)@/i
export const DAEMON_NAME = /mail delivery (subsystem|system|service)|mailer[- ]daemon|postmaster/i

export const BOUNCE_SUBJECT = new RegExp(
  [
    "undeliver(able|ed)",
    "delivery (status notification|failure|failed|has failed|report|problem|notification|status report)",
    "failure notice",
    "returned mail",
    "mail delivery failed",
    "could not be delivered",
    "non[- ]?delivery",
    "mail failure",
    "Недоставленное",
    "не доставлено"
  ].join("|"),
  "i"
)

/** Whether a quoted header block's From and Subject are those of a mail system's report. */
export const isReportHeader = (from: string, subject: string): boolean =>
  DAEMON_NAME.test(from) || /\b(mailer-?daemon|post_?master)@/i.test(from) || BOUNCE_SUBJECT.test(subject)
