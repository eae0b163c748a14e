/**
 * Bounces in Amazon SES notifications (../ses.ts reads the notification). Only `Bounce`
 * notifications are bounces; `Delivery` (and `Complaint`, which the complaint parser reads) are not.
 */
import { isObject, list, sesNotification, sesOriginal, sesType, str } from "../ses.ts"
import type { BounceReport, BouncedRecipient } from "../types.ts"
import { withoutType } from "./dsn.ts"
import { type BounceRules, enhancedIn, oneLine, recipient, statusFromText } from "./status.ts"

/**
 * The bounce in an SES JSON notification body. `undefined`: the body is not an SES notification;
 * null: it is one, but not a bounce (a delivery or complaint notification).
 */
export const sesBounce = (text: string, rules: BounceRules): BounceReport | null | undefined => {
  const notification = sesNotification(text)
  if (notification === null) return undefined
  const type = sesType(notification)
  const bounce = notification["bounce"]
  if (type !== "Bounce" || !isObject(bounce)) return null
  // SES bounceType: Permanent, Transient or Undetermined.
  const transient = str(bounce["bounceType"]) === "Transient"
  const recipients: Array<BouncedRecipient> = []
  for (const r of list(bounce["bouncedRecipients"])) {
    if (!isObject(r)) continue
    const email = str(r["emailAddress"])
    if (email === null || !email.includes("@")) continue
    const action = (str(r["action"]) ?? "failed").toLowerCase()
    const diagnosticField = str(r["diagnosticCode"])
    const diagnostic = diagnosticField === null ? null : oneLine(withoutType(diagnosticField))
    const stated = enhancedIn(str(r["status"]) ?? "")
    const status = stated ?? statusFromText(diagnostic ?? "", transient || action === "delayed", rules)
    recipients.push(recipient(email.replace(/^.*<([^>]+)>.*$/, "$1").trim(), status, action, diagnostic))
  }
  return recipients.length === 0 ? null : { recipients, original: sesOriginal(notification["mail"]) }
}
