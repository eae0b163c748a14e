/**
 * Reads the email column (and the name, for the preview's sample) out of a CSV fed in chunks, as
 * the import reads it (src/bulk/contacts/csv-read.ts): a header row naming `email` in any case,
 * quoted fields per RFC 4180 (`""` is a quote, line breaks inside quotes belong to the field),
 * empty lines skipped, data rows counted from 1. It keeps only the cells it needs, so a
 * MAX_JSON_MB file costs the addresses, not the file. It runs in the preview's worker
 * (preview-worker.ts), never on the page's main thread.
 */

export interface SampleRow {
  readonly row: number
  readonly email: string
  readonly name: string
}

export class CsvWithoutEmail extends Error {}

/** Rows of the file shown as read in the preview (enough to see the columns were understood). */
const SAMPLE_ROWS = 5

const QUOTE = 34
const COMMA = 44
const LF = 10
const CR = 13
const BOM = 0xfeff

type State = "start" | "unquoted" | "quoted" | "quote-in-quoted"

export class CsvEmailScanner {
  /** One entry per data row, in order: its email cell as written ("" when empty). */
  readonly emails: Array<string> = []
  readonly sample: Array<SampleRow> = []
  private header = true
  private emailAt = -1
  private nameAt = -1
  private cells: Array<string> = []
  private column = 0
  private field = ""
  private state: State = "start"
  private recordHasContent = false
  private afterCr = false
  private first = true

  private keeps(): boolean {
    return this.header || this.column === this.emailAt || this.column === this.nameAt
  }

  private endField(): void {
    if (this.keeps()) this.cells[this.column] = this.field
    this.field = ""
    this.column++
    this.state = "start"
  }

  private endRecord(): void {
    if (this.recordHasContent) {
      if (this.header) this.readHeader()
      else this.addRow()
    }
    this.cells = []
    this.column = 0
    this.recordHasContent = false
  }

  private readHeader(): void {
    this.cells.forEach((raw, index) => {
      const name = raw.trim().toLowerCase()
      if (name === "email" && this.emailAt < 0) this.emailAt = index
      if (name === "name" && this.nameAt < 0) this.nameAt = index
    })
    if (this.emailAt < 0) throw new CsvWithoutEmail("The CSV header row has no email column")
    this.header = false
  }

  private addRow(): void {
    const email = this.cells[this.emailAt] ?? ""
    this.emails.push(email)
    if (this.sample.length < SAMPLE_ROWS) {
      this.sample.push({ row: this.emails.length, email, name: this.nameAt < 0 ? "" : (this.cells[this.nameAt] ?? "").trim() })
    }
  }

  /** Feeds the next chunk of text (a chunk may end anywhere, inside quotes too). */
  push(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (this.first) {
        this.first = false
        if (c === BOM) continue
      }
      if (this.afterCr) {
        this.afterCr = false
        if (c === LF) continue
      }
      if (this.state === "quoted") {
        if (c === QUOTE) this.state = "quote-in-quoted"
        else if (this.keeps()) this.field += text[i]
        continue
      }
      if (this.state === "quote-in-quoted") {
        if (c === QUOTE) {
          if (this.keeps()) this.field += "\""
          this.state = "quoted"
          continue
        }
        this.state = "unquoted"
      }
      if (c === COMMA) {
        this.recordHasContent = true
        this.endField()
      } else if (c === LF || c === CR) {
        this.afterCr = c === CR
        this.endField()
        this.endRecord()
      } else {
        this.recordHasContent = true
        if (c === QUOTE && this.state === "start") this.state = "quoted"
        else {
          this.state = "unquoted"
          if (this.keeps()) this.field += text[i]
        }
      }
    }
  }

  /** The file ended: its last record (without a final line break) counts too. */
  end(): void {
    if (this.recordHasContent || this.field !== "" || this.state === "quoted") {
      this.recordHasContent = true
      this.endField()
      this.endRecord()
    }
    if (this.header) throw new CsvWithoutEmail("The CSV is empty: a header row with an email column is required")
  }
}

export interface Duplicate {
  readonly row: number
  readonly email: string
  /** The earlier row with the same address (the import folds repeated addresses into it). */
  readonly firstRow: number
}

export interface Folded {
  /** Each address once (its first row's cell), as the import and its preview count them. */
  readonly unique: Array<string>
  /** The data row (from 1) of each entry of `unique`. */
  readonly uniqueRows: Array<number>
  readonly duplicateCount: number
  /** The first `max` rows whose address an earlier row already has. */
  readonly duplicates: Array<Duplicate>
}

/** Folds repeated addresses (any case, spaces around ignored: the API's rule) into their first row. */
export const foldAddresses = (emails: ReadonlyArray<string>, max: number): Folded => {
  const seen = new Map<string, number>()
  const unique: Array<string> = []
  const uniqueRows: Array<number> = []
  const duplicates: Array<Duplicate> = []
  let duplicateCount = 0
  emails.forEach((email, index) => {
    const address = email.trim().toLowerCase()
    const earlier = seen.get(address)
    if (earlier === undefined) {
      seen.set(address, index + 1)
      unique.push(email)
      uniqueRows.push(index + 1)
      return
    }
    duplicateCount++
    if (duplicates.length < max) duplicates.push({ row: index + 1, email, firstRow: earlier })
  })
  return { unique, uniqueRows, duplicateCount, duplicates }
}
