/**
 * Amazon SES complaint notifications delivered by e-mail through SNS: a text/plain body holding the
 * notification JSON (`notificationType: "Complaint"`, or `eventType` for event publishing), either
 * bare or inside the SNS envelope (`Type: "Notification"`, the JSON as the `Message` string).
 * https://docs.aws.amazon.com/ses/latest/dg/notification-contents.html
 */
import { noOriginal } from "../fields.ts"
import type { OriginalMessage } from "../types.ts"
import { emptyDetails, normaliseAddress, type ParsedComplaint, unique } from "./common.ts"
import { resolveIsp } from "./isp.ts"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const obj = (value: Json | undefined): JsonObject => (isObject(value) ? value : {})
const list = (value: Json | undefined): ReadonlyArray<Json> => (Array.isArray(value) ? value : [])
const str = (value: Json | undefined): string | null => (typeof value === "string" && value.trim() !== "" ? value.trim() : null)

const parseJson = (text: string): Json | undefined => {
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}

/**
 * The JSON object in the body. A relay on the way broke the over-long JSON line with `!`, a line
 * break and a space (sendmail's treatment of lines past the mailer's line limit; sisimai's SES
 * samples carry it), so that split is undone when the text does not parse as it stands.
 */
const bodyJson = (text: string): JsonObject | null => {
  const start = text.indexOf("{")
  const end = text.lastIndexOf("}")
  if (start < 0 || end <= start) return null
  const candidate = text.slice(start, end + 1)
  const parsed = parseJson(candidate) ?? parseJson(candidate.replace(/!(\r\n|\n|\r) /g, ""))
  return isObject(parsed) ? parsed : null
}

const notification = (text: string): JsonObject | null => {
  const outer = bodyJson(text)
  if (outer === null) return null
  const inner = str(outer["Message"])
  if (outer["Type"] === "Notification" && inner !== null) {
    const parsed = parseJson(inner)
    return isObject(parsed) ? parsed : null
  }
  return outer
}

/** `mail.headers` is a list of `{name, value}`; `commonHeaders` the parsed common ones. */
const originalOf = (mail: JsonObject): OriginalMessage => {
  const headers = list(mail["headers"]).map(obj)
  const header = (name: string) => str(headers.find((h) => str(h["name"])?.toLowerCase() === name)?.["value"])
  const common = obj(mail["commonHeaders"])
  const messageId = header("message-id") ?? str(common["messageId"])
  return {
    ...noOriginal,
    messageId: messageId === null ? null : messageId.replace(/^<|>$/g, ""),
    heraldMessageId: header("x-herald-message-id"),
    subject: header("subject") ?? str(common["subject"])
  }
}

/** An SES complaint notification, or null for any other body (bounces, deliveries, prose). */
export const parseSes = (text: string | null, reporterFrom: string | null): ParsedComplaint | null => {
  if (text === null || !text.includes("Complaint")) return null
  const message = notification(text)
  if (message === null || (message["notificationType"] !== "Complaint" && message["eventType"] !== "Complaint")) return null
  const complaint = obj(message["complaint"])
  const mail = obj(message["mail"])
  const recipients = unique(
    list(complaint["complainedRecipients"])
      .map((r) => str(obj(r)["emailAddress"]))
      .map((a) => (a === null ? null : normaliseAddress(a)))
      .filter((a): a is string => a !== null)
  )
  const userAgent = str(complaint["userAgent"])
  const original = originalOf(mail)
  return {
    // SES sends complaintFeedbackType only when the ISP's report carried one; a complaint without it is spam.
    feedback_type: str(complaint["complaintFeedbackType"])?.toLowerCase() ?? "abuse",
    isp: resolveIsp(reporterFrom, userAgent),
    recipients,
    original_message_id: original.messageId,
    original,
    details: {
      ...emptyDetails("ses", reporterFrom),
      user_agent: userAgent,
      source_ip: str(mail["sourceIp"]),
      arrival_date: str(complaint["arrivalDate"]) ?? str(complaint["timestamp"]),
      original_mail_from: str(mail["source"]),
      original_rcpt_to: recipients,
      enclosed_to: unique(
        list(obj(mail["commonHeaders"])["to"])
          .map((a) => (typeof a === "string" ? normaliseAddress(a) : null))
          .filter((a): a is string => a !== null)
      )
    }
  }
}
