/**
 * Amazon SES notifications delivered by e-mail (an SNS e-mail subscription): the body is the JSON
 * notification, possibly still wrapped in the SNS envelope (`{"Type":"Notification","Message":"…"}`),
 * followed by SNS's unsubscribe footer. Only `Bounce` notifications are bounces; `Delivery` (and
 * `Complaint`, which the complaint parser reads) are not.
 */
import { noOriginal } from "../fields.ts"
import type { BounceReport, BouncedRecipient, OriginalMessage } from "../types.ts"
import { withoutType } from "./dsn.ts"
import { type BounceRules, enhancedIn, oneLine, recipient, statusFromText } from "./status.ts"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const str = (value: Json | undefined): string | null => (typeof value === "string" ? value : null)
const list = (value: Json | undefined): ReadonlyArray<Json> => (Array.isArray(value) ? (value as ReadonlyArray<Json>) : [])

/** The first balanced `{…}` of `text` (strings respected), or null. */
const firstObject = (text: string): string | null => {
  const start = text.indexOf("{")
  if (start < 0) return null
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === "{") depth++
    else if (c === "}" && --depth === 0) return text.slice(start, i + 1)
  }
  return null
}

const parseJson = (text: string): Json | undefined => {
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}

/*
 * The notification is one line of JSON, longer than the 998 characters a mail line may have
 * (RFC 5322 §2.1.1). A relay on the way broke it, marking each break with "!" before the line end
 * and a space after it (sendmail's way); undo that before parsing.
 */
const notificationOf = (text: string): JsonObject | null => {
  if (!text.trimStart().startsWith("{")) return null
  const candidate = firstObject(text)
  if (candidate === null) return null
  const parsed = parseJson(candidate) ?? parseJson(candidate.replace(/!\r?\n /g, ""))
  if (!isObject(parsed)) return null
  // SNS envelope: the SES notification is a JSON string in `Message`.
  const inner = str(parsed["Message"])
  const notification = inner === null ? parsed : parseJson(inner)
  if (!isObject(notification)) return null
  return str(notification["notificationType"]) !== null || str(notification["eventType"]) !== null ? notification : null
}

const originalOf = (mail: Json | undefined): OriginalMessage => {
  if (!isObject(mail)) return noOriginal
  const header = (name: string) => {
    const found = list(mail["headers"]).find((h) => isObject(h) && str(h["name"])?.toLowerCase() === name)
    return isObject(found) ? str(found["value"]) : null
  }
  const common = mail["commonHeaders"]
  const messageId = (isObject(common) ? str(common["messageId"]) : null) ?? header("message-id")
  return {
    messageId: messageId === null ? null : messageId.replace(/^\s*<|>\s*$/g, ""),
    heraldMessageId: header("x-herald-message-id"),
    subject: (isObject(common) ? str(common["subject"]) : null) ?? header("subject")
  }
}

/**
 * The bounce in an SES JSON notification body. `undefined`: the body is not an SES notification;
 * null: it is one, but not a bounce (a delivery or complaint notification).
 */
export const sesBounce = (text: string, rules: BounceRules): BounceReport | null | undefined => {
  const notification = notificationOf(text)
  if (notification === null) return undefined
  const type = str(notification["notificationType"]) ?? str(notification["eventType"])
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
  return recipients.length === 0 ? null : { recipients, original: originalOf(notification["mail"]) }
}
