/**
 * Request-level limits of a send that need configuration or the clock (pure; the endpoint maps a
 * violation to its status): attachment sizes in decoded bytes (MB = 2^20, 413 with param
 * attachments) and the send_at rules (400): exactly one personalization, at most 90 days ahead,
 * and not in the past (up to 60 s of clock skew is tolerated and sends at once).
 */
import type { FullRequest } from "./request.ts"

export const decodedSize = (base64: string): number => {
  const compact = base64.replace(/[\r\n]/g, "")
  const padding = compact.endsWith("==") ? 2 : compact.endsWith("=") ? 1 : 0
  return (compact.length / 4) * 3 - padding
}

export interface SizeLimits {
  readonly maxAttachmentBytes: number
  readonly maxTotalBytes: number
}

/** One attachment as the size rules see it, whichever entry brought it (a JSON field, a MIME part). */
export interface AttachmentSize {
  readonly filename: string
  /** Decoded bytes. */
  readonly size: number
}

/** The API's 413 message (and a submission's 552) for the first attachment, or the total, over its limit. */
export const checkSizes = (attachments: ReadonlyArray<AttachmentSize>, limits: SizeLimits): string | null => {
  let total = 0
  for (const [i, { filename, size }] of attachments.entries()) {
    if (size > limits.maxAttachmentBytes) {
      return `attachments[${i}] (${filename}) is ${size} bytes; the limit is ${limits.maxAttachmentBytes} bytes per attachment (MAX_ATTACHMENT_MB)`
    }
    total += size
  }
  return total > limits.maxTotalBytes
    ? `attachments total ${total} bytes; the limit is ${limits.maxTotalBytes} bytes (MAX_TOTAL_ATTACHMENTS_MB)`
    : null
}

export const checkAttachmentSizes = (request: FullRequest, limits: SizeLimits): string | null =>
  checkSizes((request.attachments ?? []).map((a) => ({ filename: a.filename, size: decodedSize(a.content) })), limits)

export const SCHEDULE_HORIZON_MS = 90 * 86_400_000
export const SCHEDULE_SKEW_MS = 60_000

export const checkSchedule = (request: FullRequest, now: Date): { param: string; message: string } | null => {
  if (request.send_at === undefined) return null
  if (request.personalizations.length !== 1) {
    return { param: "personalizations", message: "personalizations must have exactly one item when send_at is given" }
  }
  const at = Date.parse(request.send_at)
  if (at > now.getTime() + SCHEDULE_HORIZON_MS) {
    return { param: "send_at", message: "send_at must be at most 90 days ahead" }
  }
  if (at < now.getTime() - SCHEDULE_SKEW_MS) {
    return { param: "send_at", message: "send_at is in the past" }
  }
  return null
}
