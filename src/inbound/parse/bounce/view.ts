/**
 * What the bounce parser reads of a message, whatever shape it arrived in: the top-level header
 * fields, the human-readable report text (cut where a returned copy of the original begins), the
 * `message/delivery-status` parts and the enclosed original. Built from the parsed message
 * (../mail.ts), or from the raw bytes when the MIME walk could not split the message at all.
 */
import { type Fields, field, headerBlock, noOriginal, originalFromHeaders, parseFields } from "../fields.ts"
import { type AddressField, hasOnlyBareCR, type ParsedMail } from "../mail.ts"
import type { OriginalMessage } from "../types.ts"
import { isReportHeader } from "./daemon.ts"

export interface MailView {
  readonly headers: Fields
  readonly subject: string
  /** Addresses of the bounce's own From and To (the reporting daemon and the original sender). */
  readonly from: string | null
  readonly to: ReadonlyArray<string>
  /** Top-level media type, lower-cased, without parameters. */
  readonly contentType: string
  /** The report text up to the returned original (LF line ends). */
  readonly report: string
  /** The returned original as quoted in the text, or null. */
  readonly returned: string | null
  /** Bodies of `message/delivery-status` (RFC 3464) and `message/global-delivery-status` (RFC 6533) parts. */
  readonly deliveryStatus: ReadonlyArray<string>
  /** Enclosed `message/rfc822` and `text/rfc822-headers` parts (RFC 3462 §2), as text. */
  readonly enclosed: ReadonlyArray<string>
}

const DSN_PART = /^message\/(global-)?delivery-status$/i
const ORIGINAL_PART = /^(message\/(rfc822|global|global-headers)|text\/rfc822-headers)$/i
const ADDRESS = /[^\s<>"(),;:@]+@[A-Za-z0-9.-]+/

const lf = (text: string) => text.replace(/\r\n?/g, "\n")

const addresses = (value: AddressField | ReadonlyArray<AddressField> | undefined): ReadonlyArray<string> => {
  const objects: ReadonlyArray<AddressField> = value === undefined ? [] : "value" in value ? [value] : value
  return objects.flatMap((o) => o.value.flatMap((a) => (a.address === undefined ? [] : [a.address.toLowerCase()])))
}

/* Bounces sent as HTML only (skipHtmlToText leaves `text` empty): tags out, breaks kept. */
const htmlText = (html: string) =>
  html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, "")
    .replace(/<br\s*\/?>|<\/(p|div|tr|li|h\d)>/gi, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")

/*
 * Phrases that introduce a copy of the returned message inside the text (Exim "This is a copy of
 * the message", qmail/Yahoo "Below this line is a copy of the message", Gmail "Original message",
 * GMX "The header of the original message is following", IMail "Original message follows",
 * Notes "Returned Message", OpenSMTPD "Below is a copy of the original message", Office 365
 * "Original message headers"). Only a short line that is nothing but the phrase counts, so prose
 * such as "The original message was received on …" does not.
 */
const SEPARATOR =
  /^[\s\-*=_]*(this is a copy of the message.*|below (this line )?is a copy of (the )?(original )?message.*|(the )?headers? of the original message.*|(the )?original message( headers?| follows.*)?|returned message|undelivered message( headers?)?|(included|enclosed) is a copy of the (original )?message.*)[\s\-*=_.:]*$/i

/* Header fields that open a quoted original when no separator line announces it (Zoho). */
const ORIGINAL_FIELD =
  /^(received|return-path|message-id|from|to|subject|date|delivered-to|dkim-signature|x-received|mime-version|reply-to|sender):/i
const ANY_FIELD = /^[A-Za-z][A-Za-z0-9-]*:/

const blockEnd = (lines: ReadonlyArray<string>, from: number) => {
  let end = from + 1
  while (end < lines.length && lines[end]!.trim() !== "") end++
  return end
}

/*
 * A quoted header block that is a mail system's own report (a bounce forwarded in the text, as
 * OCN's relays do, or IMail's summary of the bounce above its explanation) is part of the report,
 * not the returned original: the report goes on after it.
 */
const isReportBlock = (block: ReadonlyArray<string>) => {
  const value = (name: string) => block.find((l) => l.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1) ?? ""
  return isReportHeader(value("from"), value("subject"))
}

const returnedStart = (lines: ReadonlyArray<string>): { cut: number; from: number } | null => {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (line.length < 120 && SEPARATOR.test(line)) return { cut: i, from: i + 1 }
    if (ORIGINAL_FIELD.test(line)) {
      let j = i + 1
      while (j < lines.length && /^[ \t]/.test(lines[j]!)) j++
      if (j < lines.length && ANY_FIELD.test(lines[j]!)) {
        const end = blockEnd(lines, i)
        if (!isReportBlock(lines.slice(i, end))) return { cut: i, from: i }
        i = end
      }
    }
  }
  return null
}

/** The report text and, when the original is quoted inline, the original. */
export const splitReturned = (text: string): { report: string; returned: string | null } => {
  const lines = lf(text).split("\n")
  const start = returnedStart(lines)
  if (start === null) return { report: lines.join("\n"), returned: null }
  const rest = lines.slice(start.from).join("\n").replace(/^\s*\n/, "")
  return { report: lines.slice(0, start.cut).join("\n"), returned: rest.trim() === "" ? null : rest }
}

/*
 * A message with bare CR line ends (old Mac files, as in the corpus's qmail sample) is one long
 * header line to the MIME walk (as it was to mailparser). Such a message is read here directly:
 * header block and body after line ends are normalised; the body is taken as plain text.
 */
const fromRaw = (raw: Buffer): MailView => {
  const message = lf(raw.toString("utf8"))
  const head = headerBlock(message)
  const headers = parseFields(head)
  const firstAddress = (name: string) => ADDRESS.exec(field(headers, name) ?? "")?.[0]?.toLowerCase() ?? null
  const to = firstAddress("to")
  const { report, returned } = splitReturned(message.slice(head.length).replace(/^\n+/, ""))
  return {
    headers,
    subject: field(headers, "subject") ?? "",
    from: firstAddress("from"),
    to: to === null ? [] : [to],
    contentType: (field(headers, "content-type") ?? "text/plain").split(";")[0]!.trim().toLowerCase(),
    report,
    returned,
    deliveryStatus: [],
    enclosed: []
  }
}

/*
 * A multipart message whose declared boundary never occurs in its body (a boundary rewritten by a
 * relay or an anonymiser after the parts were written, as in Postfix bounces passed through list
 * software): the MIME walk finds no part at all, so the body is read as text, the DSN fields in it
 * as embedded ones.
 */
const unsplitMultipart = (mail: ParsedMail, headers: Fields) =>
  /^\s*multipart\//i.test(field(headers, "content-type") ?? "") &&
  mail.text === undefined &&
  mail.html === false &&
  mail.attachments.length === 0

export const mailView = (mail: ParsedMail, raw: Buffer): MailView => {
  if (hasOnlyBareCR(raw)) return fromRaw(raw)
  const headers = parseFields(mail.headerLines.map((h) => h.line).join("\n"))
  if (unsplitMultipart(mail, headers)) return fromRaw(raw)
  const text = mail.text ?? (typeof mail.html === "string" ? htmlText(mail.html) : "")
  const { report, returned } = splitReturned(text)
  const partText = (contentType: RegExp) =>
    mail.attachments.filter((a) => contentType.test(a.contentType)).map((a) => a.content.toString("utf8"))
  return {
    headers,
    subject: mail.subject ?? "",
    from: addresses(mail.from)[0] ?? null,
    to: addresses(mail.to),
    contentType: (field(headers, "content-type") ?? "text/plain").split(";")[0]!.trim().toLowerCase(),
    report,
    returned,
    deliveryStatus: partText(DSN_PART),
    enclosed: partText(ORIGINAL_PART)
  }
}

const known = (original: OriginalMessage) =>
  original.messageId !== null || original.heraldMessageId !== null || original.subject !== null

/** The returned original's identity: from the enclosed part, else from the copy quoted in the text. */
export const originalOf = (view: MailView): OriginalMessage => {
  for (const part of view.enclosed) {
    const original = originalFromHeaders(lf(part).replace(/^\n+/, ""))
    if (known(original)) return original
  }
  if (view.returned !== null) {
    const original = originalFromHeaders(view.returned)
    if (known(original)) return original
  }
  return noOriginal
}

const headerValue = (message: string, name: string) => field(parseFields(headerBlock(lf(message).replace(/^\n+/, ""))), name) ?? ""

/** Enclosed messages that are themselves a mail system's report (a bounce forwarded as an attachment). */
export const forwardedReports = (view: MailView): ReadonlyArray<string> =>
  view.enclosed.filter((part) => isReportHeader(headerValue(part, "from"), headerValue(part, "subject")))

/** The To: addresses of the returned original (enclosed, else quoted in the text), lower-cased. */
export const originalRecipients = (view: MailView): ReadonlyArray<string> => {
  const source = view.enclosed[0] ?? view.returned
  if (source === undefined || source === null) return []
  // An unanchored search is quadratic in the text's length: a To: field longer than any real one is not read.
  const to = headerValue(source, "to")
  return to.length > 10_000 ? [] : [...to.matchAll(new RegExp(ADDRESS.source, "g"))].map((m) => m[0].toLowerCase())
}
