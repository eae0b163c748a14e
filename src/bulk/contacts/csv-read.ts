/**
 * Reading a contact import's CSV body (run in a worker thread by csv-reader.ts; plain code, no
 * Effect, no database): bytes in, the contacts staged as they are read (import-rows.ts: COPY text
 * sent in chunks), as a JSON body's are (import-read.ts). import-worker.ts runs it.
 *
 * The work is bounded before it is done. A first pass over the bytes (`scanCsv`, one loop, no
 * allocation) refuses a header wider than `maxColumns` and a record longer than `maxLineBytes`:
 * a wide header made every row walk every header column (200,000 columns × 10,000 rows froze the
 * appliance for 39 s), and a line of nothing but commas costs csv-parse an array slot per comma.
 * Then csv-parse reads the records and each row reads only the columns that map to something
 * (email, name, tags, named metadata columns), never the header's width. The cells kept are
 * counted against `maxValues`: a CSV names its metadata keys once in the header, so unlike a JSON
 * body its contacts can be far larger than its bytes; the count bounds what is built.
 *
 * Only chunks of COPY text cross to the main thread, one at a time. Before, the rows were gathered
 * by address (on the main thread, later in this worker) until the last was read, and a 15 MiB
 * import grew the appliance by +244–296 MB (docs/benchmarks.md).
 */
import { parse } from "csv-parse/sync"
import { ImportRows, type StagedImport } from "./import-rows.ts"

export interface CsvReadLimits {
  /** Columns of the header row, named or not. */
  readonly maxColumns: number
  /** Bytes of one record (a header or a contact), quoted line breaks included. */
  readonly maxLineBytes: number
  /** Cells kept over the whole import (non-empty email, name, tags and metadata cells). */
  readonly maxValues: number
}

export type CsvReadResult =
  | { readonly ok: true; readonly staged: StagedImport }
  | {
    readonly ok: false
    /** `size`: a limit of the whole body (413); `invalid`: the CSV itself (400). */
    readonly kind: "size" | "invalid"
    readonly message: string
    readonly param?: string
  }

/** A refusal of a CSV row's metadata names the field; the message names the row. */
const CSV_METADATA_PARAM = () => "metadata"

const QUOTE = 0x22
const COMMA = 0x2c
const LF = 0x0a
const CR = 0x0d

const refuse = (kind: "size" | "invalid", message: string, param?: string): CsvReadResult =>
  param === undefined ? { ok: false, kind, message } : { ok: false, kind, message, param }

/**
 * The caps, checked in one pass before csv-parse runs. Quotes are followed as RFC 4180 has them
 * (a doubled quote inside a quoted field toggles twice); csv-parse refuses a quote anywhere else,
 * so for every body it accepts this pass sees the same records. A record ends at an unquoted CR
 * or LF (a CRLF ends one record and starts an empty one, which costs nothing).
 */
export const scanCsv = (bytes: Uint8Array, limits: CsvReadLimits): CsvReadResult | undefined => {
  let quoted = false
  let header = true
  let columns = 1
  let line = 1
  let start = 0
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!
    // The one thing a UTF-8 body can hold that PostgreSQL cannot store (http/storable-input.ts).
    if (byte === 0) return refuse("invalid", `Line ${line} of the CSV holds a NUL (U+0000) character, which cannot be stored`)
    if (byte === QUOTE) quoted = !quoted
    else if (!quoted && (byte === LF || byte === CR)) {
      if (header && i > start) header = false
      start = i + 1
      line++
      continue
    } else if (header && !quoted && byte === COMMA && ++columns > limits.maxColumns) {
      return refuse("invalid", `The CSV header row has more than ${limits.maxColumns} columns (the most a contact import reads)`, "header")
    }
    if (i - start >= limits.maxLineBytes) {
      return header
        ? refuse("invalid", `The CSV header row is longer than ${limits.maxLineBytes} bytes`, "header")
        : refuse("invalid", `Line ${line} of the CSV is longer than ${limits.maxLineBytes} bytes, the most one contact may take`)
    }
  }
  return undefined
}

type Column = "email" | "name" | "tags" | number

/**
 * The header's columns that map to something, in order: email, name and tags in any case; every
 * other named column a metadata key (its index in `keys`). Empty names are left out here, so no
 * row ever looks at them.
 */
const mapHeader = (header: ReadonlyArray<string>) => {
  const keys: Array<string> = []
  const mapped: Array<{ readonly index: number; readonly column: Column }> = []
  header.forEach((raw, index) => {
    const key = raw.trim()
    const lower = key.toLowerCase()
    if (lower === "email" || lower === "name" || lower === "tags") mapped.push({ index, column: lower })
    else if (key !== "") mapped.push({ index, column: keys.push(key) - 1 })
  })
  return { keys, mapped }
}

/**
 * Reads the CSV within `limits` and stages its contacts through `emit` (import-rows.ts), `extraTags`
 * (the query's `tags`) added to each; a refusal is a value, and anything csv-parse refuses is
 * `invalid` (rows sent before it are thrown away with the import's transaction).
 */
export const readCsv = (bytes: Uint8Array, limits: CsvReadLimits, extraTags: ReadonlyArray<string>, emit: (chunk: Uint8Array) => void): CsvReadResult => {
  const refused = scanCsv(bytes, limits)
  if (refused !== undefined) return refused
  let head: ReturnType<typeof mapHeader> | undefined
  const rows = new ImportRows(extraTags, emit, CSV_METADATA_PARAM)
  let values = 0
  const addRecord = (record: ReadonlyArray<string>, { keys, mapped }: ReturnType<typeof mapHeader>) => {
    let email = ""
    let name: string | null = null
    let tags: ReadonlyArray<string> = []
    // No prototype: a column named __proto__ is a metadata key like any other.
    const metadata: Record<string, string> = Object.create(null)
    // Columns past the record's end are empty: the loop stops at the first one.
    for (let m = 0; m < mapped.length && mapped[m]!.index < record.length; m++) {
      const { column, index } = mapped[m]!
      const value = record[index]!
      if (value === "") continue
      values++
      if (column === "email") email = value
      else if (column === "name") name = value.trim() === "" ? null : value.trim()
      else if (column === "tags") tags = value.split(";")
      else metadata[keys[column]!] = value
    }
    rows.add({ email, name, tags, metadata })
  }
  try {
    parse(bytes, {
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
      on_record: (record: Array<string>) => {
        if (head === undefined) {
          head = mapHeader(record)
          if (!head.mapped.some((m) => m.column === "email")) throw new HeaderWithoutEmail()
          return null
        }
        addRecord(record, head)
        if (values > limits.maxValues) throw new TooManyValues()
        return null
      }
    })
  } catch (error) {
    if (error instanceof HeaderWithoutEmail) return refuse("invalid", "The CSV header row has no email column")
    if (error instanceof TooManyValues) {
      return refuse("size", `The CSV holds more than ${limits.maxValues} non-empty cells, the most one import may hold: split it`)
    }
    // csv-parse quotes the field it stopped at: up to a whole line, cut to what a person reads.
    const text = error instanceof Error ? error.message : String(error)
    return refuse("invalid", `Invalid CSV: ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`)
  }
  if (head === undefined) return refuse("invalid", "The CSV body is empty: a header row with an email column is required")
  return { ok: true, staged: rows.finish() }
}

/** Thrown from csv-parse's record hook to stop reading: the header names no email column. */
class HeaderWithoutEmail extends Error {}

/** Thrown from csv-parse's record hook to stop reading: the cells kept passed `maxValues`. */
class TooManyValues extends Error {}
