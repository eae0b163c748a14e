/**
 * The fields of a small HTML form body, as RFC 8058 §3.1 lets a mail client send the one-click
 * unsubscribe: `application/x-www-form-urlencoded` or `multipart/form-data`. Only what a form of a
 * few fields needs (the route bounds the body to a few KB before it gets here): no files, no
 * nested parts; a part's bytes are read as UTF-8.
 */

/** The fields of `body` by name (the first value of each); null for any other content type. */
export const formFields = (contentType: string | undefined, body: Buffer): ReadonlyMap<string, string> | null => {
  const type = (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase()
  if (type === "application/x-www-form-urlencoded") return urlEncodedFields(body.toString("utf8"))
  if (type === "multipart/form-data") {
    const boundary = parameterOf(contentType ?? "", "boundary")
    return boundary === null ? null : multipartFields(body.toString("utf8"), boundary)
  }
  return null
}

const firstOnly = (pairs: Iterable<readonly [string, string]>): ReadonlyMap<string, string> => {
  const fields = new Map<string, string>()
  for (const [name, value] of pairs) if (!fields.has(name)) fields.set(name, value)
  return fields
}

const urlEncodedFields = (text: string): ReadonlyMap<string, string> => firstOnly(new URLSearchParams(text))

/** A parameter of a header value (`boundary=…`, `name="…"`), quoted or not. */
const parameterOf = (header: string, name: string): string | null => {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]+))`, "i").exec(header)
  if (match === null) return null
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : match[2]!
}

const multipartFields = (text: string, boundary: string): ReadonlyMap<string, string> => {
  const pairs: Array<readonly [string, string]> = []
  // Parts sit between delimiter lines; the preamble before the first and the epilogue after the close are dropped.
  const pieces = text.split(`--${boundary}`).slice(1)
  for (const piece of pieces) {
    if (piece.startsWith("--")) break
    const part = piece.replace(/^[ \t]*\r?\n/, "")
    const end = /\r?\n\r?\n/.exec(part)
    if (end === null) continue
    const headers = part.slice(0, end.index)
    const disposition = headers.split(/\r?\n/).find((line) => /^content-disposition\s*:/i.test(line))
    const name = disposition === undefined ? null : parameterOf(disposition, "name")
    if (name === null) continue
    pairs.push([name, part.slice(end.index + end[0].length).replace(/\r?\n$/, "")])
  }
  return firstOnly(pairs)
}
