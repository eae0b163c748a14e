/**
 * The RFC 5322 message of one personalization, built with nodemailer's MailComposer at delivery
 * time from the stored message (src/mta/queue/StoredMessage.ts); a campaign or sequence reference
 * with what the bulk area adds to it (src/mta/compose/BulkContent.ts). Header rules:
 * - the personalization's subject and headers override the message-level ones (names compared
 *   case-insensitively);
 * - Bcc recipients get the message but never a Bcc header;
 * - `Message-ID: <{messageId}@{sending domain}>`, `X-Herald-Message-Id` and
 *   `X-Herald-Channel` (the stored message's channel: transactional or bulk) are always the
 *   appliance's own;
 * - inline attachments (content_id) are `cid:` parts of a multipart/related body;
 * - a `raw` message (SMTP submission) is kept as written but for those same fields (raw-headers.ts).
 *
 * What a message may hold to be composed at all is checked before, when it is decoded
 * (src/mta/queue/compose-limits.ts).
 */
import MailComposer from "nodemailer/lib/mail-composer"
import type { Channel, StoredMessage, StructuredContent } from "../queue/StoredMessage.ts"
import { composeRaw } from "./raw-headers.ts"
import type { BulkContentShape, Reference, RenderedReference } from "./BulkContent.ts"

export interface ComposeOptions {
  readonly messageId: string
  readonly sendingDomain: string
  readonly date: Date
  /** What composing a campaign or sequence reference needs (the MTA passes it; without it they are refused). */
  readonly bulk?: ReferenceComposing | undefined
  /** A campaign or sequence reference's content rendered for its contact (BulkContent `render`), by the MTA before composing. */
  readonly rendered?: RenderedReference | undefined
  /**
   * The delivery the message is composed for: a campaign's tracking tokens name it. A campaign
   * message has one recipient, so one delivery (its retries are the same delivery).
   */
  readonly deliveryId?: string | undefined
}

/** The bulk area's part of composing one account's reference: its headers and tracking (src/mta/compose/BulkContent.ts). */
export interface ReferenceComposing {
  readonly content: Pick<BulkContentShape, "headers" | "track">
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

interface Addressed {
  readonly to: ReadonlyArray<Address>
  readonly cc?: ReadonlyArray<Address> | undefined
  readonly subject?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * The MIME of a stored message, ready to be signed. A campaign or sequence reference needs its
 * contact's render (`options.rendered`, from BulkContent `render`).
 */
export const composeStored = (stored: StoredMessage, options: ComposeOptions): Promise<Buffer> => {
  switch (stored._tag) {
    case "structured":
      return composeMessage(stored.message, stored.personalization, stored.channel, options)
    case "system":
      if ("mime_base64" in stored.message) return Promise.resolve(composeRawOf(stored.message.mime_base64, stored.channel, options))
      return composeMessage(stored.message, { to: stored.to }, stored.channel, options)
    case "raw":
      return Promise.resolve(composeRawOf(stored.message.mime_base64, stored.channel, options))
    case "campaign":
    case "sequence":
      return options.bulk === undefined || options.rendered === undefined
        ? Promise.reject(new Error(`${stored._tag} messages need their render to be composed`))
        : composeReference(stored, options.rendered, options.bulk, options)
  }
}

/** MIME kept as written (a submission, a TLS report), with the appliance's Message-ID and channel header. */
const composeRawOf = (mimeBase64: string, channel: Channel, options: ComposeOptions) =>
  composeRaw(Buffer.from(mimeBase64, "base64"), {
    messageId: options.messageId,
    sendingDomain: options.sendingDomain,
    date: options.date,
    channel
  })

/**
 * One contact's campaign or sequence message (the two forms share their content shape): its
 * render and the header fields the bulk area adds (`List-Unsubscribe` + `List-Unsubscribe-Post`,
 * RFC 2369, RFC 8058, naming the campaign or sequence). Those are the appliance's own: the stored
 * headers cannot replace them.
 *
 * A campaign's own delivery (origin `campaign`: never a sequence step or a test-send) gets its
 * recipient's tracking tokens in place of the placeholders the frozen HTML holds (DESIGN
 * "Tracking"), by substitution over the rendered HTML, after the engine: a contact's variables can
 * never produce or move a token.
 */
export const composeReference = (
  stored: Reference,
  rendered: RenderedReference,
  bulk: ReferenceComposing,
  options: ComposeOptions
): Promise<Buffer> => {
  const message = stored.message
  const { subject, text } = rendered
  let html = rendered.html
  if (stored._tag === "campaign" && stored.origin === "campaign" && html !== null) {
    if (options.deliveryId === undefined) return Promise.reject(new Error("a campaign message needs its delivery id to be composed"))
    html = bulk.content.track(html, { deliveryId: options.deliveryId, campaignId: stored.campaign_id })
  }
  return composeMessage(
    {
      from: message.from,
      ...(message.reply_to === undefined ? {} : { reply_to: message.reply_to }),
      subject,
      content: [{ type: "text/plain", value: text }, ...(html === null ? [] : [{ type: "text/html" as const, value: html }])],
      headers: mergeHeaders(message.headers, bulk.content.headers(stored, bulk.accountId))
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
