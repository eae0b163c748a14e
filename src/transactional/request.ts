/**
 * The body of POST /v1/mail/send, both forms of the spec: the full form (personalizations) and the
 * flat form of the integration examples (top-level to/text/html), decoded into one canonical
 * request. Every field rule of the spec's request table lives here; a failure names the field
 * (`personalizations[0].to[1].email`) so the 400 says exactly what to fix.
 */
import { Either, ParseResult, Schema } from "effect"
import { EmailAddress } from "../lib/email.ts"
import { formatPath } from "../lib/issue-path.ts"

const NonEmpty = (name: string) =>
  Schema.String.pipe(Schema.minLength(1, { message: () => `${name} must be at least 1 character` }))

export const Address = Schema.Struct({
  email: EmailAddress,
  name: Schema.optional(Schema.String)
}).annotations({ identifier: "Address" })

/** RFC 5322 §2.2: a field name is printable US-ASCII except colon; a value has no CR or LF. */
const headerNameProblem = (name: string): string | undefined => {
  if (!/^[\x21-\x39\x3b-\x7e]+$/.test(name)) return `invalid header name "${name}"`
  if (RESERVED_HEADERS.has(name.toLowerCase())) return `header ${name} is set by Herald and cannot be given`
  return undefined
}
const HeaderValue = Schema.String.pipe(
  Schema.filter((s) => !/[\r\n]/.test(s) || "header values must not contain line breaks")
)
// Names are checked on the whole record: a refined key schema would silently drop bad names.
export const Headers = Schema.Record({ key: Schema.String, value: HeaderValue }).pipe(
  Schema.filter((headers) => Object.keys(headers).map(headerNameProblem).find((p) => p !== undefined) ?? true)
)

/**
 * Headers Herald writes itself. X-Herald-Channel is not here: the spec says a client's value is
 * ignored (dropped in normalize.ts), not refused.
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  "from", "to", "cc", "bcc", "subject", "reply-to", "date", "message-id", "mime-version", "content-type",
  "content-transfer-encoding", "return-path", "dkim-signature", "sender", "x-herald-message-id"
])

const Base64 = Schema.String.pipe(
  Schema.minLength(1, { message: () => "content must not be empty" }),
  Schema.filter((s) => isBase64(s) || "content must be base64")
)

export const isBase64 = (s: string): boolean => {
  const compact = s.replace(/[\r\n]/g, "")
  return compact.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(compact)
}

export const Attachment = Schema.Struct({
  content: Base64,
  filename: NonEmpty("filename"),
  type: Schema.optional(
    Schema.String.pipe(Schema.filter((s) => /^[\w.+-]+\/[\w.+-]+$/.test(s) || "type must be a MIME type such as application/pdf"))
  ),
  content_id: Schema.optional(NonEmpty("content_id"))
}).annotations({ identifier: "Attachment" })

const DateTime = Schema.String.pipe(
  Schema.filter((s) =>
    (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(s) && !Number.isNaN(Date.parse(s))) ||
    "send_at must be an ISO 8601 date-time with a time zone, such as 2026-12-01T09:00:00Z"
  )
)

export const Personalization = Schema.Struct({
  to: Schema.Array(Address).pipe(Schema.minItems(1, { message: () => "to must contain at least 1 recipient" })),
  cc: Schema.optional(Schema.Array(Address)),
  bcc: Schema.optional(Schema.Array(Address)),
  subject: Schema.optional(NonEmpty("subject")),
  headers: Schema.optional(Headers)
}).annotations({ identifier: "Personalization" })

export const Content = Schema.Struct({
  type: Schema.Literal("text/plain", "text/html").annotations({
    message: () => "type must be text/plain or text/html"
  }),
  value: Schema.String
}).annotations({ identifier: "Content" })

const common = {
  reply_to: Schema.optional(Address),
  headers: Schema.optional(Headers),
  attachments: Schema.optional(Schema.Array(Attachment)),
  send_at: Schema.optional(DateTime)
}

export const FullRequest = Schema.Struct({
  personalizations: Schema.Array(Personalization).pipe(
    Schema.minItems(1, { message: () => "personalizations must contain 1 to 1000 items" }),
    Schema.maxItems(1000, { message: () => "personalizations must contain 1 to 1000 items" })
  ),
  from: Address,
  subject: NonEmpty("subject"),
  content: Schema.Array(Content).pipe(Schema.minItems(1, { message: () => "content must contain at least 1 item" })),
  ...common
}).annotations({ identifier: "SendRequest", description: "The full form" })
export type FullRequest = typeof FullRequest.Type

export const FlatRequest = Schema.Struct({
  from: Address,
  to: Schema.Array(Address).pipe(Schema.minItems(1, { message: () => "to must contain at least 1 recipient" })),
  cc: Schema.optional(Schema.Array(Address)),
  bcc: Schema.optional(Schema.Array(Address)),
  subject: NonEmpty("subject"),
  text: Schema.optional(Schema.String),
  html: Schema.optional(Schema.String),
  ...common
}).annotations({ identifier: "FlatSendRequest", description: "The flat form of the integration examples" })
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
    : issue.message.startsWith(String(issue.path[issue.path.length - 1]))
    ? `${param}${issue.message.slice(String(issue.path[issue.path.length - 1]).length)}`
    : `${param}: ${issue.message}`
  return { param, message }
}

const options = { errors: "first", onExcessProperty: "ignore" } as const

export type DecodedRequest = { readonly form: "full"; readonly body: FullRequest } | { readonly form: "flat"; readonly body: FlatRequest }

/** Picks the form (personalizations → full; top-level to → flat) and decodes it. */
export const decodeSendRequest = (body: unknown): Either.Either<DecodedRequest, InvalidField> => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return Either.left({ param: undefined, message: "the request body must be a JSON object" })
  }
  if (!("personalizations" in body) && "to" in body) {
    return Either.flatMap(
      Either.mapLeft(Schema.decodeUnknownEither(FlatRequest, options)(body), firstIssue),
      (flat): Either.Either<DecodedRequest, InvalidField> =>
        flat.text === undefined && flat.html === undefined
          ? Either.left({ param: "text", message: "text or html is required" })
          : Either.right({ form: "flat", body: flat })
    )
  }
  return Either.map(
    Either.mapLeft(Schema.decodeUnknownEither(FullRequest, options)(body), firstIssue),
    (full): DecodedRequest => ({ form: "full", body: full })
  )
}
