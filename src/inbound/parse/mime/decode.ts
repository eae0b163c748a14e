/**
 * The decoding rules of the MIME reader (./split.ts, ../mail.ts): transfer encodings (RFC 2045
 * §6), character sets, encoded words (RFC 2047), structured header values with RFC 2231
 * parameters, and format=flowed text (RFC 3676). They follow mailparser (libmime, libqp,
 * libbase64, mailsplit) rule for rule, because the bounce and complaint parsers were written and
 * table-tested against what mailparser made of the corpus; where mailparser decodes a charset
 * with iconv-lite, the platform's TextDecoder (the WHATWG encodings) is used instead.
 */

/** A charset name libmime's second pass normalises ("win-1251" → "windows-1251", "iso8859_2" → "iso-8859-2"). */
const normaliseCharset = (name: string): string =>
  name
    .replace(/^utf[-_]?(\d+)/, "utf-$1")
    .replace(/^(?:us[-_]?)ascii/, "windows-1252")
    .replace(/^win(?:dows)?[-_]?(\d+)/, "windows-$1")
    .replace(/^(?:latin|iso[-_]?8859)?[-_]?(\d+)/, "iso-8859-$1")
    .replace(/^l[-_]?(\d+)/, "iso-8859-$1")

type Decoder = InstanceType<typeof TextDecoder>

/** Charset label → the WHATWG encoding it names (libmime resolves labels by the same table), or null. */
const decoders = new Map<string, Decoder | null>()

const decoderFor = (label: string): Decoder | null => {
  let decoder = decoders.get(label)
  if (decoder === undefined) {
    try {
      decoder = new TextDecoder(label)
    } catch {
      decoder = label === normaliseCharset(label) ? null : decoderFor(normaliseCharset(label))
    }
    decoders.set(label, decoder)
  }
  return decoder
}

/**
 * Bytes in `charset` as text, the charset named by its WHATWG label as libmime names it (so
 * ISO-8859-1 and US-ASCII mean windows-1252); an unknown charset is read as UTF-8.
 */
export const decodeCharset = (bytes: Uint8Array, charset: string | false | null | undefined): string => {
  const label = (charset || "utf-8").toLowerCase().trim()
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (/^jis/.test(label)) return decodeJis(buffer)
  const decoder = decoderFor(label)
  if (decoder === null || decoder.encoding === "utf-8") return buffer.toString("utf8")
  if (decoder.encoding === "windows-1252") return decodeWindows1252(buffer)
  if (decoder.encoding === "iso-2022-jp") return decodeJis(buffer)
  return decoder.decode(buffer)
}

/* windows-1252's 0x80-0x9F (Node 20's TextDecoder reads them as Latin-1 controls); U+FFFD where unassigned. */
const CP1252_HIGH = [
  0x20ac, 0xfffd, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0xfffd, 0x17d, 0xfffd,
  0xfffd, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0xfffd, 0x17e, 0x178
]

const decodeWindows1252 = (bytes: Buffer): string =>
  bytes.toString("latin1").replace(/[\x80-\x9f]/g, (c) => String.fromCharCode(CP1252_HIGH[c.charCodeAt(0) - 0x80]!))

/**
 * ISO-2022-JP (RFC 1468). Japanese mail labelled so often carries 8-bit (UTF-8) text, which
 * mailparser's decoder passed through; the WHATWG decoder also refuses two escape sequences in
 * a row (adjacent encoded words produce them), which the mail decoders accept.
 */
const decodeJis = (bytes: Buffer): string => {
  if (bytes.some((b) => b >= 0x80)) return bytes.toString("utf8")
  const text = bytes.toString("latin1").replace(/\x1b\([BJ](?=\x1b)/g, "")
  return decoderFor("iso-2022-jp")?.decode(Buffer.from(text, "latin1")) ?? text
}

/** Whether a body's charset needs decoding at all (mailparser's own test). */
export const isUtf8Compatible = (charset: string | false): boolean =>
  ["ascii", "usascii", "utf8"].includes((charset || "utf-8").toLowerCase().replace(/[^a-z0-9]+/g, ""))

/** base64 in independent padded runs (every line padded on its own happens), as libbase64 reads it. */
const base64Runs = (text: string): Buffer => {
  const pad = text.indexOf("=")
  if (pad >= 0 && /[a-zA-Z0-9+/\-_]/.test(text.slice(pad))) {
    return Buffer.concat(text.split(/=+/).filter((run) => run !== "").map((run) => Buffer.from(run, "base64")))
  }
  return Buffer.from(text, "base64")
}

/** RFC 2045 §6.8, leniently: stray characters are dropped, a trailing partial quartet kept as it came. */
const decodeBase64 = (body: Buffer): Buffer => {
  let text = body.toString("ascii")
  if (/[^a-zA-Z0-9+/=]/.test(text)) text = text.replace(/[^a-zA-Z0-9+/=]/g, "")
  const lastPad = text.lastIndexOf("=")
  const padded = lastPad >= 0 ? text.slice(0, lastPad + 1) : ""
  let rest = lastPad >= 0 ? text.slice(lastPad + 1) : text
  let left = ""
  if (rest.length < 4) {
    left = rest
    rest = ""
  } else if (rest.length % 4 !== 0) {
    left = rest.slice(rest.length - (rest.length % 4))
    rest = rest.slice(0, rest.length - left.length)
  }
  const whole = padded + rest
  const decoded = whole === "" ? Buffer.alloc(0) : base64Runs(whole)
  return left === "" ? decoded : Buffer.concat([decoded, Buffer.from(left, "ascii")])
}

const HEX = /^[\da-fA-F]{2}$/

/** RFC 2045 §6.7: trailing blanks and soft line breaks dropped, `=XX` decoded, other bytes kept. */
const decodeQuotedPrintable = (body: Buffer): Buffer => {
  const text = body.toString("latin1").replace(/[\t ]+$/gm, "").replace(/=(?:\r?\n|$)/g, "")
  const out = Buffer.allocUnsafe(text.length)
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 0x3d) {
      const hex = text.slice(i + 1, i + 3)
      if (HEX.test(hex)) {
        out[n++] = parseInt(hex, 16)
        i += 2
        continue
      }
    }
    out[n++] = code
  }
  return out.subarray(0, n)
}

export const decodeTransfer = (body: Buffer, encoding: string): Buffer =>
  encoding === "base64" ? decodeBase64(body) : encoding === "quoted-printable" ? decodeQuotedPrintable(body) : body

/** One RFC 2047 encoded word's bytes in its charset (a `*language` suffix ignored, RFC 2231 §5). */
const decodeWord = (charset: string, encoding: string, text: string): string => {
  const name = charset.split("*")[0]!
  if (encoding.toUpperCase() === "B") return decodeCharset(base64Runs(text), name)
  const spaced = text.replace(/=\s+([0-9a-fA-F])/g, "=$1").replace(/[_\s]/g, " ")
  const src = Buffer.from(spaced)
  const bytes: Array<number> = []
  for (let i = 0; i < src.length; i++) {
    if (src[i] === 0x3d && i <= src.length - 2 && HEX.test(String.fromCharCode(src[i + 1]!, src[i + 2] ?? 0))) {
      bytes.push(parseInt(String.fromCharCode(src[i + 1]!, src[i + 2]!), 16))
      i += 2
    } else bytes.push(src[i]!)
  }
  return decodeCharset(Buffer.from(bytes), name)
}

const JOIN = "__\x00JOIN\x00__"

/**
 * Encoded words in a header value, as libmime decodes them: adjacent words of the same charset and
 * encoding are joined before decoding (a multi-byte character may be split between two words),
 * whitespace between encoded words is dropped (RFC 2047 §6.2).
 */
export const decodeHeaderWords = (value: string): string =>
  value
    .replace(/(=\?([^?]+)\?[Bb]\?[^?]*\?=)\s*(?==\?([^?]+)\?[Bb]\?[^?]*\?=)/g, (match, left: string, a: string, b: string) =>
      normaliseCharset(a) === normaliseCharset(b) ? left + JOIN : match)
    .replace(/(=\?([^?]+)\?[Qq]\?[^?]*\?=)\s*(?==\?([^?]+)\?[Qq]\?[^?]*\?=)/g, (match, left: string, a: string, b: string) =>
      normaliseCharset(a) === normaliseCharset(b) ? left + JOIN : match)
    .replace(/(\?=)?__\x00JOIN\x00__(=\?([^?]+)\?[QqBb]\?)?/g, "")
    .replace(/(=\?[^?]+\?[QqBb]\?[^?]*\?=)\s+(?==\?[^?]+\?[QqBb]\?[^?]*\?=)/g, "$1")
    .replace(/=\?([\w_\-*]+)\?([QqBb])\?([^?]*)\?=/g, (_, charset: string, encoding: string, text: string) =>
      decodeWord(charset, encoding, text))

export interface HeaderValue {
  /** The value before the first `;`, or false when there is none. */
  readonly value: string | false
  /** Parameters by lower-cased name; RFC 2231 continuations joined and decoded. */
  readonly params: Readonly<Record<string, string>>
}

const isBlank = (c: string) => c === " " || c === "\t" || c === "\r" || c === "\n" || c === "\f" || c === "\v"

/** A structured header value such as Content-Type (RFC 2045 §5.1, RFC 2231), as libmime parses it. */
export const parseHeaderValue = (text: string): HeaderValue => {
  const params = new Map<string, string>()
  let main: string | false = false
  let key: string | false = false
  let value = ""
  let end = 0
  let inKey = false
  let quote = false
  let escaped = false
  const commit = () => {
    const collected = value.slice(0, end)
    value = ""
    end = 0
    if (inKey) {
      if (collected !== "") params.set(collected.toLowerCase(), "")
    } else if (key === false) main = collected
    else params.set(key, collected)
  }
  for (const c of text) {
    if (inKey) {
      if (c === "=") {
        key = value.slice(0, end).toLowerCase()
        value = ""
        end = 0
        inKey = false
      } else if (c === ";") commit()
      else if (isBlank(c)) {
        if (value.length > 0) value += c
      } else end = (value += c).length
      continue
    }
    if (escaped) end = (value += c).length
    else if (c === "\\") {
      escaped = true
      continue
    } else if (c === '"') quote = !quote
    else if (!quote && c === ";") {
      commit()
      inKey = true
    } else if (!quote && isBlank(c)) {
      if (value.length > 0) value += c
    } else end = (value += c).length
    escaped = false
  }
  commit()
  return { value: main, params: Object.fromEntries(joinContinuations(params)) }
}

/** RFC 2231 §3-4: `name*0*=utf-8''a%20b`, `name*1=c` → `name`; an assembled value wins over a plain one. */
const joinContinuations = (params: Map<string, string>): Map<string, string> => {
  const pieces = new Map<string, { charset: string | false; values: Array<{ nr: number; value: string }> }>()
  for (const [name, raw] of [...params]) {
    const match = /\*((\d+)\*?)?$/.exec(name)
    if (match === null) continue
    params.delete(name)
    const base = name.slice(0, match.index)
    const nr = Number(match[2]) || 0
    const entry = pieces.get(base) ?? { charset: false, values: [] }
    pieces.set(base, entry)
    let value = raw
    const extended = nr === 0 && match[0].endsWith("*") ? /^([^']*)'[^']*'(.*)$/.exec(raw) : null
    if (extended !== null) {
      entry.charset = extended[1] || "utf-8"
      value = extended[2]!
    }
    entry.values.push({ nr, value })
  }
  for (const [base, entry] of pieces) {
    const value = entry.values.sort((a, b) => a.nr - b.nr).map((v) => v.value).join("")
    if (entry.charset === false) {
      params.set(base, decodeHeaderWords(value))
      continue
    }
    const qp = value.replace(/[=_\s]/g, (s) => (s === " " ? "_" : `%${s.charCodeAt(0).toString(16).padStart(2, "0")}`)).replace(/%/g, "=")
    params.set(base, decodeWord(entry.charset, "Q", qp))
  }
  return params
}

/** RFC 3676 §4.2: soft line breaks (a line ending in a space) joined, space-stuffing removed. */
export const decodeFlowed = (text: string, delSp: boolean): string => {
  const result: Array<string> = []
  let parts: Array<string> | null = null
  let length = 0
  const push = (part: string) => {
    if (part !== "") {
      parts!.push(part)
      length += part.length
    }
  }
  for (const line of text.split(/\r?\n/)) {
    const last = parts !== null && parts.length > 0 ? parts[parts.length - 1]! : ""
    const softBreak = last.endsWith(" ") && !(length === 3 && parts!.join("") === "-- ")
    if (softBreak) {
      if (delSp) {
        parts!.pop()
        length -= last.length
        push(last.slice(0, -1))
      }
      push(line)
    } else {
      if (parts !== null) result.push(parts.join(""))
      parts = []
      length = 0
      push(line)
    }
  }
  if (parts !== null && length > 0) result.push(parts.join(""))
  return result.join("\n").replace(/^ /gm, "")
}

/* The types libmime guesses from a file name that matter here: text, HTML and enclosed messages. */
const TYPE_BY_EXTENSION: ReadonlyMap<string, string> = new Map([
  ...["acgi", "htm", "html", "htmls", "htx", "shtml", "stm"].map((e) => [e, "text/html"] as const),
  ...["bas", "c", "c++", "cc", "conf", "cxx", "def", "f", "f90", "for", "g", "h", "hh", "idc", "jav", "java", "list", "log", "lst", "m",
    "mar", "pl", "sdml", "txt"].map((e) => [e, "text/plain"] as const),
  ...["eml", "mht", "mhtml", "nws"].map((e) => [e, "message/rfc822"] as const)
])

/** The media type a file name suggests (its last extension), `application/octet-stream` when none. */
export const typeOfFilename = (filename: string): string =>
  TYPE_BY_EXTENSION.get(filename.toLowerCase().replace(/\s/g, "").replace(/^\./, "").split(".").pop() ?? "") ?? "application/octet-stream"
