/**
 * Webhook signatures (spec "Delivery of events"): `X-Herald-Signature: sha256=<hex HMAC-SHA256(secret,
 * "<timestamp>.<raw body>")>` with `X-Herald-Timestamp` the ISO time of the attempt. Receivers compare
 * in constant time and refuse timestamps older than five minutes (verifySignature does both).
 */
import { createHmac, timingSafeEqual } from "node:crypto"

export const signPayload = (secret: string, timestamp: string, rawBody: string): string =>
  `sha256=${createHmac("sha256", secret).update(`${timestamp}.${rawBody}`, "utf8").digest("hex")}`

export const FRESHNESS_MS = 5 * 60_000

export const verifySignature = (
  secret: string,
  timestamp: string,
  rawBody: string,
  header: string,
  now: Date,
  toleranceMs = FRESHNESS_MS
): boolean => {
  const at = Date.parse(timestamp)
  if (Number.isNaN(at) || Math.abs(now.getTime() - at) > toleranceMs) return false
  const expected = Buffer.from(signPayload(secret, timestamp, rawBody))
  const given = Buffer.from(header)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
