/**
 * The stored message: what the queue holds for one message, written by the queue writer and
 * decoded by the MTA when it loads the message. One union of every form a message can take:
 *
 * - `structured`: a send from the API (sender, subject, parts, headers, attachments) and the
 *   personalization this message is for;
 * - `raw`: MIME kept as written (SMTP submission), base64 so any byte survives JSON;
 * - `campaign` / `sequence`: a reference rendered at delivery time from one stored campaign
 *   message and the contact's variables (the campaigns and sequences issues fill these);
 * - `system`: mail that belongs to no account, such as TLS reports: structured, or MIME as the
 *   appliance wrote it (a TLS report is a multipart/report, RFC 8460 §5.3).
 *
 * Every form carries its `origin` (which outcome events it emits, src/events/outcomes.ts) and its
 * `channel` (`transactional` or `bulk`: the claim's lane and the X-Herald-Channel header). Both are
 * also columns of `messages` (and the channel of `deliveries`), for the claim's SQL.
 *
 * Stored in two rows: `message` — the part shared by every message of one request (the body and
 * the attachments) — is one `message_contents` row per request, referenced by `messages.content_id`;
 * the rest (the personalization, the contact's variables) is `messages.content`. A 15 MB send to
 * 1,000 personalizations stores (and stringifies) its 15 MB once, not 1,000 times.
 *
 * Rows of older versions have no `content_id`: their `messages.content` is the whole
 * single-personalization request, decoded here as a `structured` transactional message.
 */
import { Either, ParseResult, Schema } from "effect"
import { formatPath } from "../../lib/issue-path.ts"
import { composePartsProblem } from "./compose-limits.ts"
import { Address, Attachment, Content, Headers, Personalization } from "./parts.ts"

export const Channel = Schema.Literal("transactional", "bulk")
export type Channel = typeof Channel.Type

/** The message-level part of an API send: stored once per request, shared by its personalizations. */
export const StructuredContent = Schema.Struct({
  from: Address,
  reply_to: Schema.optional(Address),
  subject: Schema.String,
  content: Schema.Array(Content),
  headers: Schema.optional(Headers),
  attachments: Schema.optional(Schema.Array(Attachment))
})
export type StructuredContent = typeof StructuredContent.Type

export const StructuredMessage = Schema.TaggedStruct("structured", {
  origin: Schema.Literal("transactional", "confirmation", "test_send"),
  channel: Channel,
  message: StructuredContent,
  personalization: Personalization
})
export type StructuredMessage = typeof StructuredMessage.Type

/** MIME kept as written, base64 so any byte survives JSON. */
export const RawContent = Schema.Struct({ mime_base64: Schema.String })

export const RawMessage = Schema.TaggedStruct("raw", {
  origin: Schema.Literal("transactional"),
  channel: Channel,
  message: RawContent
})
export type RawMessage = typeof RawMessage.Type

/**
 * One stored campaign message (a template), shared by every contact it goes to: `subject` and
 * the `content` values are the rendering engine's sources (src/bulk/render), rendered per contact
 * at delivery time (src/mta/compose/compose.ts); `vars` are the content's default variables.
 */
export const CampaignContent = Schema.Struct({
  from: Address,
  reply_to: Schema.optional(Address),
  subject: Schema.String,
  content: Schema.Array(Content),
  headers: Schema.optional(Headers),
  vars: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  /**
   * The key's footer (its sources and postal address), stored with the content when it is fixed and
   * added by the bulk area's render to each part without `{{ unsubscribe_url }}` (src/bulk/render/footer.ts).
   */
  footer: Schema.optional(Schema.Struct({ html: Schema.String, text: Schema.String, postal_address: Schema.String }))
})
export type CampaignContent = typeof CampaignContent.Type

const ContactFields = {
  channel: Channel,
  contact_id: Schema.String,
  to: Address,
  /** The contact's variables: `email`, `name`, `metadata` (an object), over the content's `vars`. */
  variables: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  message: CampaignContent
}

export const CampaignReference = Schema.TaggedStruct("campaign", {
  origin: Schema.Literal("campaign", "test_send"),
  campaign_id: Schema.String,
  ...ContactFields
})

export const SequenceReference = Schema.TaggedStruct("sequence", {
  origin: Schema.Literal("sequence"),
  sequence_id: Schema.String,
  step: Schema.Int,
  ...ContactFields
})

export const SystemMessage = Schema.TaggedStruct("system", {
  origin: Schema.Literal("system"),
  channel: Schema.Literal("transactional"),
  to: Schema.Array(Address),
  message: Schema.Union(StructuredContent, RawContent)
})

export const StoredMessage = Schema.Union(StructuredMessage, RawMessage, CampaignReference, SequenceReference, SystemMessage)
export type StoredMessage = typeof StoredMessage.Type

/**
 * The forms of one API send, one per personalization index. The shared part is built once and
 * referenced by every form (the queue writer stores it once, by identity), never copied.
 */
export const structuredMessages = (
  request: StructuredContent & { readonly personalizations: ReadonlyArray<typeof Personalization.Type> },
  /** A template's test-send is `test_send` on the `bulk` channel; an API send, the default. */
  source: Pick<StructuredMessage, "origin" | "channel"> = { origin: "transactional", channel: "transactional" }
) => {
  const message: StructuredContent = {
    from: request.from,
    subject: request.subject,
    content: request.content,
    ...(request.reply_to === undefined ? {} : { reply_to: request.reply_to }),
    ...(request.headers === undefined ? {} : { headers: request.headers }),
    ...(request.attachments === undefined ? {} : { attachments: request.attachments })
  }
  return (index: number): StructuredMessage => ({
    _tag: "structured",
    origin: source.origin,
    channel: source.channel,
    message,
    personalization: request.personalizations[index]!
  })
}

/** The two stored parts of a message: `shared` for message_contents, `own` for messages.content. */
export const storedParts = (stored: StoredMessage): { readonly shared: object; readonly own: Record<string, unknown> } => {
  const { message, ...own } = stored
  return { shared: message, own }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** A row of an older version: the whole single-personalization request, with no shared part. */
const fromLegacy = (own: Record<string, unknown>): Record<string, unknown> => ({
  _tag: "structured",
  origin: "transactional",
  channel: "transactional",
  message: own,
  personalization: Array.isArray(own["personalizations"]) ? own["personalizations"][0] : undefined
})

const decode = Schema.decodeUnknownEither(StoredMessage, { errors: "first", onExcessProperty: "ignore" })

const describe = (error: ParseResult.ParseError): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (issue === undefined) return "the stored message does not decode"
  const path = formatPath(issue.path)
  return `the stored message does not decode: ${path === "" ? "" : `${path}: `}${issue.message}`
}

/**
 * The message from its two stored parts (`shared` null: no message_contents row), or why it
 * cannot be delivered. The structured forms' counts and sizes are checked first (`composePartsProblem`,
 * one cheap pass), so a row of 300,000 attachments is refused before the schema walks it.
 */
export const decodeStoredMessage = (own: unknown, shared: unknown): Either.Either<StoredMessage, string> => {
  if (!isRecord(own)) return Either.left("the stored message is not a JSON object")
  const whole = shared === null || shared === undefined
    ? ("_tag" in own ? own : fromLegacy(own))
    : { ...own, message: shared }
  if (whole["_tag"] === "structured" || (whole["_tag"] === "system" && !(isRecord(whole["message"]) && "mime_base64" in whole["message"]))) {
    const personalization = whole["_tag"] === "system" ? { to: whole["to"] } : whole["personalization"]
    const problem = composePartsProblem(whole["message"], personalization)
    if (problem !== null) return Either.left(problem)
  }
  return Either.mapLeft(decode(whole), describe)
}
