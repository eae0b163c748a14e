/**
 * Amazon SES notifications delivered by e-mail (an SNS e-mail subscription): the body is the JSON
 * notification (`notificationType`, or `eventType` for event publishing), bare or inside the SNS
 * envelope (`{"Type":"Notification","Message":"<the JSON as a string>"}`), followed by SNS's
 * unsubscribe footer. Shared by the bounce and the complaint parser, which each read their type.
 * https://docs.aws.amazon.com/ses/latest/dg/notification-contents.html
 */
import { noOriginal } from "./fields.ts"
import type { OriginalMessage } from "./types.ts"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
export type JsonObject = { readonly [key: string]: Json }

export const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)
export const obj = (value: Json | undefined): JsonObject => (isObject(value) ? value : {})
export const list = (value: Json | undefined): ReadonlyArray<Json> => (Array.isArray(value) ? value : [])
/** A non-empty string, trimmed; null for anything else. */
export const str = (value: Json | undefined): string | null =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : null

const parseJson = (text: string): Json | undefined => {
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}

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

/**
 * The SES notification in a mail body, or null. The notification is one line of JSON, longer than
 * the 998 characters a mail line may have (RFC 5322 §2.1.1); a relay on the way may have broken
 * it, marking each break with "!" before the line end and a space after it (sendmail's way), so
 * that split is undone when the text does not parse as it stands.
 */
export const sesNotification = (text: string): JsonObject | null => {
  if (!text.trimStart().startsWith("{")) return null
  const candidate = firstObject(text)
  if (candidate === null) return null
  const parsed = parseJson(candidate) ?? parseJson(candidate.replace(/!(\r\n|\n|\r) /g, ""))
  if (!isObject(parsed)) return null
  const inner = str(parsed["Message"])
  const notification = inner === null ? parsed : parseJson(inner)
  if (!isObject(notification)) return null
  return str(notification["notificationType"]) !== null || str(notification["eventType"]) !== null ? notification : null
}

/** The notification's type: Bounce, Complaint, Delivery, … */
export const sesType = (notification: JsonObject): string | null =>
  str(notification["notificationType"]) ?? str(notification["eventType"])

/** The original message as SES quotes it: `mail.headers` (`{name, value}`) and `commonHeaders`. */
export const sesOriginal = (mail: Json | undefined): OriginalMessage => {
  if (!isObject(mail)) return noOriginal
  const headers = list(mail["headers"]).map(obj)
  const header = (name: string) => str(headers.find((h) => str(h["name"])?.toLowerCase() === name)?.["value"])
  const common = obj(mail["commonHeaders"])
  const messageId = header("message-id") ?? str(common["messageId"])
  return {
    messageId: messageId === null ? null : messageId.replace(/^\s*<|>\s*$/g, ""),
    heraldMessageId: header("x-herald-message-id"),
    subject: header("subject") ?? str(common["subject"])
  }
}
