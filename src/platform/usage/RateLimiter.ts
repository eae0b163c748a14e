/**
 * Per-key request windows of 60 s, kept in PostgreSQL so every replica counts against the same
 * window (the upsert's row lock serialises concurrent requests of one key). A window opens with
 * the first request after the previous one closed; `reset` is when it closes (Unix seconds, as the
 * spec's RateLimit-Reset header wants).
 */
import { SqlClient } from "@effect/sql"

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
 * Counts requests of several keys at once (`perKey`: each key once, with how many requests it
 * had): the upsert that opens a window or adds to the current one, RETURNING key_id, window_start
 * and the count after them all. The n-th of a key's k requests made the count `count - k + n`.
 * rate_windows is UNLOGGED, so a transaction that writes only this never waits for a WAL flush.
 * The send path runs it as a CTE of its grouped read (src/transactional/send-context.ts).
 */
export const countRequests = (sql: SqlClient.SqlClient, perKey: ReadonlyArray<readonly [keyId: string, requests: number]>, now: Date) => {
  const expired = new Date(now.getTime() - WINDOW_MS)
  const rows = sql.csv(perKey.map(([keyId, n]) => sql`(${keyId}::text, ${now}::timestamptz, ${n}::integer)`))
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
