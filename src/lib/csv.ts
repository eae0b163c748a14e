/**
 * RFC 4180 CSV: fields with a comma, quote or line break are quoted, quotes doubled; CRLF rows.
 *
 * Formula injection: a spreadsheet opening the file runs a cell that begins with `=`, `+`, `-` or
 * `@` as a formula (and strips a leading tab or carriage return before looking), and outsiders
 * choose some of these cells' text (a recipient's DSN diagnostic lands in smtp_reply). Such a cell
 * is prefixed with `'`, which spreadsheets show as text, whatever the column.
 */
const FORMULA_START = /^[=+\-@\t\r]/

const field = (value: unknown): string => {
  const raw = value === null || value === undefined ? "" : String(value)
  const text = FORMULA_START.test(raw) ? `'${raw}` : raw
  return /[",\r\n]/.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text
}

/** One CSV line (with its CRLF) of `row`'s `columns`. */
export const csvRow = <Row extends object>(columns: ReadonlyArray<keyof Row & string>, row: Row): string =>
  columns.map((c) => field(row[c])).join(",") + "\r\n"

/** The header line (with its CRLF). */
export const csvHeader = (columns: ReadonlyArray<string>): string => columns.map(field).join(",") + "\r\n"

export const toCsv = <Row extends object>(columns: ReadonlyArray<keyof Row & string>, rows: ReadonlyArray<Row>): string =>
  csvHeader(columns) + rows.map((row) => csvRow(columns, row)).join("")
