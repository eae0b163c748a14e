/**
 * The report's MIME structure as the complaint parsers read it, from the shared walk of the raw
 * bytes (../mime/split.ts) rather than mailparser's view, which folds an inline `message/rfc822`
 * part into the text and drops the enclosed original's headers — and most feedback reports enclose
 * the original that way (`Content-Disposition: inline` or none). Here every `message/rfc822` part
 * is entered: the inline ones the walk already split, the others by splitting their decoded body.
 * Bodies are decoded from base64 or quoted-printable (RFC 2045 §6) as UTF-8, when first read.
 * Line ends may be CRLF, LF or CR alone.
 */
import { type Fields, parseFields } from "../fields.ts"
import { hasOnlyBareCR } from "../mail.ts"
import { decodeTransfer } from "../mime/decode.ts"
import { headerValue, type MimeNode, splitMime } from "../mime/split.ts"

export interface MimePart {
  readonly headers: Fields
  /** `type/subtype`, lower-cased; `text/plain` when absent (RFC 2045 §5.2). */
  readonly contentType: string
  /** The body, transfer-decoded; for a multipart, the undecoded text between the headers and the end. */
  readonly body: string
  /** The parts of a multipart; the enclosed message of a `message/*` part; otherwise empty. */
  readonly parts: ReadonlyArray<MimePart>
}

/** Nesting and part-count limits: reports are shallow, and hostile input must not recurse forever. */
const MAX_DEPTH = 8
const MAX_PARTS = 200

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

const once = <A>(compute: () => A): (() => A) => {
  let value: { readonly a: A } | undefined
  return () => (value ??= { a: compute() }).a
}

/** The first value of a header field of `node`, from the walk's header lines (no full header parse). */
const firstField = (node: MimeNode, name: string): string | null => {
  const line = node.headerLines.find((l) => l.key === name)
  return line === undefined ? null : headerValue(line.line)
}

/**
 * One node of the walk as a MimePart; `raw` is the text the walk ran over. The header fields and
 * bodies are read when first asked for: most parts are only looked at for their content type.
 */
const partOf = (node: MimeNode, raw: Buffer, depth: number, budget: { parts: number }): MimePart => {
  budget.parts += 1
  const headers = once(() => parseFields(raw.subarray(node.headerStart, node.headerEnd).toString("utf8")))
  const contentType = mediaType(firstField(node, "content-type"))
  const nested = depth < MAX_DEPTH && budget.parts < MAX_PARTS
  const text = (start: number, end: number) => raw.subarray(start, end).toString("utf8")
  if (contentType.startsWith("multipart/")) {
    const parts = nested ? node.children.flatMap((c) => (budget.parts < MAX_PARTS ? [partOf(c, raw, depth + 1, budget)] : [])) : []
    return { contentType, parts, get headers() { return headers() }, get body() { return text(node.bodyStart, node.partEnd) } }
  }
  const isMessage = contentType === "message/rfc822" || contentType === "message/global"
  if (isMessage && node.enclosesMessage) {
    const inner = node.children[0]
    const parts = nested && inner !== undefined ? [partOf(inner, raw, depth + 1, budget)] : []
    return { contentType, parts, get headers() { return headers() }, get body() { return text(node.headerEnd, node.partEnd) } }
  }
  // Transfer-decoded from the bytes (the walk's own decoder, ../mime/decode.ts), then read as UTF-8.
  const encoding = (firstField(node, "content-transfer-encoding") ?? "").trim().toLowerCase()
  const body = once(() => decodeTransfer(raw.subarray(node.bodyStart, node.bodyEnd), encoding).toString("utf8"))
  if (!isMessage || !nested) return { contentType, parts: [], get headers() { return headers() }, get body() { return body() } }
  // An enclosed message the walk did not enter (an attachment, or transfer-encoded): split its decoded text.
  const parts = once(() => {
    const inner = Buffer.from(body(), "utf8")
    try {
      return [partOf(splitMime(inner), inner, depth + 1, budget)]
    } catch {
      return []
    }
  })
  return { contentType, get headers() { return headers() }, get body() { return body() }, get parts() { return parts() } }
}

/**
 * The MIME tree of a message, from the walk `root` made of `raw`. A message with bare CR line
 * ends (old Mac files) is one long line to that walk; it is walked again with LF line ends.
 */
export const mimeTree = (root: MimeNode, raw: Buffer): MimePart => {
  if (!hasOnlyBareCR(raw)) return partOf(root, raw, 0, { parts: 0 })
  const lines = Buffer.from(raw.toString("latin1").replace(/\r/g, "\n"), "latin1")
  try {
    return partOf(splitMime(lines), lines, 0, { parts: 0 })
  } catch {
    return partOf(root, raw, 0, { parts: 0 })
  }
}
