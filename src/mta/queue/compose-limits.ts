/**
 * What the MTA checks of a stored message before composing it (src/mta/queue/StoredMessage.ts
 * decodes with it; the composer, src/mta/compose/compose.ts, builds what passes). Composing costs
 * memory and main-thread time by the number of parts and header fields, not only by bytes: 10,000
 * one-byte attachments took 35 MB and a second, 300,000 of them (12 MB of JSON) ran the process out
 * of heap. So a stored message is checked with `composePartsProblem` before it is composed —
 * whatever the version that accepted it, or whatever wrote the row. It lives with the queue so the
 * stored message's decoding needs nothing from the composer (which imports the queue, not the other way).
 */
/** What one message may hold to be composed (each well above what the sending API accepts). */
export interface ComposeLimits {
  readonly maxAttachments: number
  /** Custom header fields, message-level and personalization-level together. */
  readonly maxHeaderFields: number
  /** UTF-8 bytes of the subject, the addresses and the custom header fields' names and values. */
  readonly maxHeaderBytes: number
}

/**
 * Measured: 1,000 attachments compose in about 0.3 s and 8 MB, 1,000 header fields in a few ms,
 * 1 MB of header text in about 40 ms. Postfix refuses a header of more than 100 KB by default
 * (header_size_limit), so no message that could be delivered comes near the header bound.
 */
export const COMPOSE_LIMITS: ComposeLimits = { maxAttachments: 1_000, maxHeaderFields: 1_000, maxHeaderBytes: 1_048_576 }

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const textBytes = (value: unknown): number => (typeof value === "string" ? Buffer.byteLength(value) : 0)

const addressBytes = (list: unknown): number =>
  Array.isArray(list) ? list.reduce((n: number, a) => n + (isRecord(a) ? textBytes(a["email"]) + textBytes(a["name"]) : 0), 0) : 0

/**
 * Why a stored message (read as unknown: a row of any version, or written by anything) cannot be
 * composed within `limits`, or null: `message` is its message-level part (from, subject, headers,
 * attachments), `personalization` the recipients' part. Only counts and sizes, each in one pass:
 * the check is cheap on the very content it refuses.
 */
export const composePartsProblem = (message: unknown, personalization: unknown, limits: ComposeLimits = COMPOSE_LIMITS): string | null => {
  if (!isRecord(message)) return "the stored request is not a JSON object"
  if (!isRecord(personalization)) return "the stored request has no personalization"
  const attachments = message["attachments"] ?? []
  if (!Array.isArray(attachments)) return "the stored request's attachments are not a list"
  if (attachments.length > limits.maxAttachments) {
    return `the message has ${attachments.length} attachments; at most ${limits.maxAttachments} can be composed`
  }
  const headerSets = [message["headers"] ?? {}, personalization["headers"] ?? {}]
  if (!headerSets.every(isRecord)) return "the stored request's headers are not an object"
  let fields = 0
  let bytes = textBytes(message["subject"]) + textBytes(personalization["subject"]) + addressBytes(personalization["to"]) +
    addressBytes(personalization["cc"])
  for (const headers of headerSets as Array<Record<string, unknown>>) {
    for (const name in headers) {
      fields += 1
      if (fields > limits.maxHeaderFields) break
      bytes += Buffer.byteLength(name) + textBytes(headers[name])
    }
  }
  if (fields > limits.maxHeaderFields) return `the message has more than ${limits.maxHeaderFields} custom header fields, the most that can be composed`
  if (bytes > limits.maxHeaderBytes) return `the message's headers hold ${bytes} bytes; at most ${limits.maxHeaderBytes} can be composed`
  return null
}

/** `composePartsProblem` of a whole single-personalization request (the form older versions stored). */
export const composeProblem = (content: unknown, limits: ComposeLimits = COMPOSE_LIMITS): string | null => {
  if (!isRecord(content)) return "the stored request is not a JSON object"
  const personalization = Array.isArray(content["personalizations"]) ? content["personalizations"][0] : undefined
  return composePartsProblem(content, personalization, limits)
}
