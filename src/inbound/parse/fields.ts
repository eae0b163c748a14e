/**
 * RFC 5322-style field blocks, as found in message headers, `message/delivery-status` (RFC 3464:
 * one per-message block, then one block per recipient, separated by blank lines) and
 * `message/feedback-report` (RFC 5965). Pure and tolerant: CR, LF and CRLF line ends, folded lines,
 * and stray lines without a colon (skipped) all occur in the corpus.
 */
import type { OriginalMessage } from "./types.ts"

/** Field names lower-cased; a repeated field keeps every value in order. */
export type Fields = ReadonlyMap<string, ReadonlyArray<string>>

const splitLines = (text: string) => text.split(/\r\n|\r|\n/)

/** One field block: the lines up to the first blank line. */
export const parseFields = (text: string): Fields => parseFieldBlocks(text)[0] ?? new Map()

/** Every blank-line-separated block of `text`, in order (empty blocks dropped). */
export const parseFieldBlocks = (text: string): ReadonlyArray<Fields> => {
  const blocks: Array<Map<string, Array<string>>> = []
  let current: Map<string, Array<string>> | null = null
  let last: { name: string; index: number } | null = null
  for (const line of splitLines(text)) {
    if (line.trim() === "") {
      current = null
      last = null
      continue
    }
    if (/^[ \t]/.test(line) && current !== null && last !== null) {
      const values = current.get(last.name)!
      values[last.index] = `${values[last.index]} ${line.trim()}`
      continue
    }
    const colon = line.indexOf(":")
    if (colon <= 0 || /\s/.test(line.slice(0, colon).trim()) === true) continue
    if (current === null) {
      current = new Map()
      blocks.push(current)
    }
    const name = line.slice(0, colon).trim().toLowerCase()
    const values = current.get(name) ?? []
    values.push(line.slice(colon + 1).trim())
    current.set(name, values)
    last = { name, index: values.length - 1 }
  }
  return blocks
}

/** The first value of `name`, or null. */
export const field = (fields: Fields, name: string): string | null => fields.get(name.toLowerCase())?.[0] ?? null

/** `<abc@host>` → `abc@host`; null stays null. */
export const stripAngles = (value: string | null): string | null => {
  if (value === null) return null
  const inside = /<([^>]*)>/.exec(value)
  const id = (inside === null ? value : inside[1]!).trim()
  return id === "" ? null : id
}

/** The header block of a message (everything before the first blank line). */
export const headerBlock = (message: string): string => {
  const end = /\r?\n\r?\n|\r\r/.exec(message)
  return end === null ? message : message.slice(0, end.index)
}

/**
 * RFC 2047 encoded words (`=?UTF-8?B?…?=`, `=?iso-8859-1?Q?…?=`) in a header value, decoded with
 * the platform's TextDecoder; whitespace between two encoded words is dropped (RFC 2047 §6.2).
 * A word in an unknown charset is left as it came.
 */
export const decodeWords = (value: string): string =>
  value.replace(/\?=\s+=\?/g, "?==?").replace(/=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g, (word, charset: string, encoding: string, text: string) => {
    try {
      const bytes = encoding.toUpperCase() === "B"
        ? Buffer.from(text, "base64")
        : Buffer.from(
          text.replace(/_/g, " ").replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
          "latin1"
        )
      return new TextDecoder(charset.split("*")[0]!).decode(bytes)
    } catch {
      return word
    }
  })

/** Identity of a returned or enclosed original, read from its headers (or its whole text). */
export const originalFromHeaders = (messageOrHeaders: string): OriginalMessage => {
  const fields = parseFields(headerBlock(messageOrHeaders))
  return {
    messageId: stripAngles(field(fields, "message-id")),
    heraldMessageId: field(fields, "x-herald-message-id"),
    subject: decodeOrNull(field(fields, "subject"))
  }
}

const decodeOrNull = (value: string | null) => (value === null ? null : decodeWords(value))

export const noOriginal: OriginalMessage = { messageId: null, heraldMessageId: null, subject: null }
