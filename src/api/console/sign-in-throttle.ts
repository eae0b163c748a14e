/**
 * Failed console sign-ins, counted so that a stranger cannot guess passwords as fast as scrypt
 * answers (issue 28): per client address, and per account (the email as typed, lower-cased,
 * whether or not an account has it — counting only real accounts would tell a guesser which
 * emails exist by which ones get 429). Past its limit in a window of WINDOW_MS, an address or an
 * email is refused with 429 until that window ends, without a password check.
 *
 * These counters are their own: never the Bearer authentication failures (src/http/auth-failures.ts),
 * so a guesser at the console locks no API client out of /v1 from behind the same address.
 * Each table is bounded (MAX_ENTRIES) and kept per replica, as src/lib/fixed-windows.ts says why.
 */
import { clientOf } from "../../http/auth-failures.ts"
import { type FixedWindow, makeFixedWindows } from "../../lib/fixed-windows.ts"

/** The window failures are counted in. */
export const WINDOW_MS = 15 * 60_000
/**
 * Failed sign-ins one email may have in a window. Ten guesses a quarter-hour is nothing against an
 * 8-character password, and a person who mistyped can wait out the window.
 */
export const ACCOUNT_FAILURES_PER_WINDOW = 10
/** Addresses and emails each table remembers; about 100 bytes each. */
export const MAX_ENTRIES = 10_000

/** A fixed-window failure counter over keys the caller names (src/lib/fixed-windows.ts). */
export const makeFailureCounter = (limit: number, windowMs = WINDOW_MS, maxEntries = MAX_ENTRIES) => {
  const windows = makeFixedWindows<FixedWindow>({ windowMs, maxEntries, open: (start) => ({ start, count: 0 }) })
  return {
    /** When `key` may try again (ms since the epoch), or undefined when it may now. */
    refusedUntil: (key: string, now: number): number | undefined => {
      const entry = windows.current(key, now)
      return entry !== undefined && entry.count >= limit ? entry.start + windowMs : undefined
    },
    record: windows.count,
    forget: windows.forget
  }
}

/** The two counters of console sign-in: per client (an IPv6 /64 counts as one) and per email. */
export const makeSignInThrottle = (failuresPerAddress: number) => {
  const addresses = makeFailureCounter(failuresPerAddress)
  const emails = makeFailureCounter(ACCOUNT_FAILURES_PER_WINDOW)
  const emailKey = (email: string) => email.trim().toLowerCase()
  return {
    /** When this sign-in may be tried (ms since the epoch, the later of the two), or undefined: now. */
    refusedUntil: (address: string, email: string, now: number): number | undefined => {
      const byAddress = addresses.refusedUntil(clientOf(address), now)
      const byEmail = emails.refusedUntil(emailKey(email), now)
      if (byAddress === undefined) return byEmail
      return byEmail === undefined ? byAddress : Math.max(byAddress, byEmail)
    },
    failed: (address: string, email: string, now: number): void => {
      addresses.record(clientOf(address), now)
      emails.record(emailKey(email), now)
    },
    /** A right password clears its email's failures (not the address's: others may guess from there). */
    succeeded: (email: string): void => emails.forget(emailKey(email))
  }
}
