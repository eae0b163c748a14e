/** RFC 4180 CSV: fields with a comma, quote or line break are quoted, quotes doubled; CRLF rows. */
const field = (value: unknown): string => {
  const text = value === null || value === undefined ? "" : String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text
}

export const toCsv = <Row extends object>(columns: ReadonlyArray<keyof Row & string>, rows: ReadonlyArray<Row>): string =>
  [columns.map(field).join(","), ...rows.map((row) => columns.map((c) => field(row[c])).join(","))].join("\r\n") + "\r\n"
