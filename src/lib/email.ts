/**
 * A practical RFC 5321 mailbox check (`local@domain`), the one used everywhere an address is
 * accepted: dot-atom or quoted local part of at most 64 octets, a domain of LDH labels of at most
 * 63 characters with a top-level label that is not all digits, 254 characters in total (RFC 5321
 * §4.5.3.1 path limit minus the angle brackets). Display names and comments are not addresses.
 * A quoted local part may not hold `<` or `>` even though RFC 5321 allows them: the SMTP client
 * (nodemailer) refuses such an envelope address outright, so the message could never leave and
 * would be retried until it expired.
 */
import { Schema } from "effect"

const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
const DOT_ATOM = new RegExp(`^${ATEXT}+(\\.${ATEXT}+)*$`)
const QUOTED = /^"([\x20\x21\x23-\x3b\x3d\x3f-\x5b\x5d-\x7e]|\\[\x20-\x3b\x3d\x3f-\x7e])*"$/
const LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/

/** A DNS name of LDH labels (RFC 1123), at least two labels, at most 253 characters. */
export const isDomainName = (value: string): boolean => {
  if (value.length > 253) return false
  const labels = value.split(".")
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels[labels.length - 1]!)
}

export const isEmailAddress = (value: string): boolean => {
  if (value.length > 254) return false
  const at = value.lastIndexOf("@")
  if (at < 1 || at === value.length - 1) return false
  const local = value.slice(0, at)
  const domain = value.slice(at + 1)
  if (local.length > 64 || !(DOT_ATOM.test(local) || QUOTED.test(local))) return false
  return isDomainName(domain)
}

/** The domain part of an address, lower case. */
export const domainOf = (address: string): string => address.slice(address.lastIndexOf("@") + 1).toLowerCase()

export const EmailAddress = Schema.String.pipe(
  // The length is part of the check (254); the annotation shows it in the OpenAPI documents.
  Schema.filter((s) => isEmailAddress(s) || "must be a valid email address (local@domain)", { jsonSchema: { maxLength: 254 } }),
  Schema.annotations({ identifier: "EmailAddress", format: "email", description: "An email address" })
)
