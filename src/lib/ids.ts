/**
 * Identifiers: a short prefix that tells what a thing is (`acc_`, `key_`, …) and 20 base62
 * characters from the CSPRNG (~119 bits), so ids are unguessable and safe in URLs and VERP.
 */
import { randomFillSync } from "node:crypto"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/**
 * CSPRNG bytes are drawn a pool at a time: a message accepted or received takes several ids, and
 * a `randomBytes` call per id (a call into OpenSSL and a fresh Buffer) showed in every hot path's
 * profile. Each byte is used once.
 */
const pool = Buffer.alloc(4096)
let offset = pool.length

const nextByte = () => {
  if (offset === pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  return pool[offset++]!
}

/** Random base62 text of `length` characters, without modulo bias (bytes ≥ 248 are rejected). */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    const byte = nextByte()
    if (byte < 248) out += ALPHABET[byte % 62]
  }
  return out
}

export const newId = (prefix: string): string => `${prefix}_${randomBase62(20)}`
