/**
 * An import's rows staged as they are read, in the import worker (plain code, no Effect, no
 * database), for a JSON body (import-read.ts) and a CSV body (csv-read.ts) alike: each valid row
 * becomes one line of `COPY … FROM STDIN` text for the import's staging table
 * (import-staging.ts), and every STAGE_CHUNK_BYTES of lines leave as one transferred buffer of
 * UTF-8 (`emit`), which the main thread copies into the staging table before the worker reads on.
 * Nothing of the rows stays here: invalid rows are counted and reported, and each row's own
 * metadata is held to its bound; repeated addresses are folded, and the fold held to the bound,
 * in SQL (import-staging.ts), where every row is.
 *
 * Before, every row was gathered here by address (a repeated address folds into its first row, so
 * nothing could leave before the last row was read): the 15 MiB CSV import grew the appliance by
 * +287–296 MB, most of it this worker's heap (docs/benchmarks.md).
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

/** Invalid rows an import reports (and its preview lists) by name; the rest are only counted. */
export const MAX_REPORTED_INVALID = 100

/** Why a row's address (trimmed) cannot be imported, in the words the import reports; undefined when it can. */
export const invalidReason = (email: string): string | undefined =>
  isEmailAddress(email) ? undefined : email === "" ? "missing email" : "invalid email syntax"

/**
 * Bytes of COPY text sent at a time: the worker waits for the main thread's copy of each before it
 * reads on, so this (twice: one in the worker, one on its way) is all of the rows either holds.
 * About 2,000 bench rows; a COPY statement per chunk costs a round trip, not a plan.
 */
export const STAGE_CHUNK_BYTES = 256 * 1024

export const cleanTags = (tags: ReadonlyArray<string>): Array<string> => [...new Set(tags.map((t) => t.trim()).filter((t) => t.length > 0))]

/** Why a metadata value is over its bound, or undefined. */
const metadataProblem = (metadata: Readonly<Record<string, unknown>>): string | undefined => {
  const depth = jsonDepth(metadata)
  if (depth > MAX_METADATA_DEPTH) return `must nest at most ${MAX_METADATA_DEPTH} levels (${depth} given)`
  const bytes = jsonBytesUpTo(metadata, MAX_METADATA_BYTES)
  return bytes > MAX_METADATA_BYTES ? `must be at most ${MAX_METADATA_BYTES} bytes as JSON (at least ${bytes} given)` : undefined
}

/** A value as a field of COPY's text format (backslash, and the tab, newline and CR it reads as delimiters). */
const copyField = (text: string) => text.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r"))

/** A text[] literal: each element quoted, its backslashes and quotes escaped. */
const arrayLiteral = (items: ReadonlyArray<string>) => `{${items.map((item) => `"${item.replace(/[\\"]/g, "\\$&")}"`).join(",")}}`

/**
 * The staging table's columns, in the order of each COPY line (import-staging.ts creates it): the
 * row's position, the id it gets if it is its address's first, its address as written and
 * lower-cased (the fold's key), its name (NULL when not given), its tags with the request's, and its
 * metadata.
 */
export const STAGED_COLUMNS = "source_row, id, email, address, name, tags, metadata"

/** One staged row as its COPY line. */
export const copyLine = (row: number, id: string, email: string, address: string, name: string | null, tags: ReadonlyArray<string>, metadata: Readonly<Record<string, unknown>>) =>
  `${row}\t${id}\t${copyField(email)}\t${copyField(address)}\t${name === null ? "\\N" : copyField(name)}\t${copyField(arrayLiteral(tags))}\t${
    copyField(JSON.stringify(metadata))
  }\n`

/**
 * What the import writes besides its staged rows, as plain data (structured-clonable: it crosses
 * from the worker). `staged` counts the valid rows sent, repeats included.
 */
export interface StagedImport {
  readonly received: number
  readonly staged: number
  readonly invalidUnique: number
  readonly invalidRows: number
  readonly errors: ReadonlyArray<ImportError>
  /** The first row whose own metadata is over its bound (a fold over it is found in SQL). */
  readonly oversized: OversizedRow | undefined
  /** The request's tags as every row got them (cleaned): the fold in SQL puts them last again. */
  readonly extraTags: ReadonlyArray<string>
}

/**
 * The rows of one import, staged as they arrive. NUL and lone surrogates never reach here: the JSON
 * body and the CSV stream refuse them (http/storable-input.ts). `extraTags` (the request's `tags`)
 * are added to every row; `metadataParam` names a row's metadata in a refusal; `emit` takes each
 * chunk of COPY text (and, in the worker, waits until the main thread has copied it).
 */
export class ImportRows {
  private lines: Array<string> = []
  private bytes = 0
  /** Lower-cased invalid addresses: the gate counts them once each. */
  private readonly invalidAddresses = new Set<string>()
  private readonly errors: Array<ImportError> = []
  private invalidRows = 0
  private received = 0
  private staged = 0
  private oversized: OversizedRow | undefined
  private readonly extraTags: Array<string>

  constructor(
    extraTags: ReadonlyArray<string>,
    private readonly emit: (chunk: Uint8Array) => void,
    private readonly metadataParam: (row: number) => string = (row) => `contacts[${row - 1}].metadata`
  ) {
    this.extraTags = cleanTags(extraTags)
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
    const metadata = input.metadata ?? {}
    // A JSON row was bounded by its schema; a CSV row's columns were not. A repeated address's
    // merge is bounded in SQL; a row over the bound by itself makes any merge over it too.
    if (this.oversized === undefined && Object.keys(metadata).length > 0) {
      const problem = metadataProblem(metadata)
      if (problem !== undefined) this.oversized = { row, email, param: this.metadataParam(row), problem }
    }
    const tags = cleanTags([...(input.tags ?? []), ...this.extraTags])
    const line = copyLine(row, newId("ct"), email, address, input.name ?? null, tags, metadata)
    this.lines.push(line)
    this.staged++
    // UTF-16 units: within a factor of three of the UTF-8 bytes, enough for a chunk's size.
    this.bytes += line.length
    if (this.bytes >= STAGE_CHUNK_BYTES) this.flush()
  }

  /** Sends the lines gathered so far (in the worker: returns once the main thread has copied them). */
  private flush() {
    if (this.lines.length === 0) return
    const chunk = new TextEncoder().encode(this.lines.join(""))
    this.lines = []
    this.bytes = 0
    this.emit(chunk)
  }

  /** The last lines sent, and what the import writes besides them. */
  finish(): StagedImport {
    this.flush()
    return {
      received: this.received,
      staged: this.staged,
      invalidUnique: this.invalidAddresses.size,
      invalidRows: this.invalidRows,
      errors: this.errors,
      oversized: this.oversized,
      extraTags: this.extraTags
    }
  }
}
