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
 * The counts are the whole appliance's, in PostgreSQL (counter-windows.ts, issue 33): N processes
 * or replicas on one database allow a guesser what one would, and the allowance is one lookup a
 * second for all of them. Each process keeps a mirror of the windows it has read or written
 * (bounded: MAX_ADDRESSES), so that a throttled address costs no statement until its next lookup
 * is due: every failure is one upsert, and a token the key cache does not know asks the database
 * whether the address may have it looked up (one statement before the lookup it already costs).
 * It is one table for every protocol that takes an API key (the HTTP API's Bearer tokens, SMTP
 * submission's AUTH, /metrics' token): `AuthFailures`, so that alternating protocols gains a
 * guesser nothing.
 * IPv6 clients are counted by their /64, the block one subscriber usually holds, or a single host
 * could rotate through its addresses.
 */
import * as net from "node:net"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { countFailures, type FailureWindow, takeLookup } from "../db/counter-windows.ts"

export const WINDOW_MS = 60_000
/** The mirror's bound: far more addresses than fail at once in any honest minute; about 100 bytes each. */
export const MAX_ADDRESSES = 10_000
/**
 * A throttled address's database lookups of tokens the cache does not know: one a second, whatever
 * it sends — a new customer's key behind a shared address gets served within a few tries, and a
 * flood of wrong tokens costs the database one statement a second (2,000 of them took 1.9 s of
 * lookups before the throttle).
 */
export const THROTTLED_LOOKUP_INTERVAL_MS = 1_000

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

/** The holder of an address's failures in `counter_windows`. */
const holderOf = (address: string) => `api:${clientOf(address)}`

/** The windows this process last read or wrote, by holder: at most `maxEntries`, the oldest written first out. */
const makeMirror = (maxEntries: number) => {
  const table = new Map<string, FailureWindow>()
  return {
    get: (holder: string, now: number): FailureWindow | undefined => {
      const window = table.get(holder)
      if (window === undefined || window.end > now) return window
      table.delete(holder)
      return undefined
    },
    /** Keeps `answered` (a statement's answer); one answered before a later one never moves the count back. */
    set: (holder: string, answered: FailureWindow | undefined): void => {
      const known = table.get(holder)
      table.delete(holder)
      if (answered === undefined) return
      const window = known === undefined || known.end !== answered.end ? answered : { ...answered, count: Math.max(known.count, answered.count) }
      if (table.size >= maxEntries) table.delete(table.keys().next().value!)
      table.set(holder, window)
    },
    size: () => table.size
  }
}

export const makeAuthFailures = (sql: SqlClient.SqlClient, limit: number, maxAddresses = MAX_ADDRESSES) => {
  const mirror = makeMirror(maxAddresses)
  const database = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
  return {
    /** When `address` may try again (ms since the epoch), or undefined when it may now, as this process last saw its window. */
    refusedUntil: (address: string, now: number): number | undefined => {
      const window = mirror.get(holderOf(address), now)
      return window !== undefined && window.count >= limit ? window.end : undefined
    },
    /**
     * Counts a failure of `address` for the whole appliance; returns its window after it (the
     * count says whether this failure was past the limit).
     */
    record: (address: string, now: number) =>
      database(countFailures([holderOf(address)], now, WINDOW_MS)).pipe(
        Effect.map(([window]) => {
          mirror.set(holderOf(address), window)
          return window!
        })
      ),
    /**
     * Whether a token of `address` that the key cache does not know may be looked up now: yes
     * under the limit; at it, only with the `allowance` (the API's, not SMTP's) when the next
     * lookup is due, which this takes. Asks the database unless this process already knows the
     * address is throttled with no lookup due.
     */
    mayLookUp: (address: string, now: number, allowance: boolean) => {
      const holder = holderOf(address)
      const known = mirror.get(holder, now)
      if (known !== undefined && known.count >= limit) {
        if (!allowance || now < known.nextLookupAt) return Effect.succeed(false)
        // This process asks for the allowance once an interval, not once per request waiting for the answer.
        mirror.set(holder, { ...known, nextLookupAt: now + THROTTLED_LOOKUP_INTERVAL_MS })
      }
      return database(takeLookup(holder, now, limit, allowance ? THROTTLED_LOOKUP_INTERVAL_MS : undefined)).pipe(
        Effect.map(({ allowed, window }) => {
          mirror.set(holder, window)
          return allowed
        })
      )
    },
    size: mirror.size
  }
}

/** The appliance's one table of failed authentications (HERALD_AUTH_FAILURES_PER_MIN), shared by every protocol. */
export class AuthFailures extends Effect.Service<AuthFailures>()("herald/AuthFailures", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const sql = yield* SqlClient.SqlClient
    return { limit: config.authFailuresPerMin, ...makeAuthFailures(sql, config.authFailuresPerMin) }
  })
}) {}

/** The layer of the one table (the same constant everywhere, so it is built once per appliance). */
export const AuthFailuresLive = AuthFailures.Default
