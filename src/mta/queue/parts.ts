/**
 * The parts of a message as the queue stores them (src/mta/queue/StoredMessage.ts) and the send API
 * accepts them (src/transactional/request.ts decodes its requests with these schemas): addresses,
 * personalizations, content, headers and attachments. They live with the queue because the stored
 * message is the queue's contract: the MTA decodes every row with them, whatever area wrote it.
 */
import { ParseResult, Schema } from "effect"
import addressparser from "nodemailer/lib/addressparser"
import { EmailAddress, isEmailAddress } from "../../lib/email.ts"
import { isStorableText, storable, StorableString, UNSTORABLE_TEXT_MESSAGE } from "../../lib/text.ts"
import { bodyBoundedText, boundedArray, boundedText, MAX_LINE_LENGTH } from "../../http/bounds.ts"

/**
 * How much one message may ask of the composer, beyond MAX_JSON_MB and the attachment bytes: each
 * message is built at delivery with a node per header, so a count is what bounds its memory.
 * RFC 5322 §2.1.1 caps a line at 998 characters: a subject or header value longer than that is
 * no header a mail client shows whole. docs/sending.md "Request limits" lists them (with the request's counts,
 * src/transactional/request.ts).
 */
export const MAX_HEADERS = 100
export const MAX_HEADER_VALUE_LENGTH = 998
/** Names and values of one headers object together, in UTF-8 bytes. */
export const MAX_HEADERS_BYTES = 64 * 1024
export const MAX_SUBJECT_LENGTH = 998
/**
 * One to, cc or bcc list: HERALD_MAX_REQUEST_RECIPIENTS' default, the most one request may have in
 * all (the total is checked first, against the configured value).
 */
export const MAX_RECIPIENTS_PER_LIST = 10_000
/** RFC 6838 §4.2: a type and a subtype of at most 127 characters each. */
const MAX_MIME_TYPE_LENGTH = 255

export const headersCount = (n: number) => `at most ${MAX_HEADERS} headers are allowed (${n} given)`

const NonEmpty = (name: string) =>
  storable(Schema.String.pipe(Schema.minLength(1, { message: () => `${name} must be at least 1 character` })))

export const Subject = (name: string) =>
  NonEmpty(name).pipe(
    Schema.maxLength(MAX_SUBJECT_LENGTH, { message: () => `${name} must be at most ${MAX_SUBJECT_LENGTH} characters` })
  ).annotations({ description: `1 to ${MAX_SUBJECT_LENGTH} characters` })

export const AddressObject = Schema.Struct({
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
export const AddressString = Schema.transformOrFail(
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
export const formsMessage = (what: string) => (issue: ParseResult.ParseIssue) => {
  if (typeof issue.actual === "object" && issue.actual !== null) return { message: what, override: false }
  const stringForm = typeof issue.actual === "string" && issue._tag === "Composite" && Array.isArray(issue.issues)
    ? issue.issues.find((member) => member._tag === "Transformation")
    : undefined
  const [inner] = stringForm === undefined ? [] : ParseResult.ArrayFormatter.formatIssueSync(stringForm)
  return { message: inner?.message ?? what, override: true }
}

export const ADDRESS_MESSAGE = "must be an address: an object {email, name?} or a string such as \"Ada <ada@example.org>\""

/** An address: the object `{email, name?}` or the same as one string; either decodes to the object. */
export const Address = Schema.Union(AddressObject, AddressString).annotations({ message: formsMessage(ADDRESS_MESSAGE) })

export const Recipients = boundedArray(Address, MAX_RECIPIENTS_PER_LIST).pipe(Schema.minItems(1, { message: () => "to must contain at least 1 recipient" }))

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
