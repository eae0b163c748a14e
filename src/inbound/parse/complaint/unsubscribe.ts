/**
 * Apple Mail's one-click unsubscribe: when the user taps "Unsubscribe" on a message whose
 * List-Unsubscribe offers only a mailto: URI (RFC 2369 §3.2), Mail sends a plain message from the
 * user to that address, marked `X-Apple-Unsubscribe: true` (and `Auto-Submitted: auto-replied`).
 * No ARF fields and no enclosed original; the unsubscribing user is the sender.
 */
import type { ParsedMail } from "../mail.ts"
import { noOriginal } from "../fields.ts"
import { addressList, emptyDetails, type ParsedComplaint } from "./common.ts"
import { resolveIsp } from "./isp.ts"

/** The field's value when the message carries it exactly once. */
const headerText = (mail: ParsedMail, name: string): string | null => {
  const values = mail.headerValues(name)
  return values.length === 1 ? values[0]!.trim() : null
}

const addressesOf = (value: ParsedMail["to"]): ReadonlyArray<string> =>
  value === undefined ? [] : ("value" in value ? [value] : value).flatMap((o) => addressList(o.text))

export const parseAppleUnsubscribe = (mail: ParsedMail, reporterFrom: string | null): ParsedComplaint | null => {
  if (headerText(mail, "x-apple-unsubscribe")?.toLowerCase() !== "true" || reporterFrom === null) return null
  return {
    feedback_type: "opt-out",
    isp: resolveIsp(reporterFrom, null),
    recipients: [reporterFrom],
    original_message_id: null,
    original: noOriginal,
    details: { ...emptyDetails("unsubscribe", reporterFrom), unsubscribe_to: addressesOf(mail.to) }
  }
}
