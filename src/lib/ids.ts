/**
 * Identifiers: a short prefix that tells what a thing is (`acc_`, `key_`, …) and 20 base62
 * characters from the CSPRNG (~119 bits), so ids are unguessable and safe in URLs and VERP.
 */
import { randomBytes } from "node:crypto"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** Random base62 text of `length` characters, without modulo bias (rejection sampling). */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

export const newId = (prefix: string): string => `${prefix}_${randomBase62(20)}`
