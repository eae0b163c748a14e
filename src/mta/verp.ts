/**
 * VERP return paths (Variable Envelope Return Path): the envelope sender of each delivery encodes
 * its id, so a bounce arriving at the MX listener maps back to the exact message and recipient.
 * `b-<delivery id>-<tag>@<return-path domain>`; the tag (first 8 hex of an HMAC) makes forged
 * bounces for made-up ids fail the check.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

const tag = (deliveryId: string, secret: string) => createHmac("sha256", secret).update(deliveryId).digest("hex").slice(0, 8)

export const encodeVerp = (deliveryId: string, domain: string, secret: string): string =>
  `b-${deliveryId}-${tag(deliveryId, secret)}@${domain}`

export const decodeVerp = (address: string, secret: string): string | null => {
  const at = address.lastIndexOf("@")
  if (at < 0) return null
  const local = address.slice(0, at)
  const match = /^b-([A-Za-z0-9_]+)-([0-9a-f]{8})$/i.exec(local)
  if (match === null) return null
  const [, id, given] = match
  const expected = Buffer.from(tag(id!, secret))
  const actual = Buffer.from(given!.toLowerCase())
  return expected.length === actual.length && timingSafeEqual(expected, actual) ? id! : null
}
