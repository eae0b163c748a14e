/**
 * The one way inbound bytes become a parsed message: a single synchronous walk of the raw MIME
 * structure (mime/split.ts) read the way mailparser's `simpleParser` reads it with
 * `keepDeliveryStatus` (so `message/delivery-status` parts stay attachments and their DSN fields
 * are not folded into `text`) and without HTML-to-text conversion — the same `text`, `html`,
 * attachments, subject and addresses, the shape the bounce, complaint and DMARC parsers read.
 * `root` is the MIME tree itself, for the parsers that read the structure.
 */
import { domainToUnicode } from "node:url"
import addressparser from "nodemailer/lib/addressparser"
import { decodeCharset, decodeFlowed, decodeHeaderWords, decodeTransfer, isUtf8Compatible, typeOfFilename } from "./mime/decode.ts"
import { type HeaderLine, type MimeNode, splitMime } from "./mime/split.ts"

/** A parsed address (nodemailer's addressparser), its name and address decoded in place. */
export interface Address {
  name: string
  address?: string | undefined
  group?: Array<Address> | undefined
}

export interface AddressField {
  readonly value: ReadonlyArray<Address>
  /** The addresses as mailparser writes them out (`"Name" <a@b>, c@d`). */
  readonly text: string
}

export interface Attachment {
  readonly contentType: string
  readonly filename?: string
  /** The part's bytes, transfer encoding removed. */
  readonly content: Buffer
}

export interface ParsedMail {
  readonly root: MimeNode
  /** The top-level header fields, raw (Latin-1 bytes, folds kept). */
  readonly headerLines: ReadonlyArray<HeaderLine>
  /** Every value of a top-level header field, unfolded and trimmed. */
  readonly headerValues: (name: string) => ReadonlyArray<string>
  readonly subject?: string
  readonly from?: AddressField
  readonly to?: AddressField | ReadonlyArray<AddressField>
  /** The inline text parts, decoded and joined (LF line ends); undefined when there are none. */
  readonly text?: string
  /**
   * The HTML parts joined, false when there are none. Read only when there is no `text`, so the
   * HTML mailparser renders from text parts (only when there are some) is left out.
   */
  readonly html: string | false
  readonly attachments: ReadonlyArray<Attachment>
}

/**
 * A message with bare CR line ends only (old Mac files, as in the corpus's qmail sample): one long
 * header line to the MIME walk, as it was to mailparser. The parsers that need its structure read
 * it with the line ends normalised.
 */
export const hasOnlyBareCR = (raw: Buffer) => raw.includes(0x0d) && !raw.includes(0x0a)

const TEXT_TYPES = ["text/plain", "text/html"]
const META_FIELDS = ["From", "Subject", "Date", "To", "Cc", "Bcc"]

/** A header line's value as mailparser keeps it: unfolded, trimmed, its bytes read as UTF-8. */
const processedValue = (line: string): string => {
  const unfolded = line.replace(/(?:\r?\n|\r)[ \t]*/g, " ").trim()
  const value = (/^\s*([^:]+):(.*)$/.exec(unfolded)?.[2] ?? "").trim()
  return Buffer.from(value, "latin1").toString("utf8")
}

const decodeOrKeep = (value: string) => {
  try {
    return decodeHeaderWords(value)
  } catch {
    return value
  }
}

/** Whether `text` holds `<local@domain>` (an address mailparser may take out of an encoded name). */
const hasBracketedAddress = (text: string) => /<[^<>@]+@[^<>]+>/.test(text)

const ENCODED_NAME = /^(=\?([^?]+)\?[Bb]\?[^?]*\?=)(\s*=\?([^?]+)\?[Bb]\?[^?]*\?=)*$/

/** mailparser's decoding of parsed addresses: encoded names, encoded addresses refused, IDN domains. */
const decodeAddresses = (addresses: Array<Address>, seen = new WeakSet<Address>()): void => {
  for (let i = 0; i < addresses.length; i++) {
    const a = addresses[i]!
    a.name = (a.name || "").toString().trim()
    if (!a.address && ENCODED_NAME.test(a.name) && !seen.has(a)) {
      const decoded = decodeOrKeep(a.name)
      if (hasBracketedAddress(decoded)) {
        const parsed = addressparser(decoded) as Array<Address>
        for (const entry of parsed) {
          seen.add(entry)
          addresses.push(entry)
        }
        addresses.splice(i--, 1)
      } else a.name = decoded
      continue
    }
    if (a.name) a.name = decodeOrKeep(a.name)
    if (a.address && /=\?[^?]+\?[BbQq]\?[^?]*\?=/.test(a.address)) {
      const decoded = decodeOrKeep(a.address)
      a.address = /^[^\s@]+@[^\s@]+$/.test(decoded) && !/=\?/.test(decoded) ? decoded : ""
    }
    if (a.address !== undefined && /@xn--/.test(a.address)) {
      const at = a.address.lastIndexOf("@")
      const unicode = domainToUnicode(a.address.slice(at + 1))
      if (unicode !== "") a.address = a.address.slice(0, at + 1) + unicode
    }
    if (a.group !== undefined) decodeAddresses(a.group, seen)
  }
}

const addressText = (addresses: ReadonlyArray<Address>): string =>
  addresses.map((a) => {
    let text = a.name ? `"${a.name}"${a.group !== undefined ? ": " : ""}` : ""
    if (a.address) text += a.name ? ` <${a.address}>` : a.address
    if (a.group !== undefined) text += addressText(a.group) + ";"
    return text
  }).join(", ")

const addressField = (value: string): AddressField => {
  const addresses = addressparser(value) as Array<Address>
  decodeAddresses(addresses)
  return { value: addresses, text: addressText(addresses) }
}

/** The values of one header field of a node, in order. */
const valuesOf = (lines: ReadonlyArray<HeaderLine>, name: string): Array<string> =>
  lines.filter((l) => l.key === name).map((l) => processedValue(l.line))

const lastAddressField = (lines: ReadonlyArray<HeaderLine>, name: string): AddressField | undefined => {
  const values = valuesOf(lines, name)
  return values.length === 0 ? undefined : addressField(values[values.length - 1]!)
}

const subjectOf = (lines: ReadonlyArray<HeaderLine>): string | undefined => {
  const subjects = valuesOf(lines, "subject").map(decodeOrKeep).filter((s) => s !== "")
  return subjects[subjects.length - 1]
}

/** `he.encode`: markup characters and everything outside printable ASCII as hexadecimal references. */
const htmlEscape = (text: string) =>
  text.replace(/[^\x20-\x7e\n\r]|[<>&"'`]/gu, (c) => `&#x${c.codePointAt(0)!.toString(16).toUpperCase()};`)

const addressHtml = (addresses: ReadonlyArray<Address>): string =>
  addresses.map((a) => {
    let html = '<span class="mp_address_group">'
    if (a.name) html += `<span class="mp_address_name">${htmlEscape(a.name)}${a.group !== undefined ? ": " : ""}</span>`
    if (a.address) {
      const link = `<a href="mailto:${htmlEscape(a.address)}" class="mp_address_email">${htmlEscape(a.address)}</a>`
      html += a.name ? ` &lt;${link}&gt;` : link
    }
    if (a.group !== undefined) html += addressHtml(a.group) + ";"
    return html + "</span>"
  }).join(", ")

/**
 * The From, Subject, Date, To, Cc and Bcc of an enclosed message, which mailparser writes before
 * its text (and, as a table, before its HTML).
 */
const metaOf = (lines: ReadonlyArray<HeaderLine>): { text: string; html: string } => {
  const entries: Array<{ name: string; text: string; html: string }> = []
  for (const name of META_FIELDS) {
    const key = name.toLowerCase()
    if (key === "subject") {
      const subject = subjectOf(lines)
      if (subject !== undefined) entries.push({ name, text: subject, html: `<strong>${htmlEscape(subject)}</strong>` })
    } else if (key === "date") {
      // An unreadable (even empty) Date reads as now, as in mailparser.
      const dates = valuesOf(lines, "date")
      if (dates.length === 0) continue
      const parsed = new Date(dates[dates.length - 1]!)
      const date = (Number.isNaN(parsed.getTime()) ? new Date() : parsed).toUTCString()
      entries.push({ name, text: date, html: date })
    } else {
      const field = lastAddressField(lines, key)
      if (field !== undefined) entries.push({ name, text: field.text, html: addressHtml(field.value) })
    }
  }
  const rows = entries.map((e) => `<tr><td class="mp_head_key">${e.name}:</td><td class="mp_head_value">${e.html}<td></tr>`)
  return { text: `\n${entries.map((e) => `${e.name}: ${e.text}`).join("\n")}\n`, html: `<table class="mp_head">${rows.join("\n")}<table>` }
}

interface Reading {
  readonly contentType: string | false
  readonly showMeta: boolean
  textContent?: string
}

/** Reads `raw`; throws (as mailparser did) only past the splitter's limits. */
export const readMail = (raw: Buffer): ParsedMail => {
  const root = splitMime(raw)
  const attachments: Array<Attachment> = []
  const readings = new Map<MimeNode, Reading>()
  let hasText = false
  let hasHtml = false

  const visit = (node: MimeNode) => {
    const contentType = node.contentType || (node.parent === null ? "text/plain" : false)
    const reading: Reading = { contentType, showMeta: node.parent?.contentType === "message/rfc822" }
    readings.set(node, reading)
    const leaf = !/^multipart\//i.test(String(contentType))
    if (leaf && !node.enclosesMessage) {
      const textType = contentType !== false && TEXT_TYPES.includes(contentType)
      let disposition = node.disposition
      if (disposition !== false && disposition !== "attachment" && disposition !== "inline") disposition = "attachment"
      disposition = disposition === false && !textType ? "attachment" : disposition || "inline"
      const body = raw.subarray(node.bodyStart, node.bodyEnd)
      if (!textType || disposition !== "inline") {
        const type = contentType === "application/octet-stream" && node.filename !== false ? typeOfFilename(node.filename) : contentType
        attachments.push({
          contentType: type || "",
          ...(node.filename === false ? {} : { filename: node.filename }),
          content: decodeTransfer(body, node.encoding)
        })
      } else {
        if (contentType === "text/plain") hasText = true
        else hasHtml = true
        let bytes = decodeTransfer(body, node.encoding)
        if (node.flowed) bytes = Buffer.from(decodeFlowed(bytes.toString("latin1"), node.delSp), "latin1")
        const text = isUtf8Compatible(node.charset) ? bytes.toString("utf8") : decodeCharset(bytes, node.charset)
        reading.textContent = text.replace(/\r?\n/g, "\n")
      }
    }
    for (const child of node.children) visit(child)
  }
  visit(root)

  // mailparser's getTextContent: text/plain parts in order, an enclosed message's meta block
  // before its text, and an empty entry for an HTML part outside an alternative.
  const text: Array<string> = []
  const html: Array<string> = []
  const collect = (node: MimeNode, alternative: boolean) => {
    const reading = readings.get(node)!
    if (reading.showMeta && (hasText || hasHtml)) {
      const meta = metaOf(node.headerLines)
      if (hasHtml) html.push(meta.html)
      if (hasText) text.push(meta.text)
    }
    const content = reading.textContent
    if (content) {
      if (reading.contentType === "text/plain") text.push(content)
      else if (reading.contentType === "text/html") {
        if ((!alternative && hasText) || (node.parent === null && !hasText)) text.push("")
        html.push(content)
      }
    }
    const inAlternative = alternative || reading.contentType === "multipart/alternative"
    for (const child of node.children) collect(child, inAlternative)
  }
  collect(root, false)

  const lines = root.headerLines
  const toValues = valuesOf(lines, "to")
  const subject = subjectOf(lines)
  const from = lastAddressField(lines, "from")
  const to = toValues.length === 0 ? undefined : toValues.length === 1 ? addressField(toValues[0]!) : toValues.map(addressField)
  return {
    root,
    headerLines: lines,
    headerValues: (name) => valuesOf(lines, name.toLowerCase()).filter((v) => v !== ""),
    ...(subject === undefined ? {} : { subject }),
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
    ...(text.length === 0 ? {} : { text: text.join("\n") }),
    html: html.length === 0 ? false : html.join("<br/>\n"),
    attachments
  }
}
