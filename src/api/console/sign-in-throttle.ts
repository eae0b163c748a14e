/**
 * Failed console sign-ins, counted so that a stranger cannot guess passwords as fast as scrypt
 * answers (issue 28): per client address, and per account (the email as typed, lower-cased,
 * whether or not an account has it — counting only real accounts would tell a guesser which
 * emails exist by which ones get 429). Past its limit in a window of WINDOW_MS, an address or an
 * email is refused with 429 until that window ends, without a password check.
 *
 * These counters are their own: never the Bearer authentication failures (src/http/auth-failures.ts),
 * so a guesser at the console locks no API client out of /v1 from behind the same address.
 * They are the whole appliance's, in PostgreSQL (src/db/counter-windows.ts, issue 33): N
 * processes or replicas on one database allow ten guesses at an email, not ten each. A sign-in
 * already costs a database read and an scrypt check, so a statement more is nothing to it.
 */
import { Effect } from "effect"
import { clientOf } from "../../http/auth-failures.ts"
import { countFailures, forgetFailures, readWindows } from "../../db/counter-windows.ts"

/** The window failures are counted in. */
export const WINDOW_MS = 15 * 60_000
/**
 * Failed sign-ins one email may have in a window. Ten guesses a quarter-hour is nothing against an
 * 8-character password, and a person who mistyped can wait out the window.
 */
export const ACCOUNT_FAILURES_PER_WINDOW = 10

/** The two counters of console sign-in: per client (an IPv6 /64 counts as one) and per email. */
export const makeSignInThrottle = (failuresPerAddress: number) => {
  const addressHolder = (address: string) => `signin-address:${clientOf(address)}`
  const emailHolder = (email: string) => `signin-email:${email.trim().toLowerCase()}`
  return {
    /** When this sign-in may be tried (ms since the epoch, the later of the two), or undefined: now. */
    refusedUntil: (address: string, email: string, now: number) =>
      readWindows([addressHolder(address), emailHolder(email)], now).pipe(
        Effect.map((windows) => {
          const refused = windows.filter((w) =>
            w.count >= (w.holder === addressHolder(address) ? failuresPerAddress : ACCOUNT_FAILURES_PER_WINDOW)
          )
          return refused.length === 0 ? undefined : Math.max(...refused.map((w) => w.end))
        })
      ),
    failed: (address: string, email: string, now: number) =>
      Effect.asVoid(countFailures([addressHolder(address), emailHolder(email)], now, WINDOW_MS)),
    /** A right password clears its email's failures (not the address's: others may guess from there). */
    succeeded: (email: string) => forgetFailures(emailHolder(email))
  }
}
