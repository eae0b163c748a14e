/**
 * The body of POST /v1/mail/send, both forms of the spec: the full form (personalizations) and the
 * flat form of the integration examples (top-level to/text/html), decoded into one canonical
 * request. Every field rule of the spec's request table lives here; a failure names the field
 * (`personalizations[0].to[1].email`) so the 400 says exactly what to fix.
 */
import { Either, ParseResult, Schema } from "effect"
import { formatPath } from "../lib/issue-path.ts"
import { bodyBoundedText, boundedArray, MAX_DATE_LENGTH } from "../http/bounds.ts"
import { StorableString } from "../lib/text.ts"
import {
  ADDRESS_MESSAGE,
  Address,
  AddressObject,
  AddressString,
  Attachment,
  Content,
  formsMessage,
  Headers,
  headersCount,
  MAX_HEADERS,
  MAX_RECIPIENTS_PER_LIST,
  Personalization,
  Recipients,
  Subject
} from "../mta/queue/parts.ts"

/**
 * How much one send may ask of the composer, beyond MAX_JSON_MB and the attachment bytes: each
 * message is built at delivery with a node per attachment, so a count is what bounds its memory
 * (300,000 one-byte attachments are 12 MB of JSON and exhausted the heap). The parts' own limits
 * (headers, subject, recipients per list) are in src/mta/queue/parts.ts. docs/sending.md "Request limits" lists them.
 */
export const MAX_ATTACHMENTS = 100
export const MAX_PERSONALIZATIONS = 1000
/** text/plain and text/html, with room for a client that repeats one. */
export const MAX_CONTENT_PARTS = 10

const PERSONALIZATIONS_COUNT = `personalizations must contain 1 to ${MAX_PERSONALIZATIONS} items`
const ATTACHMENTS_COUNT = `attachments must contain at most ${MAX_ATTACHMENTS} items`

/** The flat form's `to`: a list of addresses, or one address string (`"to": "ada@example.org"`). */
const FlatRecipients = Schema.Union(
  Recipients,
  Schema.transform(AddressString, Schema.Array(Schema.typeSchema(AddressObject)), {
    strict: true,
    decode: (address) => [address],
    encode: (list) => list[0]!
  })
).annotations({ message: formsMessage(`to ${ADDRESS_MESSAGE}, or a list of addresses`) })

const SEND_AT_MESSAGE = "send_at must be an ISO 8601 date-time with a time zone, such as 2026-12-01T09:00:00Z, " +
  "or an integer of Unix seconds"

const IsoDateTime = Schema.String.pipe(
  Schema.maxLength(MAX_DATE_LENGTH, { message: () => SEND_AT_MESSAGE }),
  Schema.filter((s) =>
    (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(s) && !Number.isNaN(Date.parse(s))) ||
    SEND_AT_MESSAGE, { jsonSchema: {} }
  )
).annotations({ description: "ISO 8601 with a time zone", examples: ["2026-12-01T09:00:00Z"] })

/** Unix seconds, as many APIs take them, read into the same ISO form (the canonical request keeps a string). */
const UnixSeconds = Schema.transformOrFail(
  Schema.Int.annotations({ title: "Unix seconds", description: "Unix seconds", examples: [1796115600] }),
  IsoDateTime,
  {
    strict: true,
    decode: (seconds, _, ast) => {
      const date = new Date(seconds * 1000)
      return seconds >= 0 && !Number.isNaN(date.getTime())
        ? ParseResult.succeed(date.toISOString())
        : ParseResult.fail(new ParseResult.Type(ast, seconds, SEND_AT_MESSAGE))
    },
    encode: (iso) => ParseResult.succeed(Math.floor(Date.parse(iso) / 1000))
  }
)

const DateTime = Schema.Union(IsoDateTime, UnixSeconds).annotations({
  message: () => ({ message: SEND_AT_MESSAGE, override: true })
})

const common = {
  reply_to: Schema.optional(Address),
  headers: Schema.optional(Headers),
  attachments: Schema.optional(Schema.Array(Attachment).pipe(
    Schema.maxItems(MAX_ATTACHMENTS, { message: () => ATTACHMENTS_COUNT })
  ).annotations({
    description: `At most ${MAX_ATTACHMENTS} attachments, MAX_ATTACHMENT_MB each and MAX_TOTAL_ATTACHMENTS_MB in all (decoded)`
  })),
  send_at: Schema.optional(DateTime)
}

export const FullRequest = Schema.Struct({
  personalizations: Schema.Array(Personalization).pipe(
    Schema.minItems(1, { message: () => PERSONALIZATIONS_COUNT }),
    Schema.maxItems(MAX_PERSONALIZATIONS, { message: () => PERSONALIZATIONS_COUNT })
  ),
  from: Address,
  subject: Subject("subject"),
  content: boundedArray(Content, MAX_CONTENT_PARTS).pipe(Schema.minItems(1, { message: () => "content must contain at least 1 item" })),
  ...common
}).annotations({
  identifier: "SendRequest",
  description: "The full form",
  examples: [{
    personalizations: [{ to: [{ email: "delivered@simulator.herald.invalid", name: "Ada Lovelace" }] }],
    from: { email: "hello@example.org", name: "Example Shop" },
    subject: "Your receipt",
    content: [
      { type: "text/plain", value: "Thank you for your order." },
      { type: "text/html", value: "<p>Thank you for your order.</p>" }
    ]
  }]
})
export type FullRequest = typeof FullRequest.Type

export const FlatRequest = Schema.Struct({
  from: Address,
  to: FlatRecipients,
  cc: Schema.optional(boundedArray(Address, MAX_RECIPIENTS_PER_LIST)),
  bcc: Schema.optional(boundedArray(Address, MAX_RECIPIENTS_PER_LIST)),
  subject: Subject("subject"),
  text: Schema.optional(bodyBoundedText(StorableString)),
  html: Schema.optional(bodyBoundedText(StorableString)),
  ...common
}).annotations({
  identifier: "FlatSendRequest",
  description: "The flat form of the integration examples",
  examples: [{
    from: { email: "hello@example.org", name: "Example Shop" },
    to: [{ email: "delivered@simulator.herald.invalid" }],
    subject: "Your receipt",
    text: "Thank you for your order.",
    html: "<p>Thank you for your order.</p>"
  }]
})
export type FlatRequest = typeof FlatRequest.Type

/** For the OpenAPI document: either form. */
export const SendRequestBody = Schema.Union(FullRequest, FlatRequest)

export interface InvalidField {
  readonly param: string | undefined
  readonly message: string
}

const firstIssue = (error: ParseResult.ParseError): InvalidField => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (issue === undefined) return { param: undefined, message: "invalid request body" }
  const param = formatPath(issue.path)
  if (param === "") return { param: undefined, message: issue.message }
  const message = issue.message === "is missing"
    ? `${param} is required`
    : issue.message.startsWith("is unexpected")
    ? `${param} is not a field of this request${issue.message.slice("is unexpected".length)}`
    : issue.message.startsWith(String(issue.path[issue.path.length - 1]))
    ? `${param}${issue.message.slice(String(issue.path[issue.path.length - 1]).length)}`
    : `${param}: ${issue.message}`
  return { param, message }
}

/**
 * An unknown field is refused, naming its path: the published schema says `additionalProperties:
 * false`, and a field silently dropped (a misspelt `reply_to`, `cc` at the wrong level) is mail sent
 * otherwise than its sender meant.
 */
const options = { errors: "first", onExcessProperty: "error" } as const

// Built once, not per request.
const decodeFull = Schema.decodeUnknownEither(FullRequest, options)
const decodeFlat = Schema.decodeUnknownEither(FlatRequest, options)

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** What a deployment configures of the counts (HERALD_MAX_REQUEST_RECIPIENTS). */
export interface DecodeLimits {
  readonly maxRequestRecipients: number
}

/** to + cc + bcc of every personalization, and of the flat form's top level. */
const countRecipients = (body: Record<string, unknown>): number => {
  const listed = (holder: unknown) =>
    isObject(holder) ? ["to", "cc", "bcc"].reduce((n, field) => n + (Array.isArray(holder[field]) ? (holder[field] as Array<unknown>).length : 0), 0) : 0
  const { personalizations } = body
  return listed(body) + (Array.isArray(personalizations) ? personalizations.reduce((n: number, p) => n + listed(p), 0) : 0)
}

/**
 * The counts, read on the parsed JSON before any element is decoded (the request's recipients
 * among them): the schema refuses the same
 * lists (and the OpenAPI document shows the limits), but only after decoding every element, which
 * for 300,000 attachments or headers cost one to two seconds of CPU per request.
 */
const countProblem = (body: Record<string, unknown>, limits: DecodeLimits): InvalidField | undefined => {
  const recipients = countRecipients(body)
  if (recipients > limits.maxRequestRecipients) {
    return {
      param: "personalizations" in body ? "personalizations" : "to",
      message: `The request has ${recipients} recipients (to, cc and bcc of all personalizations); one request may have at most ${limits.maxRequestRecipients} (HERALD_MAX_REQUEST_RECIPIENTS)`
    }
  }
  const tooManyHeaders = (headers: unknown, param: string): InvalidField | undefined => {
    const n = isObject(headers) ? Object.keys(headers).length : 0
    return n > MAX_HEADERS ? { param, message: `${param}: ${headersCount(n)}` } : undefined
  }
  const { attachments, headers, personalizations } = body
  if (Array.isArray(personalizations) && personalizations.length > MAX_PERSONALIZATIONS) {
    return { param: "personalizations", message: PERSONALIZATIONS_COUNT }
  }
  if (Array.isArray(attachments) && attachments.length > MAX_ATTACHMENTS) return { param: "attachments", message: ATTACHMENTS_COUNT }
  const personalizationHeaders = Array.isArray(personalizations)
    ? personalizations.map((p, i) => tooManyHeaders(isObject(p) ? p.headers : undefined, `personalizations[${i}].headers`))
    : []
  return tooManyHeaders(headers, "headers") ?? personalizationHeaders.find((p) => p !== undefined)
}

export type DecodedRequest = { readonly form: "full"; readonly body: FullRequest } | { readonly form: "flat"; readonly body: FlatRequest }

/** Picks the form (personalizations → full; top-level to → flat) and decodes it. */
export const decodeSendRequest = (body: unknown, limits: DecodeLimits): Either.Either<DecodedRequest, InvalidField> => {
  if (!isObject(body)) return Either.left({ param: undefined, message: "the request body must be a JSON object" })
  const tooMany = countProblem(body, limits)
  if (tooMany !== undefined) return Either.left(tooMany)
  if (!("personalizations" in body) && "to" in body) {
    return Either.flatMap(
      Either.mapLeft(decodeFlat(body), firstIssue),
      (flat): Either.Either<DecodedRequest, InvalidField> =>
        flat.text === undefined && flat.html === undefined
          ? Either.left({ param: "text", message: "text or html is required" })
          : Either.right({ form: "flat", body: flat })
    )
  }
  return Either.map(
    Either.mapLeft(decodeFull(body), firstIssue),
    (full): DecodedRequest => ({ form: "full", body: full })
  )
}
