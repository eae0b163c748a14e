/**
 * Report containers, recognised by content (RFC 7489 §7.2.1.1 names `.xml.gz`/`.zip`, but names lie:
 * the corpus has `.xml.gz` that is gzip-in-gzip and `.zip` attachments sent as octet-stream):
 * gzip (1f 8b, RFC 1952), zip (PK 03 04, APPNOTE 4.3.7), or plain XML. Containers nest.
 *
 * Every inflation is streamed through fflate in small input steps with a byte counter on the
 * output, and stops the moment a limit is passed, so a bomb is never inflated beyond the limit
 * plus one step's worth (DEFLATE expands at most ~1032:1, so one 4 KiB step yields ≤ ~4.2 MiB).
 */
import { type FlateError, Gunzip, Unzip, UnzipInflate } from "fflate"

export interface DmarcLimits {
  /** Total bytes of XML and decompressed data one parse may produce, across all layers and members. */
  readonly maxDecompressedBytes: number
  /** Output/input ratio above which a stream is treated as a bomb (checked past `RATIO_FLOOR`). */
  readonly maxRatio: number
  /** Zip members beyond this count make the archive an error. */
  readonly maxZipEntries: number
  /**
   * `<record>` elements one document may hold; past it the document is refused before it is
   * parsed. The parsed tree, not the XML text, is what a parse's memory grows with (about 6 KB
   * of heap per record: 50 000 records, 21 MB of XML, took 350 MB), so bytes alone do not bound it.
   */
  readonly maxRecords: number
}

/**
 * 32 MiB: the largest real reports (Google/Microsoft for big senders) run to a few MiB of XML;
 * 32 MiB is ~10× headroom and bounds the text; the record limit bounds the tree built from it.
 * 20 000 records: a large sender's biggest daily reports hold a few thousand source rows; 20 000
 * parse in about 2 s and 150 MB of heap, well inside a parse worker's 512 MB.
 * Ratio 250: DMARC XML deflates 10–40:1 in practice and the corpus's synthetic 2 286-record report
 * 102:1; deliberate bombs sit at the 1 000:1 DEFLATE ceiling. 10 zip members: reporters send one.
 */
export const defaultDmarcLimits: DmarcLimits = {
  maxDecompressedBytes: 32 * 1024 * 1024,
  maxRatio: 250,
  maxZipEntries: 10,
  maxRecords: 20_000,
}

const STEP = 4096
/** Small outputs are never judged by ratio: a short, repetitive report legitimately compresses far. */
const RATIO_FLOOR = 1024 * 1024
/** gzip>gzip and zip>gzip occur; deeper nesting has no legitimate use and only multiplies work. */
const MAX_DEPTH = 4

export type Container = "empty" | "gzip" | "zip" | "xml" | "unknown"

export const sniff = (bytes: Uint8Array): Container => {
  if (bytes.length === 0) return "empty"
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return "gzip"
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) return "zip"
  return looksLikeXml(bytes) ? "xml" : "unknown"
}

/** A BOM (UTF-8 or UTF-16), then whitespace, then "<". */
const looksLikeXml = (bytes: Uint8Array): boolean => {
  let i = 0
  let width = 1
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3
  else if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) (i = 2), (width = 2)
  else if ((bytes[0] === 0x00 && bytes[1] === 0x3c) || (bytes[0] === 0x3c && bytes[1] === 0x00)) width = 2
  const limit = Math.min(bytes.length, 4096)
  for (; i < limit; i += width) {
    const unit = width === 2 ? (bytes[i] ?? 0) | (bytes[i + 1] ?? 0) : (bytes[i] ?? 0)
    if (unit === 0x3c) return true
    if (unit !== 0x20 && unit !== 0x09 && unit !== 0x0a && unit !== 0x0d) return false
  }
  return false
}

/** Decompression output shared by all layers of one parse (the limit is a total, not per layer). */
export interface Budget {
  remaining: number
}
export const newBudget = (limits: DmarcLimits): Budget => ({ remaining: limits.maxDecompressedBytes })

export interface XmlDocument {
  readonly bytes: Uint8Array
  /** Where it came from, for error messages: `gzip > zip member "a.xml"`. */
  readonly where: string
}

export interface Unpacked {
  readonly documents: ReadonlyArray<XmlDocument>
  /** Containers that could not be opened or broke a limit. */
  readonly errors: ReadonlyArray<string>
  /** Payloads that are none of the known forms (not errors: a zip may hold a README). */
  readonly skipped: ReadonlyArray<string>
}

export const unpack = (bytes: Uint8Array, limits: DmarcLimits, budget: Budget): Unpacked => {
  const out = { documents: [] as Array<XmlDocument>, errors: [] as Array<string>, skipped: [] as Array<string> }
  walk(bytes, "", 0, limits, budget, out)
  return out
}

const label = (where: string, what: string) => (where === "" ? what : `${where} > ${what}`)

const walk = (
  bytes: Uint8Array,
  where: string,
  depth: number,
  limits: DmarcLimits,
  budget: Budget,
  out: { documents: Array<XmlDocument>; errors: Array<string>; skipped: Array<string> },
): void => {
  const kind = sniff(bytes)
  const here = where === "" ? "input" : where
  if (kind === "empty") {
    out.skipped.push(`${here}: empty (0 bytes)`)
    return
  }
  if (kind === "unknown") {
    out.skipped.push(`${here}: neither XML, gzip nor zip`)
    return
  }
  if (kind === "xml") {
    // Bare XML is charged to the same budget (the parser's memory grows with it either way);
    // XML out of a container was already charged as decompressed output.
    if (depth === 0 && bytes.length > budget.remaining) {
      out.errors.push(`${here}: XML of ${bytes.length} bytes exceeds the ${limits.maxDecompressedBytes}-byte limit`)
      return
    }
    if (depth === 0) budget.remaining -= bytes.length
    out.documents.push({ bytes, where: here })
    return
  }
  if (depth >= MAX_DEPTH) {
    out.errors.push(`${here}: containers nested more than ${MAX_DEPTH} deep`)
    return
  }
  if (kind === "gzip") {
    const inner = gunzip(bytes, limits, budget)
    if (!inner.ok) out.errors.push(`${label(where, "gzip")}: ${inner.error}`)
    else walk(inner.data, label(where, "gzip"), depth + 1, limits, budget, out)
    return
  }
  const zip = unzip(bytes, limits, budget)
  if (!zip.ok) {
    out.errors.push(`${label(where, "zip")}: ${zip.error}`)
    return
  }
  for (const member of zip.members) {
    const at = label(where, `zip member ${JSON.stringify(member.name)}`)
    if (member.error !== null) out.errors.push(`${at}: ${member.error}`)
    else walk(concat(member.chunks, member.size), at, depth + 1, limits, budget, out)
  }
}

type Inflated = { readonly ok: true; readonly data: Uint8Array } | { readonly ok: false; readonly error: string }

/** Counts output against the budget and the ratio; `broken` holds the first limit passed. */
class Meter {
  out = 0
  fed = 0
  broken: string | null = null
  readonly limits: DmarcLimits
  readonly budget: Budget
  constructor(limits: DmarcLimits, budget: Budget) {
    this.limits = limits
    this.budget = budget
  }
  take(n: number): boolean {
    if (this.broken !== null) return false
    this.out += n
    if (this.out > this.budget.remaining) {
      this.broken = `decompressed data exceeds the ${this.limits.maxDecompressedBytes}-byte limit (stopped)`
    } else if (this.out > RATIO_FLOOR && this.out > this.limits.maxRatio * Math.max(this.fed, 1)) {
      this.broken = `compression ratio exceeds ${this.limits.maxRatio}:1 (${this.out} bytes from ${this.fed}; stopped as a likely bomb)`
    }
    return this.broken === null
  }
  commit(): void {
    this.budget.remaining -= this.out
  }
}

const isFlateError = (e: unknown): e is FlateError => e instanceof Error && typeof (e as Partial<FlateError>).code === "number"

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1 && chunks[0]!.length === size) return chunks[0]!
  const all = new Uint8Array(size)
  let at = 0
  for (const c of chunks) all.set(c, at), (at += c.length)
  return all
}

/**
 * gzip, including multi-member files (RFC 1952 §2.2). Bytes after a complete member that do not
 * start another member are ignored: some reporters (the corpus's Mimecast report) append a CRLF,
 * and the deflate data before it is complete, so refusing would discard a good report.
 */
/** Pushes `bytes` into a decompressor STEP bytes at a time, stopping as soon as a limit breaks. */
const feed = (stream: { push: (chunk: Uint8Array, final?: boolean) => void }, bytes: Uint8Array, meter: Meter) => {
  for (let i = 0; i < bytes.length && meter.broken === null; i += STEP) {
    const piece = bytes.subarray(i, i + STEP)
    meter.fed += piece.length
    stream.push(piece, i + STEP >= bytes.length)
  }
}

const gunzip = (bytes: Uint8Array, limits: DmarcLimits, budget: Budget): Inflated => {
  const meter = new Meter(limits, budget)
  const chunks: Array<Uint8Array> = []
  let kept = 0
  const stream = new Gunzip((chunk) => {
    if (meter.take(chunk.length)) chunks.push(chunk), (kept += chunk.length)
  })
  try {
    feed(stream, bytes, meter)
  } catch (e) {
    // InvalidHeader after output means a member finished and what follows is not a gzip header.
    const trailingJunk = isFlateError(e) && e.code === 6 && meter.out > 0
    if (!trailingJunk) return { ok: false, error: `corrupt gzip data (${message(e)})` }
  }
  if (meter.broken !== null) return { ok: false, error: meter.broken }
  // fflate ends quietly when the input stops inside a member header; no output means no member.
  if (meter.out === 0) return { ok: false, error: "no data in the gzip stream (truncated header?)" }
  meter.commit()
  return { ok: true, data: concat(chunks, kept) }
}

interface Member {
  readonly name: string
  chunks: Array<Uint8Array>
  size: number
  done: boolean
  error: string | null
}

type Unzipped =
  | { readonly ok: true; readonly members: ReadonlyArray<Member> }
  | { readonly ok: false; readonly error: string }

/** Zip members in local-header order (stored and deflate: the only methods reporters use). */
const unzip = (bytes: Uint8Array, limits: DmarcLimits, budget: Budget): Unzipped => {
  const meter = new Meter(limits, budget)
  const members: Array<Member> = []
  let entries = 0
  const stream = new Unzip((file) => {
    entries += 1
    if (entries > limits.maxZipEntries) {
      meter.broken ??= `more than ${limits.maxZipEntries} zip members`
      return
    }
    const member: Member = { name: file.name, chunks: [], size: 0, done: false, error: null }
    members.push(member)
    if (file.name.endsWith("/")) {
      member.done = true
      return
    }
    if (file.compression !== 0 && file.compression !== 8) {
      member.error = `unsupported compression method ${file.compression}`
      return
    }
    file.ondata = (err, data, final) => {
      if (err !== null) {
        member.error = err.message
        return
      }
      if (!meter.take(data.length)) return
      member.chunks.push(data)
      member.size += data.length
      if (final) member.done = true
    }
    try {
      file.start()
    } catch (e) {
      member.error = message(e)
    }
  })
  stream.register(UnzipInflate)
  try {
    feed(stream, bytes, meter)
  } catch (e) {
    // A stream error after complete members (e.g. a damaged central directory) spares them.
    if (meter.broken === null && !members.some((m) => m.done && !m.name.endsWith("/"))) {
      return { ok: false, error: `corrupt zip data (${message(e)})` }
    }
  }
  if (meter.broken !== null) return { ok: false, error: meter.broken }
  const files = members.filter((m) => !m.name.endsWith("/"))
  if (files.length === 0) return { ok: false, error: "no file members" }
  for (const m of files) if (m.error === null && !m.done) m.error = "truncated (no end of data)"
  meter.commit()
  // A broken member does not condemn its siblings: each is reported or read on its own.
  return { ok: true, members: files }
}
