/**
 * Splits a raw message into its MIME tree in one synchronous pass over the bytes, line by line,
 * as mailsplit (mailparser's splitter) does: the same boundary rules (a delimiter line is
 * `--boundary` with nothing after it but `--`, transport padding and the line end; the line end
 * before it belongs to the delimiter), the same fallbacks (no Content-Type: text/plain, or a type from the file name;
 * a part whose header never ends is parsed at the end of its input), and a `message/rfc822` part
 * read as an enclosed message only when it is marked `inline` and not transfer-encoded. Bodies are
 * not copied or decoded here: a node holds the byte range of its body.
 *
 * Why not mailparser itself: it streams every part through Node streams with a setImmediate per
 * chunk and checksums every attachment, which made up most of the time spent understanding a
 * bounce; the bounce and complaint parsers need only what this pass gives.
 */
import * as path from "node:path"
import { decodeHeaderWords, type HeaderValue, parseHeaderValue, typeOfFilename } from "./decode.ts"

/** A header field as mailsplit keeps it: the lower-cased name and the raw line, folds kept, bytes as Latin-1. */
export interface HeaderLine {
  readonly key: string
  readonly line: string
}

export interface MimeNode {
  readonly parent: MimeNode | null
  readonly headerLines: ReadonlyArray<HeaderLine>
  /** Lower-cased `type/subtype`; false when the Content-Type field is there but empty. */
  readonly contentType: string | false
  readonly charset: string | false
  /** Lower-cased Content-Transfer-Encoding, comments removed; "" when absent. */
  readonly encoding: string
  readonly disposition: string | false
  readonly filename: string | false
  readonly flowed: boolean
  readonly delSp: boolean
  readonly multipart: boolean
  /** A `message/rfc822` part whose enclosed message is read as children (inline, not encoded). */
  readonly enclosesMessage: boolean
  /** The header block's bytes in the raw message: [start, end). */
  readonly headerStart: number
  readonly headerEnd: number
  /** The body's bytes (transfer-encoded) in the raw message: [start, end). */
  readonly bodyStart: number
  readonly bodyEnd: number
  /** Where the whole part ends (before the delimiter line that closes it, or the end of the input). */
  readonly partEnd: number
  readonly children: ReadonlyArray<MimeNode>
}

/** mailsplit's limits: a hostile message fails to parse rather than exhausting memory or time. */
const MAX_HEAD_BYTES = 1024 * 1024
const MAX_NODES = 1000

export class MimeLimitError extends Error {}

interface Building {
  readonly parent: Building | null
  /** The boundary of the multipart this node is a part of (or, in an enclosed message, its container's). */
  parentBoundary: Buffer | false
  parentBoundaryOwner: Building | null
  readonly headerStart: number
  headerEnd: number
  parsed: boolean
  node: {
    -readonly [K in keyof MimeNode]: MimeNode[K]
  } | null
  boundary: Buffer | false
  readonly children: Array<MimeNode>
}

/** The value of a header line, unfolded, its bytes read as UTF-8 where they are valid UTF-8. */
export const headerValue = (line: string): string => {
  const utf8 = Buffer.from(line, "latin1").toString("utf8")
  const text = (utf8.includes("\uFFFD") ? line : utf8).replace(/(?:\r?\n|\r)[ \t]*/g, " ").trim()
  const match = /^\s*([^:]+):(.*)$/.exec(text)
  return (match?.[2] ?? "").trim()
}

/** mailsplit's header lines: unfolded by continuation, an mbox `From ` or HTTP `POST ` preamble line dropped. */
const headerLinesOf = (block: Buffer): Array<HeaderLine> => {
  const raw = block.toString("latin1").replace(/[\r\n]+$/, "").split(/\r?\n/)
  const lines: Array<{ key: string; line: string }> = []
  let i = 1
  let first = raw[0]!
  while (i < raw.length && /^[ \t]/.test(raw[i]!)) first += "\r\n" + raw[i++]
  const keyOf = (line: string) => line.slice(0, Math.max(0, line.indexOf(":"))).toLowerCase().trim()
  if (!/^From /i.test(first) && !/^POST /i.test(first)) lines.push({ key: keyOf(first), line: first })
  for (; i < raw.length; i++) {
    const line = raw[i]!
    const last = lines[lines.length - 1]
    if (/^[ \t]/.test(line) && last !== undefined) {
      last.line += "\r\n" + line
      if (last.key === "") last.key = keyOf(last.line)
    } else lines.push({ key: keyOf(line), line })
  }
  return lines
}

const firstValue = (lines: ReadonlyArray<HeaderLine>, key: string): string => {
  const found = lines.find((l) => l.key === key)
  return found === undefined ? "" : headerValue(found.line)
}

const stripComments = (value: string): string =>
  value.includes("(")
    ? value.split(/([\n\r\u2028\u2029])/).map((part) => {
      const start = part.indexOf("(")
      const end = part.lastIndexOf(")")
      return start < 0 || end <= start ? part : part.slice(0, start) + part.slice(end + 1)
    }).join("")
    : value

const decodeOrKeep = (value: string) => {
  try {
    return decodeHeaderWords(value)
  } catch {
    return value
  }
}

/** mailsplit's reading of a part's header block. */
const describe = (lines: ReadonlyArray<HeaderLine>) => {
  const disposition: HeaderValue = parseHeaderValue(firstValue(lines, "content-disposition"))
  let contentHeader: string | undefined
  if (lines.some((l) => l.key === "content-type")) contentHeader = firstValue(lines, "content-type")
  else {
    const extension = disposition.params["filename"] === undefined ? "" : path.extname(disposition.params["filename"]).slice(1)
    if (extension !== "") contentHeader = typeOfFilename(extension)
    contentHeader ??= /^attachment$/i.test(disposition.value || "") ? "application/octet-stream" : "text/plain"
  }
  const type = parseHeaderValue(contentHeader)
  const contentType: string | false = (type.value || "").toLowerCase().trim() || false
  const dispositionValue = (disposition.value || "").toLowerCase().trim()
  const filename = disposition.params["filename"] || type.params["name"] || ""
  const flowed = (type.params["format"] ?? "").toLowerCase().trim() === "flowed"
  const slash = contentType === false ? -1 : contentType.indexOf("/")
  return {
    contentType,
    charset: type.params["charset"] || (false as const),
    encoding: stripComments(firstValue(lines, "content-transfer-encoding")).toLowerCase().trim(),
    disposition: dispositionValue === "" ? (false as const) : decodeOrKeep(dispositionValue),
    filename: filename === "" ? (false as const) : decodeOrKeep(filename),
    flowed,
    delSp: flowed && (type.params["delsp"] ?? "").toLowerCase().trim() === "yes",
    multipart: contentType !== false && contentType.slice(0, slash) === "multipart" && contentType.slice(slash + 1) !== "",
    boundary: type.params["boundary"] ? Buffer.from(type.params["boundary"]) : (false as const)
  }
}

/**
 * 1 next part, 2 end of parts (of this boundary), false: not a delimiter line of `boundary`. As
 * in mailsplit, except that transport padding (blanks before the line end) is allowed, as RFC 2046
 * §5.1.1 asks of receivers (and as the complaint parser always allowed).
 */
const compareBoundary = (raw: Buffer, start: number, end: number, from: number, boundary: Buffer): 1 | 2 | false => {
  if (end - start < boundary.length + 3 + from) return false
  for (let i = 0; i < boundary.length; i++) if (raw[start + i + 2 + from] !== boundary[i]) return false
  let i = start + boundary.length + 2 + from
  const closing = raw[i] === 0x2d && raw[i + 1] === 0x2d
  if (closing) i += 2
  while (i < end && (raw[i] === 0x20 || raw[i] === 0x09)) i++
  if (i === end) return closing ? 2 : false
  if (!closing) return raw[i] === 0x0a || raw[i] === 0x0d ? 1 : false
  return raw[i] === 0x0a || (raw[i] === 0x0d && (i + 1 === end || raw[i + 1] === 0x0a)) ? 2 : false
}

/** The MIME tree of `raw`; throws MimeLimitError past mailsplit's limits. */
export const splitMime = (raw: Buffer): MimeNode => {
  let count = 0
  const make = (parent: Building | null, headerStart: number): Building => {
    count++
    return {
      parent, parentBoundary: parent?.boundary ?? false, parentBoundaryOwner: parent, headerStart, headerEnd: headerStart,
      parsed: false, node: null, boundary: false, children: []
    }
  }
  const root = make(null, 0)
  let current = root
  let inHead = true
  let inEpilogue = false
  /** The leaf whose body runs now, and where it started. */
  let body: { building: Building; start: number } | null = null

  const parse = (b: Building, bodyStart: number) => {
    b.parsed = true
    if (b.headerEnd - b.headerStart > MAX_HEAD_BYTES) throw new MimeLimitError("Max header size for a MIME node exceeded")
    const headerLines = headerLinesOf(raw.subarray(b.headerStart, b.headerEnd))
    const d = describe(headerLines)
    b.boundary = d.boundary
    const node = {
      parent: b.parent?.node ?? null, headerLines, contentType: d.contentType, charset: d.charset, encoding: d.encoding,
      disposition: d.disposition, filename: d.filename, flowed: d.flowed, delSp: d.delSp, multipart: d.multipart,
      enclosesMessage: false, headerStart: b.headerStart, headerEnd: b.headerEnd, bodyStart, bodyEnd: bodyStart,
      partEnd: raw.length, children: b.children
    }
    b.node = node
    b.parent?.children.push(node)
  }
  /** A delimiter line at `at` ends the running body, without the line end before the delimiter. */
  const endBody = (at: number) => {
    if (body === null) return
    let end = at
    if (end > body.start && raw[end - 1] === 0x0a) {
      end--
      if (end > body.start && raw[end - 1] === 0x0d) end--
    }
    // mailsplit keeps a body that is nothing but one line end whole (it reports a body all the same).
    body.building.node!.bodyEnd = end === body.start ? at : end
    body = null
  }
  const checkBoundary = (start: number, end: number): 1 | 2 | 3 | 4 | false => {
    let from = 0
    if (end - start >= 1 && (raw[start] === 0x0d || raw[start] === 0x0a)) {
      from++
      if (end - start >= 2 && raw[start] === 0x0d && raw[start + 1] === 0x0a) from++
    }
    if (end - start < 4 || raw[start + from] !== 0x2d || raw[start + from + 1] !== 0x2d) return false
    const own = !inEpilogue && current.boundary !== false ? compareBoundary(raw, start, end, from, current.boundary) : false
    if (own !== false) return own
    const parents = current.parentBoundary !== false ? compareBoundary(raw, start, end, from, current.parentBoundary) : false
    return parents === false ? false : parents === 1 ? 3 : 4
  }

  /** A delimiter of the multipart that `current` is a part of: that part (and an enclosing message part) ends. */
  const endPart = (at: number) => {
    let end = at
    if (raw[end - 1] === 0x0a) end--
    if (raw[end - 1] === 0x0d) end--
    const owner = current.parentBoundaryOwner
    for (let b: Building | null = current; b !== null && b !== owner; b = b.parent) {
      if (b.node !== null) b.node.partEnd = Math.max(end, b.node.headerStart)
    }
  }

  const line = (start: number, end: number, final: boolean) => {
    if (count > MAX_NODES) throw new MimeLimitError("Max allowed child nodes exceeded")
    const delimiter = checkBoundary(start, end)
    if (delimiter !== false) {
      endBody(start)
      // A part that had only a header, closed by its multipart's end.
      if (delimiter === 4 && inHead && !current.parsed && current.headerEnd > current.headerStart) parse(current, start)
      if (delimiter === 3 || delimiter === 4) endPart(start)
      if (delimiter === 1 || delimiter === 3) {
        const parent = delimiter === 1 ? current : current.parentBoundaryOwner
        current = make(parent, end)
        inHead = true
        inEpilogue = false
      } else if (delimiter === 4) {
        if (current.parentBoundaryOwner !== null) {
          current = current.parentBoundaryOwner
          inEpilogue = true
        }
        inHead = false
      }
      return
    }
    if (!inHead) return
    current.headerEnd = end
    const length = end - start
    const blank = (length === 1 && raw[start] === 0x0a) || (length === 2 && raw[start] === 0x0d && raw[start + 1] === 0x0a)
    if (!final && !blank) return
    const b = current
    parse(b, end)
    const n = b.node!
    if (n.contentType === "message/rfc822" && ["", "7bit", "8bit", "binary"].includes(n.encoding) && n.disposition === "inline") {
      n.enclosesMessage = true
      current = make(b, end)
      if (b.parent !== null) {
        // The enclosed message continues inside its container: the container's delimiters still apply.
        current.parentBoundary = b.parent.boundary
        current.parentBoundaryOwner = b.parent
      }
      inEpilogue = false
      return
    }
    inHead = false
    if (!n.multipart) body = { building: b, start: end }
  }

  let pos = 0
  while (pos < raw.length) {
    const lf = raw.indexOf(0x0a, pos)
    if (lf < 0) break
    line(pos, lf + 1, false)
    pos = lf + 1
  }
  line(pos, raw.length, true)
  if (body !== null) (body as { building: Building }).building.node!.bodyEnd = raw.length
  if (root.node === null) parse(root, raw.length)
  return root.node!
}
