/**
 * A mail to the unsubscribe address (`unsubscribe@{bounce domain}`, the mailto of every bulk
 * message's List-Unsubscribe: src/bulk/public/unsubscribe-link.ts). The token is in the Subject,
 * as the mailto named it; mail clients may prefix it (`Re:`, `Fwd:`), fold it or wrap it in
 * brackets, so every token-shaped word of the Subject is a candidate — the processor acts on the
 * first one that opens, and on nothing else the message says.
 *
 * Only the header is read (at most HEADER_BYTES, in the processor's thread: a mail to this
 * address needs none of the report parsers), so a large message costs no more than a small one.
 */
import { readMail } from "./mail.ts"
import type { Understood } from "./types.ts"

/** The most of a message read to find its Subject. */
const HEADER_BYTES = 64 * 1024
/** Candidates kept: a Subject stuffed with token-shaped words does not buy more MAC checks. */
const MAX_CANDIDATES = 4
/**
 * The longest word taken as a candidate: no public token is longer (bulk's MAX_TOKEN_LENGTH in
 * src/bulk/public/tokens.ts refuses longer ones before any work; test/unit/unsubscribe-requests.test.ts
 * keeps the two equal). Inbound does not import bulk (DESIGN "Layout"), so the bound is restated.
 */
export const MAX_CANDIDATE_LENGTH = 512
/** A public token: base64url payload, a dot, a 16-byte tag (22 base64url characters). */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{22}$/

/** Whether the envelope names the unsubscribe address `local@bounceDomain`. */
export const isUnsubscribeRequest = (rcptTo: ReadonlyArray<string>, local: string, bounceDomain: string): boolean => {
  const address = `${local}@${bounceDomain}`.toLowerCase()
  return rcptTo.some((r) => r.toLowerCase() === address)
}

/** The token-shaped words of `subject`, in order, brackets and trailing punctuation taken off. */
export const tokenCandidates = (subject: string): ReadonlyArray<string> =>
  subject
    .split(/[\s<>()[\]{}"',;:]+/)
    .map((word) => word.replace(/\.+$/, ""))
    .filter((word) => word.length <= MAX_CANDIDATE_LENGTH && TOKEN_SHAPE.test(word))
    .slice(0, MAX_CANDIDATES)

/** The header of `raw` alone, ended by its empty line (or cut at HEADER_BYTES). */
const headerOf = (raw: Buffer): Buffer => {
  const head = raw.subarray(0, HEADER_BYTES)
  const crlf = head.indexOf("\r\n\r\n")
  const lf = head.indexOf("\n\n")
  const ends = [crlf, lf].filter((i) => i >= 0)
  return ends.length === 0 ? head : head.subarray(0, Math.min(...ends))
}

export const understandUnsubscribeRequest = (raw: Buffer): Understood => {
  let subject = ""
  try {
    subject = readMail(headerOf(raw)).subject ?? ""
  } catch {
    // An unreadable header names no token: the request is recorded and ignored.
  }
  return { kind: "unsubscribe", tokens: tokenCandidates(subject) }
}
