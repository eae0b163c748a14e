/**
 * An import's rows gathered by address (plain code, no Effect, no database): it runs in the import
 * worker for a JSON body (import-read.ts) and on the main thread for a CSV body's rows. A repeated
 * address (compared case-insensitively) folds into its first row, invalid rows are counted and
 * reported, and each contact's metadata is held to its bound (also after the fold).
 *
 * What leaves here for the database is one JSON text per batch (`rowJson`), the form
 * jsonb_to_recordset reads: texts, not an object per row, are what the main thread holds for a
 * JSON import.
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

export interface ValidRow {
  row: number
  email: string
  name: string | null
  tags: Array<string>
  metadata: Readonly<Record<string, unknown>>
}

/** One batch as the INSERT consumes it: its JSON text, its lower-cased addresses, and whether any row brings metadata. */
export interface ImportBatch {
  readonly json: string
  readonly emails: ReadonlyArray<string>
  readonly bringsMetadata: boolean
}

const MAX_ERRORS = 100

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
 * The rows of one import, gathered by address as they arrive (one copy: the parsed rows).
 * NUL and lone surrogates never reach here: the JSON body and the CSV stream refuse them
 * (http/storable-input.ts). `metadataParam` names a row's metadata in a refusal.
 */
export class ImportRows {
  readonly valid = new Map<string, ValidRow>()
  readonly invalidAddresses = new Set<string>()
  readonly errors: Array<ImportError> = []
  invalidRows = 0
  received = 0
  /** The first row whose address's metadata is over the bound: the import is refused with it. */
  oversized: OversizedRow | undefined

  constructor(readonly metadataParam: (row: number) => string = (row) => `contacts[${row - 1}].metadata`) {}

  private checkMetadata(row: number, email: string, metadata: Readonly<Record<string, unknown>>) {
    if (this.oversized !== undefined) return
    const problem = metadataProblem(metadata)
    if (problem !== undefined) this.oversized = { row, email, param: this.metadataParam(row), problem }
  }

  add(input: ImportRow) {
    const row = ++this.received
    const email = input.email.trim()
    const address = email.toLowerCase()
    if (!isEmailAddress(email)) {
      this.invalidRows++
      this.invalidAddresses.add(address)
      if (this.errors.length < MAX_ERRORS) this.errors.push({ row, email, reason: email === "" ? "missing email" : "invalid email syntax" })
      return
    }
    const seen = this.valid.get(address)
    const tags = cleanTags(input.tags ?? [])
    if (seen === undefined) {
      // The row's metadata is kept as given (not copied): a later row of the address merges into a copy.
      this.valid.set(address, { row, email, name: input.name ?? null, tags, metadata: input.metadata ?? {} })
      // A JSON row was bounded by its schema; a CSV row's columns were not.
      if (input.metadata !== undefined) this.checkMetadata(row, email, input.metadata)
    } else {
      if (input.name !== undefined && input.name !== null) seen.name = input.name
      seen.tags = cleanTags([...seen.tags, ...tags])
      if (input.metadata !== undefined && Object.keys(input.metadata).length > 0) {
        seen.metadata = { ...seen.metadata, ...input.metadata }
        this.checkMetadata(row, email, seen.metadata)
      }
    }
  }

  get unique() {
    return this.valid.size + this.invalidAddresses.size
  }
}

/** One valid row as an element of a batch's JSON text (`source_row` names it in a metadata refusal). */
export const rowJson = (r: ValidRow, extraTags: ReadonlyArray<string>) =>
  JSON.stringify({
    source_row: r.row,
    id: newId("ct"),
    email: r.email,
    name: r.name,
    tags: extraTags.length === 0 ? r.tags : cleanTags([...r.tags, ...extraTags]),
    metadata: r.metadata
  })

export const bringsMetadata = (r: ValidRow) => Object.keys(r.metadata).length > 0

/**
 * What the import writes, as plain data (structured-clonable: it crosses from the worker). Without
 * batches when a row's metadata is over its bound: nothing will be written.
 */
export interface GatheredImport {
  readonly unique: number
  readonly invalidUnique: number
  readonly invalidRows: number
  readonly valid: number
  readonly errors: ReadonlyArray<ImportError>
  readonly oversized: OversizedRow | undefined
  readonly batches: ReadonlyArray<ImportBatch>
}

/**
 * The gathered rows as batches, all at once (in the worker: nothing else waits on its thread).
 * Each row is let go once it is in its batch's text, so the texts replace the rows in memory.
 */
export const gatherAll = (rows: ImportRows, extraTags: ReadonlyArray<string>): GatheredImport => {
  const batches: Array<ImportBatch> = []
  const valid = rows.valid.size
  if (rows.oversized === undefined) {
    let parts: Array<string> = []
    let emails: Array<string> = []
    let metadata = false
    const flush = () => {
      batches.push({ json: `[${parts.join(",")}]`, emails, bringsMetadata: metadata })
      parts = []
      emails = []
      metadata = false
    }
    for (const [address, r] of rows.valid) {
      parts.push(rowJson(r, extraTags))
      emails.push(address)
      metadata ||= bringsMetadata(r)
      rows.valid.delete(address)
      if (parts.length === BATCH) flush()
    }
    if (parts.length > 0) flush()
  }
  return {
    unique: valid + rows.invalidAddresses.size,
    invalidUnique: rows.invalidAddresses.size,
    invalidRows: rows.invalidRows,
    valid,
    errors: rows.errors,
    oversized: rows.oversized,
    batches
  }
}
