/**
 * A stored message as its recipient got it (GET /v1/mail/messages/{id}/content), made in a render
 * worker (tasks.ts `view`): composed again by the MTA's own composer (src/mta/compose/compose.ts,
 * with the Date and Message-ID it was sent with), then read back by mailparser into header
 * fields, text, html and attachments. Composing and parsing a message of several MB is tens of
 * milliseconds of CPU: done here, under the pool's deadline, never on the main thread.
 *
 * Attachments arrive without their bytes (the caller keeps their decoded sizes): the view never
 * answers them, and composing and parsing 20 MB of base64 would only cost memory. A raw message
 * (SMTP submission) is parsed as kept, its attachments counted and dropped by the parser.
 *
 * For a message shown to no one (`redact`), the links that act for the recipient are replaced in
 * every header, the text and the html: `{base}/confirm/<token>` (double opt-in),
 * `{base}/u/<token>` (unsubscribe page and one-click) and the mailto unsubscribe's token. The
 * token becomes `redacted`, so the address still says where the link led, and opening it finds
 * the pages' plain 404 (a bad token changes nothing).
 */
import { commonJsExports } from "../../lib/commonjs.ts"
import type { RenderedReference } from "../../mta/compose/BulkContent.ts"
import { composeStored } from "../../mta/compose/compose.ts"
import type { StoredMessage } from "../../mta/queue/StoredMessage.ts"

/** What the token of a redacted link becomes. */
export const REDACTED = "redacted"

export interface ViewTask {
  readonly op: "view"
  /** The stored message, its attachments' content emptied. */
  readonly stored: StoredMessage
  readonly messageId: string
  readonly sendingDomain: string
  /** ISO time: the message's created_at, the Date it was sent with. */
  readonly date: string
  /** A campaign or sequence reference: its contact's render (tracking already filled or undone). */
  readonly rendered?: RenderedReference | undefined
  /** A reference's List-Unsubscribe and List-Unsubscribe-Post. */
  readonly referenceHeaders?: Readonly<Record<string, string>> | undefined
  /** Shown to no one: where the recipient's confirm and unsubscribe links point, to redact them. */
  readonly redact: { readonly baseUrl: string; readonly bounceDomain: string } | null
}

export interface ViewedAttachment {
  readonly filename: string
  readonly content_type: string
  readonly size: number
  readonly content_id: string | null
}

export interface ViewedMessage {
  readonly headers: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly text: string | null
  readonly html: string | null
  /** Sizes are the parser's (a raw message) or 0 (a structured one: the caller knows them). */
  readonly attachments: ReadonlyArray<ViewedAttachment>
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Redacts the confirm and unsubscribe tokens of `where` in `text` (see the module comment). */
export const redactLinks = (where: { readonly baseUrl: string; readonly bounceDomain: string }) => {
  const base = escapeRegExp(where.baseUrl.replace(/\/+$/, ""))
  const page = new RegExp(`(${base}/(?:confirm|u)/)[A-Za-z0-9_.-]+`, "g")
  const mailto = new RegExp(`(mailto:unsubscribe@${escapeRegExp(where.bounceDomain)}\\?subject=)[A-Za-z0-9_.-]+`, "gi")
  return (text: string) => text.replace(page, `$1${REDACTED}`).replace(mailto, `$1${REDACTED}`)
}

/** RFC 2047 encoded words (`=?utf-8?Q?…?=`, `=?utf-8?B?…?=`) decoded; adjacent words join without their space. */
export const decodeWords = (value: string): string =>
  value.replace(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)\s+(?==\?[^?]+\?[BbQq]\?[^?]*\?=)/g, "$1").replace(
    /=\?([^?*]+)(?:\*[^?]*)?\?([BbQq])\?([^?]*)\?=/g,
    (word, charset: string, encoding: string, data: string) => {
      try {
        const bytes = encoding.toUpperCase() === "B"
          ? Buffer.from(data, "base64")
          : Buffer.from(data.replace(/_/g, " ").replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))), "latin1")
        return new TextDecoder(charset).decode(bytes)
      } catch {
        return word
      }
    }
  )

/** A header line as sent (`Name: value`, folded) as its name and its value, unfolded and decoded. */
const headerOf = (line: string) => {
  const colon = line.indexOf(":")
  const name = colon < 0 ? line : line.slice(0, colon)
  const value = colon < 0 ? "" : line.slice(colon + 1).replace(/\r?\n[ \t]+/g, " ").trim()
  return { name: name.trim(), value: decodeWords(value) }
}

const mimeOf = async (task: ViewTask): Promise<Buffer> => {
  const stored = task.stored
  const options = { messageId: task.messageId, sendingDomain: task.sendingDomain, date: new Date(task.date) }
  if (stored._tag !== "campaign" && stored._tag !== "sequence") return composeStored(stored, options)
  // The render arrives tracked (or untracked) already: the composer's own tracking step is a no-op here.
  const headers = task.referenceHeaders ?? {}
  const bulk = { content: { headers: () => headers, track: (html: string) => html }, accountId: "" }
  return composeStored(stored, { ...options, bulk, rendered: task.rendered, deliveryId: "view" })
}

/** The message of `task`, composed and read back (see the module comment). */
export const viewMessage = async (task: ViewTask): Promise<ViewedMessage> => {
  // Loaded on the first view, not at start-up (its module tree is ~0.1 s of a start).
  const { simpleParser } = commonJsExports(await import("mailparser"))
  const parsed = await simpleParser(await mimeOf(task), {
    keepCidLinks: true,
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true
  })
  const redact = task.redact === null ? (s: string) => s : redactLinks(task.redact)
  return {
    headers: parsed.headerLines.map((h) => headerOf(h.line)).map((h) => ({ name: h.name, value: redact(h.value) })),
    // No text part (or an empty one): null, never a text made from the html.
    text: parsed.text === undefined || parsed.text === "" ? null : redact(parsed.text),
    html: typeof parsed.html === "string" ? redact(parsed.html) : null,
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename ?? "",
      content_type: a.contentType,
      size: a.size,
      content_id: a.cid ?? null
    }))
  }
}
