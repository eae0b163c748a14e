/**
 * The body of POST /v1/mail/send, both forms of the spec: the full form (personalizations) and the
 * flat form of the integration examples (top-level to/text/html), decoded into one canonical
 * request. Every field rule of the spec's request table lives here; a failure names the field
 * (`personalizations[0].to[1].email`) so the 400 says exactly what to fix.
 */
import { Either, ParseResult, Schema } from "effect"
import addressparser from "nodemailer/lib/addressparser"
import { EmailAddress, isEmailAddress } from "../lib/email.ts"
import { formatPath } from "../lib/issue-path.ts"
import { isStorableText, storable, StorableString, UNSTORABLE_TEXT_MESSAGE } from "../lib/text.ts"
import { bodyBoundedText, boundedArray, boundedText, MAX_DATE_LENGTH, MAX_LINE_LENGTH } from "../http/bounds.ts"

/**
 * How much one send may ask of the composer, beyond MAX_JSON_MB and the attachment bytes: each
 * message is built at delivery with a node per attachment and per header, so a count is what
 * bounds its memory (300,000 one-byte attachments are 12 MB of JSON and exhausted the heap).
 * RFC 5322 §2.1.1 caps a line at 998 characters: a subject or header value longer than that is
 * no header a mail client shows whole. README "Limits" lists them.
 */
export const MAX_ATTACHMENTS = 100
export const MAX_HEADERS = 100
export const MAX_HEADER_VALUE_LENGTH = 998
/** Names and values of one headers object together, in UTF-8 bytes. */
export const MAX_HEADERS_BYTES = 64 * 1024
export const MAX_SUBJECT_LENGTH = 998
export const MAX_PERSONALIZATIONS = 1000
/**
 * One to, cc or bcc list: HERALD_MAX_REQUEST_RECIPIENTS' default, the most one request may have in
 * all (the total is checked first, against the configured value).
 */
export const MAX_RECIPIENTS_PER_LIST = 10_000
/** text/plain and text/html, with room for a client that repeats one. */
export const MAX_CONTENT_PARTS = 10
/** RFC 6838 §4.2: a type and a subtype of at most 127 characters each. */
const MAX_MIME_TYPE_LENGTH = 255

const PERSONALIZATIONS_COUNT = `personalizations must contain 1 to ${MAX_PERSONALIZATIONS} items`
const ATTACHMENTS_COUNT = `attachments must contain at most ${MAX_ATTACHMENTS} items`
const headersCount = (n: number) => `at most ${MAX_HEADERS} headers are allowed (${n} given)`

const NonEmpty = (name: string) =>
  storable(Schema.String.pipe(Schema.minLength(1, { message: () => `${name} must be at least 1 character` })))

const Subject = (name: string) =>
  NonEmpty(name).pipe(
    Schema.maxLength(MAX_SUBJECT_LENGTH, { message: () => `${name} must be at most ${MAX_SUBJECT_LENGTH} characters` })
  ).annotations({ description: `1 to ${MAX_SUBJECT_LENGTH} characters` })

const AddressObject = Schema.Struct({
  email: EmailAddress,
  name: Schema.optional(boundedText(MAX_LINE_LENGTH))
}).annotations({ identifier: "Address" })
export type Address = typeof Address.Type

const ADDRESS_STRING_MESSAGE = "must be one address, such as \"Ada <ada@example.org>\" or \"ada@example.org\""

/**
 * One address written as a string, `"Name <a@b.example>"` or `"a@b.example"`, read by nodemailer's
 * addressparser (the parser its own SMTP client uses) into the object form, under the object's
 * rules (the same email check, a storable name). A list, a group or text with no address is
 * refused rather than guessed at.
 */
const AddressString = Schema.transformOrFail(
  Schema.String.pipe(Schema.maxLength(MAX_LINE_LENGTH)).annotations({
    identifier: "AddressString",
    description: "One address as a string: \"Name <a@b.example>\" or \"a@b.example\"",
    examples: ["Ada Lovelace <ada@example.org>", "ada@example.org"]
  }),
  Schema.typeSchema(AddressObject),
  {
    strict: true,
    decode: (text, _, ast) => {
      const refuse = (message: string) => ParseResult.fail(new ParseResult.Type(ast, text, message))
      // Checked on the whole string: the parser drops a NUL silently, and a changed name is not what was sent.
      if (!isStorableText(text)) return refuse(UNSTORABLE_TEXT_MESSAGE)
      const parsed = addressparser(text)
      const only = parsed.length === 1 ? parsed[0] : undefined
      if (only === undefined || "group" in only || only.address === "") return refuse(ADDRESS_STRING_MESSAGE)
      if (!isEmailAddress(only.address)) return refuse(`has "${only.address}", which is not a valid email address (local@domain)`)
      return ParseResult.succeed(only.name === "" ? { email: only.address } : { email: only.address, name: only.name })
    },
    encode: (address) => ParseResult.succeed(address.name === undefined ? address.email : `"${address.name}" <${address.email}>`)
  }
)

/**
 * The message of a union of an object form and a string form. A union that fails reports each
 * form's issue, the object form's first ("Expected Address" for a string): an object keeps its own
 * issue and path (`from.email`); a string gets the string form's message; anything else `what`.
 */
const formsMessage = (what: string) => (issue: ParseResult.ParseIssue) => {
  if (typeof issue.actual === "object" && issue.actual !== null) return { message: what, override: false }
  const stringForm = typeof issue.actual === "string" && issue._tag === "Composite" && Array.isArray(issue.issues)
    ? issue.issues.find((member) => member._tag === "Transformation")
    : undefined
  const [inner] = stringForm === undefined ? [] : ParseResult.ArrayFormatter.formatIssueSync(stringForm)
  return { message: inner?.message ?? what, override: true }
}

const ADDRESS_MESSAGE = "must be an address: an object {email, name?} or a string such as \"Ada <ada@example.org>\""

/** An address: the object `{email, name?}` or the same as one string; either decodes to the object. */
export const Address = Schema.Union(AddressObject, AddressString).annotations({ message: formsMessage(ADDRESS_MESSAGE) })

const Recipients = boundedArray(Address, MAX_RECIPIENTS_PER_LIST).pipe(Schema.minItems(1, { message: () => "to must contain at least 1 recipient" }))

/** The flat form's `to`: a list of addresses, or one address string (`"to": "ada@example.org"`). */
const FlatRecipients = Schema.Union(
  Recipients,
  Schema.transform(AddressString, Schema.Array(Schema.typeSchema(AddressObject)), {
    strict: true,
    decode: (address) => [address],
    encode: (list) => list[0]!
  })
).annotations({ message: formsMessage(`to ${ADDRESS_MESSAGE}, or a list of addresses`) })

/** RFC 5322 §2.2: a field name is printable US-ASCII except colon; a value has no CR or LF. */
const headerNameProblem = (name: string): string | undefined => {
  if (!/^[\x21-\x39\x3b-\x7e]+$/.test(name)) return `invalid header name "${name}"`
  if (RESERVED_HEADERS.has(name.toLowerCase())) return `header ${name} is set by Herald and cannot be given`
  return undefined
}
const HeaderValue = storable(Schema.String.pipe(
  Schema.filter((s) => !/[\r\n]/.test(s) || "header values must not contain line breaks"),
  Schema.maxLength(MAX_HEADER_VALUE_LENGTH, {
    message: () => `header values must be at most ${MAX_HEADER_VALUE_LENGTH} characters (RFC 5322 line length)`
  })
))

const headersSizeProblem = (headers: Readonly<Record<string, string>>): string | undefined => {
  const entries = Object.entries(headers)
  if (entries.length > MAX_HEADERS) return headersCount(entries.length)
  const bytes = entries.reduce((n, [name, value]) => n + Buffer.byteLength(name) + Buffer.byteLength(value), 0)
  if (bytes > MAX_HEADERS_BYTES) return `headers must total at most ${MAX_HEADERS_BYTES} bytes of names and values (${bytes} given)`
  return undefined
}

// Names are checked on the whole record: a refined key schema would silently drop bad names.
export const Headers = Schema.Record({ key: Schema.String, value: HeaderValue }).pipe(
  Schema.filter((headers) =>
    headersSizeProblem(headers) ?? Object.keys(headers).map(headerNameProblem).find((p) => p !== undefined) ?? true, {
    jsonSchema: { maxProperties: MAX_HEADERS, "x-max-bytes": MAX_HEADERS_BYTES },
    description: `At most ${MAX_HEADERS} headers and ${MAX_HEADERS_BYTES} bytes of names and values; ` +
      `each value at most ${MAX_HEADER_VALUE_LENGTH} characters, without line breaks`
  })
)

/**
 * Headers Herald writes itself. X-Herald-Channel is not here: the spec says a client's value is
 * ignored (dropped in normalize.ts), not refused.
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  "from", "to", "cc", "bcc", "subject", "reply-to", "date", "message-id", "mime-version", "content-type",
  "content-transfer-encoding", "return-path", "dkim-signature", "sender", "x-herald-message-id"
])

// Bounded by the body (MAX_JSON_MB) and, decoded, by MAX_ATTACHMENT_MB: no tighter bound of its own.
const Base64 = bodyBoundedText(Schema.String.pipe(
  Schema.minLength(1, { message: () => "content must not be empty" }),
  Schema.filter((s) => isBase64(s) || "content must be base64")
))

export const isBase64 = (s: string): boolean => {
  const compact = s.replace(/[\r\n]/g, "")
  return compact.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(compact)
}

export const Attachment = Schema.Struct({
  content: Base64,
  filename: NonEmpty("filename").pipe(Schema.maxLength(MAX_LINE_LENGTH)),
  type: Schema.optional(Schema.String.pipe(
    Schema.maxLength(MAX_MIME_TYPE_LENGTH),
    Schema.filter((s) => /^[\w.+-]+\/[\w.+-]+$/.test(s) || "type must be a MIME type such as application/pdf")
  )),
  content_id: Schema.optional(NonEmpty("content_id").pipe(Schema.maxLength(MAX_LINE_LENGTH)))
}).annotations({ identifier: "Attachment" })

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

export const Personalization = Schema.Struct({
  to: Recipients,
  cc: Schema.optional(boundedArray(Address, MAX_RECIPIENTS_PER_LIST)),
  bcc: Schema.optional(boundedArray(Address, MAX_RECIPIENTS_PER_LIST)),
  subject: Schema.optional(Subject("subject")),
  headers: Schema.optional(Headers)
}).annotations({ identifier: "Personalization" })
export type Personalization = typeof Personalization.Type

export const Content = Schema.Struct({
  type: Schema.Literal("text/plain", "text/html").annotations({
    message: () => "type must be text/plain or text/html"
  }),
  value: bodyBoundedText(StorableString)
}).annotations({ identifier: "Content" })

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
