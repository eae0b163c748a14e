/**
 * The RFC 5322 message of one personalization, built with nodemailer's MailComposer at delivery
 * time from the canonical request stored with the message. Header rules:
 * - the personalization's subject and headers override the message-level ones (names compared
 *   case-insensitively);
 * - Bcc recipients get the message but never a Bcc header;
 * - `Message-ID: <{messageId}@{sending domain}>`, `X-Herald-Message-Id` and
 *   `X-Herald-Channel: transactional` are always the appliance's own;
 * - inline attachments (content_id) are `cid:` parts of a multipart/related body.
 */
import MailComposer from "nodemailer/lib/mail-composer"
import type { FullRequest } from "./request.ts"

export interface ComposeOptions {
  readonly messageId: string
  readonly sendingDomain: string
  readonly date: Date
}

const address = (a: { readonly email: string; readonly name?: string | undefined }) =>
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

export const composeMessage = (request: FullRequest, index: number, options: ComposeOptions): Promise<Buffer> => {
  const p = request.personalizations[index]
  if (p === undefined) return Promise.reject(new Error(`no personalization ${index}`))
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
      "X-Herald-Channel": "transactional"
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
