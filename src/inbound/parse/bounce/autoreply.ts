/**
 * Whether a message without a DSN part is worth reading as a bounce at all. A bounce comes from a
 * mail system (MAILER-DAEMON, postmaster, "Mail Delivery System") or says so in its subject, or
 * names its failed recipients in Exim's X-Failed-Recipients. An auto-reply (RFC 3834) is not a
 * bounce even though it too is sent to the original's sender, often with a null return path.
 */
import { field } from "../fields.ts"
import { BOUNCE_SUBJECT, DAEMON_ADDRESS, DAEMON_NAME } from "./daemon.ts"
import type { MailView } from "./view.ts"

/* RFC 3834 §5 Auto-Submitted; the vendor headers and subjects of vacation responders. */
const AUTO_SUBJECT = /^\s*(auto(matic)?[ -]?(reply|response|antwort)|out of (the )?office|away from|vacation|abwesenheit|absence)\b/i

export const isDaemonSender = (view: MailView): boolean =>
  (view.from !== null && DAEMON_ADDRESS.test(view.from)) || DAEMON_NAME.test(field(view.headers, "from") ?? "")

export const failedRecipientsHeader = (view: MailView): ReadonlyArray<string> =>
  (view.headers.get("x-failed-recipients") ?? [])
    .flatMap((value) => value.split(","))
    .map((a) => a.trim().replace(/^<|>$/g, "").toLowerCase())
    .filter((a) => a.includes("@"))

export const hasBounceSignal = (view: MailView): boolean =>
  isDaemonSender(view) || BOUNCE_SUBJECT.test(view.subject) || failedRecipientsHeader(view).length > 0

export const isAutoReply = (view: MailView): boolean => {
  const h = (name: string) => (field(view.headers, name) ?? "").toLowerCase()
  return (
    h("auto-submitted").startsWith("auto-replied") ||
    h("x-autoreply") !== "" ||
    h("x-autorespond") !== "" ||
    h("precedence") === "auto_reply" ||
    h("x-apple-action") === "vacation" ||
    AUTO_SUBJECT.test(view.subject)
  )
}
