/**
 * An import's rows gathered by address in the import worker (plain code, no Effect, no database),
 * for a JSON body (import-read.ts) and a CSV body (csv-read.ts) alike. A repeated address
 * (compared case-insensitively) folds into its first row, invalid rows are counted and reported,
 * and each contact's metadata is held to its bound (also after the fold).
 *
 * Each row is kept as the text it will have in its INSERT's JSON (`jsonb_to_recordset` reads it),
 * made as it arrives; a repeated address re-reads and rewrites its first row's text (rare). The
 * batches leave as one buffer of UTF-8 bytes that is transferred, not copied, to the main thread,
 * which decodes one batch when its statement's turn comes. Rows as objects, and the batch texts as
 * strings cloned across, made the 15 MiB CSV import grow the appliance by +259–309 MB (docs/benchmarks.md).
 */
import { jsonBytesUpTo, jsonDepth, MAX_METADATA_BYTES, MAX_METADATA_DEPTH } from "../../http/bounds.ts"
import { isEmailAddress } from "../../lib/email.ts"
import { newId } from "../../lib/ids.ts"

export interface ImportRow {
  readonly email: string
  readonly name?: string | null | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

export interface ImportError {
  readonly row: number
  readonly email: string
  readonly reason: string
}

/** The first row whose address's metadata is over the bound (MetadataTooLarge's fields, metadata-bound.ts). */
export interface OversizedRow {
  readonly row: number
  readonly email: string
  readonly param: string
  readonly problem: string
}

/** One batch's place in the gathered buffer, and whether any of its rows brings metadata. */
export interface BatchSpan {
  readonly start: number
  readonly end: number
  readonly bringsMetadata: boolean
}

/** A row as its INSERT reads it (and as a repeated address's fold re-reads it). */
interface RowJson {
  readonly source_row: number
  readonly id: string
  readonly email: string
  name: string | null
  tags: Array<string>
  metadata: Readonly<Record<string, unknown>>
}

/** Invalid rows an import reports (and its preview lists) by name; the rest are only counted. */
export const MAX_REPORTED_INVALID = 100

/** Why a row's address (trimmed) cannot be imported, in the words the import reports; undefined when it can. */
export const invalidReason = (email: string): string | undefined =>
  isEmailAddress(email) ? undefined : email === "" ? "missing email" : "invalid email syntax"

/** Rows of one INSERT statement. */
export const BATCH = 2000

export const cleanTags = (tags: ReadonlyArray<string>): Array<string> => [...new Set(tags.map((t) => t.trim()).filter((t) => t.length > 0))]

/** Why a metadata value is over its bound, or undefined. */
const metadataProblem = (metadata: Readonly<Record<string, unknown>>): string | undefined => {
  const depth = jsonDepth(metadata)
  if (depth > MAX_METADATA_DEPTH) return `must nest at most ${MAX_METADATA_DEPTH} levels (${depth} given)`
  const bytes = jsonBytesUpTo(metadata, MAX_METADATA_BYTES)
  return bytes > MAX_METADATA_BYTES ? `must be at most ${MAX_METADATA_BYTES} bytes as JSON (at least ${bytes} once merged)` : undefined
}

/**
 * The rows of one import, gathered by address as they arrive: each valid row's INSERT text, in
 * the order of first appearance. NUL and lone surrogates never reach here: the JSON body and the
 * CSV stream refuse them (http/storable-input.ts). `extraTags` (the request's `tags`) are added to
 * every row; `metadataParam` names a row's metadata in a refusal.
 */
export class ImportRows {
  /** Each valid address's row text; a slot is emptied once the row is in its batch. */
  private readonly texts: Array<string | undefined> = []
  private readonly bringsMetadata: Array<boolean> = []
  /** Lower-cased address → its row's slot. */
  private readonly slots = new Map<string, number>()
  readonly invalidAddresses = new Set<string>()
  readonly errors: Array<ImportError> = []
  invalidRows = 0
  received = 0
  /** The first row whose address's metadata is over the bound: the import is refused with it. */
  oversized: OversizedRow | undefined
  private readonly extraTags: Array<string>

  constructor(
    extraTags: ReadonlyArray<string>,
    readonly metadataParam: (row: number) => string = (row) => `contacts[${row - 1}].metadata`
  ) {
    this.extraTags = cleanTags(extraTags)
  }

  private checkMetadata(row: number, email: string, metadata: Readonly<Record<string, unknown>>) {
    if (this.oversized !== undefined) return
    const problem = metadataProblem(metadata)
    if (problem !== undefined) this.oversized = { row, email, param: this.metadataParam(row), problem }
  }

  private withExtraTags(tags: ReadonlyArray<string>) {
    return this.extraTags.length === 0 ? cleanTags(tags) : cleanTags([...tags, ...this.extraTags])
  }

  add(input: ImportRow) {
    const row = ++this.received
    const email = input.email.trim()
    const address = email.toLowerCase()
    const reason = invalidReason(email)
    if (reason !== undefined) {
      this.invalidRows++
      this.invalidAddresses.add(address)
      if (this.errors.length < MAX_REPORTED_INVALID) this.errors.push({ row, email, reason })
      return
    }
    const slot = this.slots.get(address)
    const metadata = input.metadata ?? {}
    if (slot === undefined) {
      // A JSON row was bounded by its schema; a CSV row's columns were not.
      if (input.metadata !== undefined) this.checkMetadata(row, email, metadata)
      const text: RowJson = { source_row: row, id: newId("ct"), email, name: input.name ?? null, tags: this.withExtraTags(input.tags ?? []), metadata }
      this.slots.set(address, this.texts.push(JSON.stringify(text)) - 1)
      this.bringsMetadata.push(Object.keys(metadata).length > 0)
      return
    }
    const seen = JSON.parse(this.texts[slot]!) as RowJson
    if (input.name !== undefined && input.name !== null) seen.name = input.name
    // The request's tags go last again, after the row's own and this row's.
    const own = seen.tags.filter((tag) => !this.extraTags.includes(tag))
    seen.tags = this.withExtraTags([...own, ...cleanTags(input.tags ?? [])])
    if (Object.keys(metadata).length > 0) {
      seen.metadata = { ...seen.metadata, ...metadata }
      this.checkMetadata(row, email, seen.metadata)
      this.bringsMetadata[slot] = true
    }
    this.texts[slot] = JSON.stringify(seen)
  }

  get valid() {
    return this.texts.length
  }

  get unique() {
    return this.texts.length + this.invalidAddresses.size
  }

  /**
   * The rows as batches of BATCH rows in one buffer of UTF-8 bytes. Each row's text is let go once
   * it is in its batch's, so the bytes replace the rows in memory.
   */
  batches(): { readonly bytes: Uint8Array; readonly spans: ReadonlyArray<BatchSpan> } {
    const encoder = new TextEncoder()
    const parts: Array<Uint8Array> = []
    const spans: Array<BatchSpan> = []
    let offset = 0
    for (let first = 0; first < this.texts.length; first += BATCH) {
      const last = Math.min(first + BATCH, this.texts.length)
      const rows = this.texts.slice(first, last) as Array<string>
      this.texts.fill(undefined, first, last)
      const encoded = encoder.encode(`[${rows.join(",")}]`)
      parts.push(encoded)
      spans.push({ start: offset, end: offset + encoded.length, bringsMetadata: this.bringsMetadata.slice(first, last).includes(true) })
      offset += encoded.length
    }
    const bytes = new Uint8Array(offset)
    parts.forEach((part, i) => bytes.set(part, spans[i]!.start))
    return { bytes, spans }
  }
}

/**
 * What the import writes, as plain data (structured-clonable: it crosses from the worker, `bytes`
 * transferred). Without batches when a row's metadata is over its bound: nothing will be written.
 */
export interface GatheredImport {
  readonly unique: number
  readonly invalidUnique: number
  readonly invalidRows: number
  readonly valid: number
  readonly errors: ReadonlyArray<ImportError>
  readonly oversized: OversizedRow | undefined
  /** Every batch's JSON text, one after the other, as UTF-8. */
  readonly bytes: Uint8Array
  readonly batches: ReadonlyArray<BatchSpan>
}

/** The gathered rows, made into their batches (in the worker: nothing else waits on its thread). */
export const gatherAll = (rows: ImportRows): GatheredImport => {
  const { bytes, spans } = rows.oversized === undefined ? rows.batches() : { bytes: new Uint8Array(0), spans: [] }
  return {
    unique: rows.unique,
    invalidUnique: rows.invalidAddresses.size,
    invalidRows: rows.invalidRows,
    valid: rows.valid,
    errors: rows.errors,
    oversized: rows.oversized,
    bytes,
    batches: spans
  }
}
