/**
 * A small, tolerant MIME walker over the raw bytes. mailparser folds a `message/rfc822` part that
 * is not marked as an attachment into the text of the report and drops its headers, and most
 * feedback reports enclose the original that way (`Content-Disposition: inline` or none), so the
 * report's structure is read here instead. Only what the complaint parsers need: content types,
 * multipart children, the enclosed message of a `message/rfc822` part, and bodies decoded from
 * base64 or quoted-printable (RFC 2045 §6). Line ends may be CRLF, LF or CR alone.
 */
import { type Fields, field, parseFields } from "../fields.ts"

export interface MimePart {
  readonly headers: Fields
  /** `type/subtype`, lower-cased; `text/plain` when absent (RFC 2045 §5.2). */
  readonly contentType: string
  /** Attachment or part name (`filename` / `name` parameter), or null. */
  readonly filename: string | null
  /** The body, transfer-decoded; for a multipart, the undecoded text between the headers and the end. */
  readonly body: string
  /** The parts of a multipart; the enclosed message of a `message/*` part; otherwise empty. */
  readonly parts: ReadonlyArray<MimePart>
}

/** Nesting and part-count limits: reports are shallow, and hostile input must not recurse forever. */
const MAX_DEPTH = 8
const MAX_PARTS = 200

const HEADER_END = /\r\n\r\n|\n\n|\r\r|\r\n\n|\n\r\n/

const splitMessage = (text: string): { header: string; body: string } => {
  // A part that starts with a line break has no header fields at all (RFC 2046 §5.1.1).
  const leading = /^(\r\n|\n|\r)/.exec(text)
  if (leading !== null) return { header: "", body: text.slice(leading[0].length) }
  const end = HEADER_END.exec(text)
  return end === null ? { header: text, body: "" } : { header: text.slice(0, end.index), body: text.slice(end.index + end[0].length) }
}

/** The value of parameter `name` in a structured header value such as Content-Type (RFC 2045 §5.1). */
export const headerParam = (value: string, name: string): string | null => {
  const re = new RegExp(`(?:^|;)\\s*${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]+))`, "i")
  const found = re.exec(value)
  if (found === null) return null
  return (found[1] ?? found[2] ?? "").trim()
}

export const mediaType = (value: string | null): string => {
  const type = (value ?? "").split(";")[0]!.trim().toLowerCase()
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type) ? type : "text/plain"
}

const hexValue = (byte: number | undefined): number => {
  if (byte === undefined) return -1
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57
  return -1
}

/** RFC 2045 §6.7; a `=` not followed by two hex digits is kept as it stands (rule 1 leniency). */
const decodeQuotedPrintable = (text: string): string => {
  const src = Buffer.from(text.replace(/=[ \t]*(\r\n|\n|\r)/g, ""), "utf8")
  const out = Buffer.alloc(src.length)
  let n = 0
  for (let i = 0; i < src.length; i++) {
    const hi = src[i] === 0x3d ? hexValue(src[i + 1]) : -1
    const lo = hi < 0 ? -1 : hexValue(src[i + 2])
    if (lo >= 0) {
      out[n++] = hi * 16 + lo
      i += 2
    } else {
      out[n++] = src[i]!
    }
  }
  return out.subarray(0, n).toString("utf8")
}

const decodeBody = (body: string, encoding: string | null): string => {
  switch ((encoding ?? "").trim().toLowerCase()) {
    case "base64":
      return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ""), "base64").toString("utf8")
    case "quoted-printable":
      return decodeQuotedPrintable(body)
    default:
      return body
  }
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * The bodies between the delimiter lines of `boundary` (RFC 2046 §5.1.1). Tolerant: trailing
 * white space after a delimiter, a missing close delimiter (the last part runs to the end).
 */
const splitMultipart = (body: string, boundary: string): ReadonlyArray<string> => {
  const delimiter = new RegExp(`(^|\\r\\n|\\n|\\r)--${escapeRegExp(boundary)}(--)?[ \\t]*(\\r\\n|\\n|\\r|$)`, "g")
  const parts: Array<string> = []
  let start: number | null = null
  for (let found = delimiter.exec(body); found !== null; found = delimiter.exec(body)) {
    if (start !== null) parts.push(body.slice(start, found.index))
    if (found[2] === "--") return parts
    start = found.index + found[0].length
    // The closing line break doubles as the opening one of the next delimiter.
    if (found[3] !== "") delimiter.lastIndex = found.index + found[0].length - found[3]!.length
  }
  if (start !== null) parts.push(body.slice(start))
  return parts
}

const parsePart = (text: string, depth: number, budget: { parts: number }): MimePart => {
  budget.parts += 1
  const { header, body } = splitMessage(text)
  const headers = parseFields(header)
  const contentTypeValue = field(headers, "content-type")
  const contentType = mediaType(contentTypeValue)
  const disposition = field(headers, "content-disposition") ?? ""
  const filename = headerParam(disposition, "filename") ?? (contentTypeValue === null ? null : headerParam(contentTypeValue, "name"))
  const nested = depth < MAX_DEPTH && budget.parts < MAX_PARTS
  if (contentType.startsWith("multipart/")) {
    const boundary = contentTypeValue === null ? null : headerParam(contentTypeValue, "boundary")
    const children =
      boundary === null || boundary === "" || !nested
        ? []
        : splitMultipart(body, boundary).flatMap((p) => (budget.parts < MAX_PARTS ? [parsePart(p, depth + 1, budget)] : []))
    return { headers, contentType, filename, body, parts: children }
  }
  const decoded = decodeBody(body, field(headers, "content-transfer-encoding"))
  const enclosesMessage = contentType === "message/rfc822" || contentType === "message/global"
  return { headers, contentType, filename, body: decoded, parts: enclosesMessage && nested ? [parsePart(decoded, depth + 1, budget)] : [] }
}

/** The MIME tree of a whole message. */
export const parseMime = (raw: Buffer | string): MimePart =>
  parsePart(typeof raw === "string" ? raw : raw.toString("utf8"), 0, { parts: 0 })
