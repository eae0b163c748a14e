/**
 * Per-key request windows of 60 s, kept in PostgreSQL so every replica counts against the same
 * window (the upsert's row lock serialises concurrent requests of one key). A window opens with
 * the first request after the previous one closed; `reset` is when it closes (Unix seconds, as the
 * spec's RateLimit-Reset header wants).
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

export class RateLimiter extends Effect.Service<RateLimiter>()("herald/RateLimiter", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const hit = (keyId: string, limit: number, now: Date) =>
      Effect.gen(function*() {
        const expired = new Date(now.getTime() - WINDOW_MS)
        // rate_windows is UNLOGGED: this autocommit upsert never waits for a WAL flush.
        const rows = yield* sql<{ window_start: Date; count: number }>`
          INSERT INTO rate_windows (key_id, window_start, count) VALUES (${keyId}, ${now}, 1)
          ON CONFLICT (key_id) DO UPDATE SET
            window_start = CASE WHEN rate_windows.window_start <= ${expired} THEN EXCLUDED.window_start
                                ELSE rate_windows.window_start END,
            count = CASE WHEN rate_windows.window_start <= ${expired} THEN 1 ELSE rate_windows.count + 1 END
          RETURNING window_start, count`
        const row = rows[0]!
        const decision: RateDecision = {
          allowed: row.count <= limit,
          limit,
          remaining: Math.max(0, limit - row.count),
          reset: Math.ceil((row.window_start.getTime() + WINDOW_MS) / 1000)
        }
        return decision
      })

    return { hit } as const
  })
}) {}
