/**
 * Failed authentications per client address, so that a stranger cannot try tokens as fast as the
 * appliance answers (each try costs a digest and a database lookup: 2,000 wrong tokens took 1.9 s).
 * Past `limit` failures in a window of WINDOW_MS, the address is throttled until that window
 * ends: it guesses no more, but its customers keep working (behind a reverse proxy every client
 * shares one address). Its tokens are looked for in the key cache (no database cost); one the
 * cache does not know is looked up only when it was valid here recently (the key cache recognizes
 * it) or when the address's allowance grants one lookup — one per THROTTLED_LOOKUP_INTERVAL_MS; the
 * rest, and every token that fails, get 429 (src/http/auth.ts).
 *
 * The table is bounded (MAX_ADDRESSES) and kept per replica, as src/lib/fixed-windows.ts says why.
 * It is one table for every protocol that takes an API key (the HTTP API's Bearer tokens, SMTP
 * submission's AUTH): `AuthFailures`, so that alternating protocols gains a guesser nothing.
 * IPv6 clients are counted by their /64, the block one subscriber usually holds, or a single host
 * could rotate through its addresses.
 */
import * as net from "node:net"
import { Effect } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { type FixedWindow, makeFixedWindows } from "../lib/fixed-windows.ts"

export const WINDOW_MS = 60_000
/** Far more addresses than fail at once in any honest minute; about 100 bytes each. */
export const MAX_ADDRESSES = 10_000
/**
 * A throttled address's database lookups of tokens the cache does not know: one a second, whatever
 * it sends — a new customer's key behind a shared address gets served within a few tries, and a
 * flood of wrong tokens costs the database one statement a second (2,000 of them took 1.9 s of
 * lookups before the throttle).
 */
export const THROTTLED_LOOKUP_INTERVAL_MS = 1_000

interface Failures extends FixedWindow {
  /** When a throttled address may next have an unknown token looked up. */
  nextLookupAt: number
}

/** The part of an address one client holds: an IPv4 address, or an IPv6 address's /64. */
export const clientOf = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped !== null) return mapped[1]!
  const bare = address.split("%")[0]!
  if (!net.isIPv6(bare)) return address
  const [head = "", tail] = bare.split("::")
  const groups = (part: string | undefined) =>
    part === undefined || part === "" ? [] : part.split(":").flatMap((g) => (g.includes(".") ? ["0", "0"] : [g]))
  const before = groups(head)
  const after = groups(tail)
  const zeros = Array<string>(8 - before.length - after.length).fill("0")
  const all = tail === undefined ? before : [...before, ...zeros, ...after]
  return `${all.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(":")}::/64`
}

export const makeAuthFailures = (limit: number, maxAddresses = MAX_ADDRESSES) => {
  const windows = makeFixedWindows<Failures>({ windowMs: WINDOW_MS, maxEntries: maxAddresses, open: (start) => ({ start, count: 0, nextLookupAt: start }) })
  const current = (address: string, now: number) => windows.current(clientOf(address), now)
  return {
    /** When `address` may try again (ms since the epoch), or undefined when it may now. */
    refusedUntil: (address: string, now: number): number | undefined => {
      const entry = current(address, now)
      return entry !== undefined && entry.count >= limit ? entry.start + WINDOW_MS : undefined
    },
    record: (address: string, now: number): void => windows.count(clientOf(address), now),
    /** Whether a throttled `address` may have one unknown token looked up now (and takes it if so). */
    takeLookup: (address: string, now: number): boolean => {
      const entry = current(address, now)
      if (entry === undefined || entry.count < limit) return true
      if (now < entry.nextLookupAt) return false
      entry.nextLookupAt = now + THROTTLED_LOOKUP_INTERVAL_MS
      return true
    },
    size: windows.size
  }
}

/** The appliance's one table of failed authentications (HERALD_AUTH_FAILURES_PER_MIN), shared by every protocol. */
export class AuthFailures extends Effect.Service<AuthFailures>()("herald/AuthFailures", {
  effect: Effect.map(AppConfig, (config) => ({ limit: config.authFailuresPerMin, ...makeAuthFailures(config.authFailuresPerMin) }))
}) {}

/** The layer of the one table (the same constant everywhere, so it is built once per appliance). */
export const AuthFailuresLive = AuthFailures.Default
