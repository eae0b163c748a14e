/**
 * The RFC 5322 message of one personalization, built with nodemailer's MailComposer at delivery
 * time from the stored message (src/mta/queue/StoredMessage.ts). Header rules:
 * - the personalization's subject and headers override the message-level ones (names compared
 *   case-insensitively);
 * - Bcc recipients get the message but never a Bcc header;
 * - `Message-ID: <{messageId}@{sending domain}>`, `X-Herald-Message-Id` and
 *   `X-Herald-Channel` (the stored message's channel: transactional or bulk) are always the
 *   appliance's own;
 * - inline attachments (content_id) are `cid:` parts of a multipart/related body.
 *
 * Composing costs memory and main-thread time by the number of parts and header fields, not only
 * by bytes: 10,000 one-byte attachments took 35 MB and a second, 300,000 of them (12 MB of JSON)
 * ran the process out of heap. So the MTA checks a stored message with `composePartsProblem` before
 * composing it — whatever the version that accepted it, or whatever wrote the row.
 */
import MailComposer from "nodemailer/lib/mail-composer"
import type { Channel, StoredMessage, StructuredContent } from "../queue/StoredMessage.ts"
import type { makeTokens } from "../../bulk/public/tokens.ts"
import { unsubscribeHeaders, unsubscribeToken, unsubscribeUrl } from "../../bulk/public/unsubscribe-link.ts"
import type { ContentSource, RenderedContent } from "../../bulk/render/content.ts"
import type { Scope } from "../../bulk/render/engine.ts"
import { fillTracking } from "../../bulk/tracking/rewrite.ts"
import { recipientTokens } from "../../bulk/tracking/tokens.ts"

export interface ComposeOptions {
  readonly messageId: string
  readonly sendingDomain: string
  readonly date: Date
  /** What composing a campaign or sequence reference needs (the MTA passes it; without it they are refused). */
  readonly bulk?: BulkRendering | undefined
  /** A campaign or sequence reference's content rendered for its contact (`referenceRender`), by the MTA in a render worker. */
  readonly rendered?: RenderedContent | undefined
  /**
   * The delivery the message is composed for: a campaign's tracking tokens name it. A campaign
   * message has one recipient, so one delivery (its retries are the same delivery).
   */
  readonly deliveryId?: string | undefined
}

/** The unsubscribe tokens and where their links point, for one account's bulk message. */
export interface BulkRendering {
  readonly tokens: ReturnType<typeof makeTokens>
  readonly baseUrl: string
  readonly bounceDomain: string
  readonly accountId: string
}

interface Address {
  readonly email: string
  readonly name?: string | undefined
}

const address = (a: Address) =>
  a.name === undefined || a.name === "" ? a.email : { name: a.name, address: a.email }

/** Message headers, then the personalization's on top, matched without regard to case. */
export const mergeHeaders = (
  message: Readonly<Record<string, string>> | undefined,
  personalization: Readonly<Record<string, string>> | undefined
): Record<string, string> => {
  const merged = new Map<string, [string, string]>()
  for (const source of [message ?? {}, personalization ?? {}]) {
    for (const [name, value] of Object.entries(source)) merged.set(name.toLowerCase(), [name, value])
  }
  return Object.fromEntries(merged.values())
}

/** What one message may hold to be composed (each well above what the sending API accepts). */
export interface ComposeLimits {
  readonly maxAttachments: number
  /** Custom header fields, message-level and personalization-level together. */
  readonly maxHeaderFields: number
  /** UTF-8 bytes of the subject, the addresses and the custom header fields' names and values. */
  readonly maxHeaderBytes: number
}

/**
 * Measured: 1,000 attachments compose in about 0.3 s and 8 MB, 1,000 header fields in a few ms,
 * 1 MB of header text in about 40 ms. Postfix refuses a header of more than 100 KB by default
 * (header_size_limit), so no message that could be delivered comes near the header bound.
 */
export const COMPOSE_LIMITS: ComposeLimits = { maxAttachments: 1_000, maxHeaderFields: 1_000, maxHeaderBytes: 1_048_576 }

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const textBytes = (value: unknown): number => (typeof value === "string" ? Buffer.byteLength(value) : 0)

const addressBytes = (list: unknown): number =>
  Array.isArray(list) ? list.reduce((n: number, a) => n + (isRecord(a) ? textBytes(a["email"]) + textBytes(a["name"]) : 0), 0) : 0

/**
 * Why a stored message (read as unknown: a row of any version, or written by anything) cannot be
 * composed within `limits`, or null: `message` is its message-level part (from, subject, headers,
 * attachments), `personalization` the recipients' part. Only counts and sizes, each in one pass:
 * the check is cheap on the very content it refuses.
 */
export const composePartsProblem = (message: unknown, personalization: unknown, limits: ComposeLimits = COMPOSE_LIMITS): string | null => {
  if (!isRecord(message)) return "the stored request is not a JSON object"
  if (!isRecord(personalization)) return "the stored request has no personalization"
  const attachments = message["attachments"] ?? []
  if (!Array.isArray(attachments)) return "the stored request's attachments are not a list"
  if (attachments.length > limits.maxAttachments) {
    return `the message has ${attachments.length} attachments; at most ${limits.maxAttachments} can be composed`
  }
  const headerSets = [message["headers"] ?? {}, personalization["headers"] ?? {}]
  if (!headerSets.every(isRecord)) return "the stored request's headers are not an object"
  let fields = 0
  let bytes = textBytes(message["subject"]) + textBytes(personalization["subject"]) + addressBytes(personalization["to"]) +
    addressBytes(personalization["cc"])
  for (const headers of headerSets as Array<Record<string, unknown>>) {
    for (const name in headers) {
      fields += 1
      if (fields > limits.maxHeaderFields) break
      bytes += Buffer.byteLength(name) + textBytes(headers[name])
    }
  }
  if (fields > limits.maxHeaderFields) return `the message has more than ${limits.maxHeaderFields} custom header fields, the most that can be composed`
  if (bytes > limits.maxHeaderBytes) return `the message's headers hold ${bytes} bytes; at most ${limits.maxHeaderBytes} can be composed`
  return null
}

/** `composePartsProblem` of a whole single-personalization request (the form older versions stored). */
export const composeProblem = (content: unknown, limits: ComposeLimits = COMPOSE_LIMITS): string | null => {
  if (!isRecord(content)) return "the stored request is not a JSON object"
  const personalization = Array.isArray(content["personalizations"]) ? content["personalizations"][0] : undefined
  return composePartsProblem(content, personalization, limits)
}

interface Addressed {
  readonly to: ReadonlyArray<Address>
  readonly cc?: ReadonlyArray<Address> | undefined
  readonly subject?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * The MIME of a stored message, ready to be signed. A campaign or sequence reference needs its
 * contact's render (`options.rendered`, made from `referenceRender` in a render worker).
 */
export const composeStored = (stored: StoredMessage, options: ComposeOptions): Promise<Buffer> => {
  switch (stored._tag) {
    case "structured":
      return composeMessage(stored.message, stored.personalization, stored.channel, options)
    case "system":
      return composeMessage(stored.message, { to: stored.to }, stored.channel, options)
    case "raw":
      return Promise.resolve(Buffer.from(stored.message.mime_base64, "base64"))
    case "campaign":
    case "sequence":
      return options.bulk === undefined || options.rendered === undefined
        ? Promise.reject(new Error(`${stored._tag} messages need their render to be composed`))
        : composeReference(stored, options.rendered, options.bulk, options)
  }
}

export type Reference = Extract<StoredMessage, { readonly _tag: "campaign" | "sequence" }>

const whoOf = (stored: Reference, bulk: BulkRendering) =>
  ({ accountId: bulk.accountId, email: stored.to.email, source: stored._tag === "campaign" ? stored.campaign_id : stored.sequence_id })

/**
 * What one contact's campaign or sequence message is rendered from: the stored content's subject,
 * html and text, and the contact's variables over the content's `vars`, with `{{ unsubscribe_url }}`
 * pointing at the contact's unsubscribe page.
 */
export const referenceRender = (stored: Reference, bulk: BulkRendering): { readonly content: ContentSource; readonly scope: Scope } => {
  const message = stored.message
  const scope = { ...message.vars, ...stored.variables, unsubscribe_url: unsubscribeUrl(bulk.baseUrl, unsubscribeToken(bulk.tokens, whoOf(stored, bulk))) }
  const content = {
    subject: message.subject,
    html: message.content.find((c) => c.type === "text/html")?.value ?? "",
    body_text: message.content.find((c) => c.type === "text/plain")?.value ?? ""
  }
  return { content, scope }
}

/**
 * One contact's campaign or sequence message (the two forms share their content shape): its
 * render (`referenceRender`) and the `List-Unsubscribe` + `List-Unsubscribe-Post` headers (RFC 2369, RFC 8058) naming the campaign
 * or sequence. Unsubscribe headers are the appliance's own: the stored headers cannot replace them.
 *
 * A campaign's own delivery (origin `campaign`: never a sequence step or a test-send) gets its
 * recipient's tracking tokens in place of the placeholders the frozen HTML holds (DESIGN
 * "Tracking"), by substitution over the rendered HTML, after the engine: a contact's variables can
 * never produce or move a token.
 */
export const composeReference = (stored: Reference, rendered: RenderedContent, bulk: BulkRendering, options: ComposeOptions): Promise<Buffer> => {
  const message = stored.message
  const who = whoOf(stored, bulk)
  const where = { baseUrl: bulk.baseUrl, bounceDomain: bulk.bounceDomain }
  const { subject, text } = rendered
  let html = rendered.html
  if (stored._tag === "campaign" && stored.origin === "campaign" && html !== null) {
    if (options.deliveryId === undefined) return Promise.reject(new Error("a campaign message needs its delivery id to be composed"))
    html = fillTracking(html, recipientTokens(bulk.tokens, { deliveryId: options.deliveryId, campaignId: stored.campaign_id }))
  }
  return composeMessage(
    {
      from: message.from,
      ...(message.reply_to === undefined ? {} : { reply_to: message.reply_to }),
      subject,
      content: [{ type: "text/plain", value: text }, ...(html === null ? [] : [{ type: "text/html" as const, value: html }])],
      headers: mergeHeaders(message.headers, unsubscribeHeaders(bulk.tokens, where, who))
    },
    { to: [stored.to] },
    stored.channel,
    options
  )
}

export const composeMessage = (
  request: StructuredContent,
  p: Addressed,
  channel: Channel,
  options: ComposeOptions
): Promise<Buffer> => {
  const text = request.content.find((c) => c.type === "text/plain")?.value
  const html = request.content.find((c) => c.type === "text/html")?.value
  const composer = new MailComposer({
    from: address(request.from),
    to: p.to.map(address),
    ...(p.cc === undefined || p.cc.length === 0 ? {} : { cc: p.cc.map(address) }),
    ...(request.reply_to === undefined ? {} : { replyTo: address(request.reply_to) }),
    subject: p.subject ?? request.subject,
    ...(text === undefined ? {} : { text }),
    ...(html === undefined ? {} : { html }),
    date: options.date,
    messageId: `<${options.messageId}@${options.sendingDomain}>`,
    headers: {
      ...mergeHeaders(request.headers, p.headers),
      "X-Herald-Message-Id": options.messageId,
      "X-Herald-Channel": channel
    },
    attachments: (request.attachments ?? []).map((a) => ({
      filename: a.filename,
      content: a.content.replace(/[\r\n]/g, ""),
      encoding: "base64",
      ...(a.type === undefined ? {} : { contentType: a.type }),
      ...(a.content_id === undefined ? {} : { cid: a.content_id })
    }))
  })
  return new Promise((resolve, reject) => {
    composer.compile().build((error, message) => (error ? reject(error) : resolve(message)))
  })
}
