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
 * Counts one request of the key: the upsert that opens a window or adds to the current one,
 * RETURNING window_start and count. rate_windows is UNLOGGED, so a transaction that writes only
 * this never waits for a WAL flush. The send path runs it as a CTE of its single read.
 */
export const countRequest = (sql: SqlClient.SqlClient, keyId: string, now: Date) => {
  const expired = new Date(now.getTime() - WINDOW_MS)
  return sql<RateWindow>`
    INSERT INTO rate_windows (key_id, window_start, count) VALUES (${keyId}, ${now}, 1)
    ON CONFLICT (key_id) DO UPDATE SET
      window_start = CASE WHEN rate_windows.window_start <= ${expired} THEN EXCLUDED.window_start
                          ELSE rate_windows.window_start END,
      count = CASE WHEN rate_windows.window_start <= ${expired} THEN 1 ELSE rate_windows.count + 1 END
    RETURNING window_start, count`
}

/** The decision for a request that made the window's count `count`. */
export const decideRate = (window: RateWindow, limit: number): RateDecision => ({
  allowed: window.count <= limit,
  limit,
  remaining: Math.max(0, limit - window.count),
  reset: Math.ceil((window.window_start.getTime() + WINDOW_MS) / 1000)
})
