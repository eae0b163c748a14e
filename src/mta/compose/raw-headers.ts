/**
 * The header block of a message kept as written (SMTP submission's `raw` stored form): its fields
 * read, some removed, others put in front — never anything else touched, so the parts, the
 * attachments and every other header reach the recipient byte for byte as the client wrote them.
 * Fields are read line by line (a line starting with a space or a tab continues the field before
 * it); the header ends at the first empty line, or with the message when there is none.
 */

/** One header field: its lower-cased name and its bytes in the message, line ends and folds included. */
export interface HeaderField {
  readonly name: string
  readonly start: number
  readonly end: number
}

const LF = 0x0a
const CR = 0x0d

/** The header fields of `raw`, and where its header block ends (the empty line's start, or the end). */
export const headerFields = (raw: Buffer): { readonly fields: ReadonlyArray<HeaderField>; readonly headerEnd: number } => {
  const fields: Array<{ name: string; start: number; end: number }> = []
  let at = 0
  while (at < raw.length) {
    const lf = raw.indexOf(LF, at)
    const end = lf === -1 ? raw.length : lf + 1
    const first = raw[at]
    // The empty line that ends the header (CRLF or a bare LF).
    if (first === LF || (first === CR && raw[at + 1] === LF)) return { fields, headerEnd: at }
    const last = fields[fields.length - 1]
    if ((first === 0x20 || first === 0x09) && last !== undefined) {
      last.end = end
    } else {
      const colon = raw.indexOf(0x3a, at)
      const name = colon === -1 || colon >= end ? "" : raw.toString("latin1", at, colon).trim().toLowerCase()
      fields.push({ name, start: at, end })
    }
    at = end
  }
  return { fields, headerEnd: raw.length }
}

/** Every value of the header field `name` (lower case), unfolded and trimmed, as Latin-1 text. */
export const headerValues = (raw: Buffer, fields: ReadonlyArray<HeaderField>, name: string): ReadonlyArray<string> =>
  fields.filter((f) => f.name === name).map((f) => {
    const line = raw.toString("latin1", f.start, f.end)
    return line.slice(line.indexOf(":") + 1).replace(/\r?\n(?=[ \t])/g, "").trim()
  })

/** `raw` without the header fields `drop` names (lower-cased names); the rest, body included, as it was. */
export const withoutFields = (raw: Buffer, drop: (name: string) => boolean): Buffer => {
  const { fields } = headerFields(raw)
  if (!fields.some((f) => drop(f.name))) return raw
  const kept: Array<Buffer> = []
  let from = 0
  for (const field of fields) {
    if (!drop(field.name)) continue
    if (field.start > from) kept.push(raw.subarray(from, field.start))
    from = field.end
  }
  kept.push(raw.subarray(from))
  return Buffer.concat(kept)
}

/**
 * What a submitted message may not carry to its recipients: Herald's own fields (its Message-ID
 * replaces the client's; `X-Herald-*` are the appliance's), the blind copies' addresses, a return
 * path (the envelope's is Herald's VERP address), and the Idempotency-Key meant for Herald alone.
 */
export const isSubmitterOnlyField = (name: string): boolean =>
  name === "bcc" || name === "return-path" || name === "idempotency-key" || name === "message-id" || name.startsWith("x-herald-")

export interface RawComposeOptions {
  readonly messageId: string
  readonly sendingDomain: string
  readonly date: Date
  readonly channel: string
}

/**
 * The stored MIME as it goes out, ready to be signed: the fields a submitter may not set removed
 * (again: a row written before that rule is held to it), Herald's Message-ID, X-Herald-Message-Id
 * and X-Herald-Channel put in front, and a Date when the client gave none (RFC 6409 §8.3).
 */
export const composeRaw = (mime: Buffer, options: RawComposeOptions): Buffer => {
  const kept = withoutFields(mime, isSubmitterOnlyField)
  const hasDate = headerFields(kept).fields.some((f) => f.name === "date")
  const added = [
    `Message-ID: <${options.messageId}@${options.sendingDomain}>`,
    `X-Herald-Message-Id: ${options.messageId}`,
    `X-Herald-Channel: ${options.channel}`,
    ...(hasDate ? [] : [`Date: ${options.date.toUTCString().replace("GMT", "+0000")}`])
  ]
  return Buffer.concat([Buffer.from(added.join("\r\n") + "\r\n", "latin1"), kept])
}
