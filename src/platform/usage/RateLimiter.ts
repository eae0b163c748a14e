/**
 * Per-minute request windows of 60 s, kept in PostgreSQL so every replica counts against the same
 * window (the upsert's row lock serialises concurrent requests). A window opens with the first
 * request after the previous one closed; `reset` is when it closes (Unix seconds, as the spec's
 * RateLimit-Reset header wants).
 *
 * A send counts in two windows with the same limit (the account's rate_per_min): its key's and its
 * account's. The key's window is the spec's "per API key" rate; the account's keeps an account from
 * multiplying its rate by making more keys (five keys must not send five times the plan's rate).
 * Both live in `rate_windows`, whose `key_id` holds the window's holder: a key's id (`key_…`) or an
 * account's id (`acc_…`). The prefixes never collide (src/lib/ids.ts), so one table, one upsert and
 * one lock order serve both.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const WINDOW_MS = 60_000

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Unix timestamp (seconds) at which the window resets. */
  readonly reset: number
}

export const rateLimitHeaders = (d: RateDecision): Record<string, string> => ({
  "RateLimit-Limit": String(d.limit),
  "RateLimit-Remaining": String(d.remaining),
  "RateLimit-Reset": String(d.reset)
})

export interface RateWindow {
  readonly window_start: Date
  readonly count: number
}

/**
 * Counts requests of several holders (keys and accounts) at once (`perHolder`: each holder once,
 * with how many requests it had): the upsert that opens a window or adds to the current one,
 * RETURNING key_id (the holder), window_start and the count after them all. The n-th of a holder's
 * k requests made the count `count - k + n`.
 *
 * The rows go in the order of their ids, so two statements (two replicas' groups) that share
 * holders lock them in the same order and never deadlock.
 * rate_windows is UNLOGGED, so a transaction that writes only this never waits for a WAL flush.
 * The send path runs it as a CTE of its grouped read (src/transactional/send-context.ts).
 */
export const countRequests = (sql: SqlClient.SqlClient, perHolder: ReadonlyArray<readonly [holderId: string, requests: number]>, now: Date) => {
  const expired = new Date(now.getTime() - WINDOW_MS)
  const ordered = [...perHolder].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const rows = sql.csv(ordered.map(([holderId, n]) => sql`(${holderId}::text, ${now}::timestamptz, ${n}::integer)`))
  return sql`
    INSERT INTO rate_windows (key_id, window_start, count) VALUES ${rows}
    ON CONFLICT (key_id) DO UPDATE SET
      window_start = CASE WHEN rate_windows.window_start <= ${expired} THEN EXCLUDED.window_start
                          ELSE rate_windows.window_start END,
      count = CASE WHEN rate_windows.window_start <= ${expired} THEN EXCLUDED.count ELSE rate_windows.count + EXCLUDED.count END
    RETURNING key_id, window_start, count`
}

/** The decision for a request that made the window's count `count`. */
export const decideRate = (window: RateWindow, limit: number): RateDecision => ({
  allowed: window.count <= limit,
  limit,
  remaining: Math.max(0, limit - window.count),
  reset: Math.ceil((window.window_start.getTime() + WINDOW_MS) / 1000)
})

/**
 * One decision for a request counted in two windows: refused when either refuses, and described
 * (the RateLimit-* headers) by the tighter one — fewer requests left, or on a tie the later reset,
 * since a client that waits for the earlier one would still be refused by the other.
 */
export const tighterOf = (a: RateDecision, b: RateDecision): RateDecision => {
  const tighter = a.remaining < b.remaining || (a.remaining === b.remaining && a.reset >= b.reset) ? a : b
  return { ...tighter, allowed: a.allowed && b.allowed }
}

/**
 * A key's headroom without counting a request: the tighter of its own window and its account's,
 * as the RateLimit-* headers of a send would describe them after it. A window that is absent or
 * past its minute leaves the whole limit, and would open (and reset a minute after) now. For the
 * console's overview (GET /v1/client/stats): reading the stats must not spend the key's rate.
 */
export const peekRate = (sql: SqlClient.SqlClient, keyId: string, accountId: string, limit: number, now: Date) =>
  sql<RateWindow & { readonly key_id: string }>`
    SELECT key_id, window_start, count FROM rate_windows WHERE key_id = ${keyId} OR key_id = ${accountId}`.pipe(
    Effect.map((rows) => {
      const current = (holderId: string): RateWindow => {
        const row = rows.find((r) => r.key_id === holderId && r.window_start.getTime() > now.getTime() - WINDOW_MS)
        return row ?? { window_start: now, count: 0 }
      }
      const decision = tighterOf(decideRate(current(keyId), limit), decideRate(current(accountId), limit))
      return { ...decision, allowed: decision.remaining > 0 }
    })
  )
