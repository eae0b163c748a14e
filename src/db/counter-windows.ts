/**
 * Counters in fixed windows, kept in PostgreSQL (`counter_windows`, migration 0042) so that every
 * process and replica on one database counts against the same window (issue 33): the failed
 * authentications of the API, SMTP submission and /metrics (src/http/auth-failures.ts), the
 * console's failed sign-ins (src/api/console/sign-in-throttle.ts) and the MX listener's messages
 * per client address (src/inbound/listener/rate.ts). A holder names the counter and its key
 * (`api:198.51.100.7`); its window opens at its first count after the previous one ended and ends
 * `windowMs` later.
 *
 * Each statement is one round trip on an UNLOGGED table (no WAL flush at commit). Counting also
 * deletes up to PURGE_PER_COUNT rows whose window has ended, so the table never holds many more
 * rows than holders counted in the last window, without a sweeper of its own.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Ended rows each counted holder deletes: more than the one row it can add, so ended rows do not pile up. */
const PURGE_PER_COUNT = 2

/** A holder's current window, as the database has it. */
export interface FailureWindow {
  readonly holder: string
  /** When the window ends (ms since the epoch). */
  readonly end: number
  readonly count: number
  /** When a throttled holder may next have an unknown token looked up (ms since the epoch). */
  readonly nextLookupAt: number
}

interface Row {
  readonly holder: string
  readonly window_end: Date
  readonly count: number
  readonly next_lookup_at: Date
}

const toWindow = (row: Row): FailureWindow => ({
  holder: row.holder,
  end: row.window_end.getTime(),
  count: row.count,
  nextLookupAt: row.next_lookup_at.getTime()
})

/**
 * Adds each holder's count at `now` (a window of `windowMs` opens for a holder without a current
 * one) and returns their windows after it. The rows are locked in the order of their holders, so
 * two statements sharing holders never deadlock.
 */
export const countEvents = (counts: ReadonlyArray<readonly [holder: string, count: number]>, now: number, windowMs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const at = new Date(now)
    const end = new Date(now + windowMs)
    const summed = new Map<string, number>()
    for (const [holder, n] of counts) summed.set(holder, (summed.get(holder) ?? 0) + n)
    const ordered = [...summed.keys()].sort()
    const values = sql.csv(ordered.map((holder) => sql`(${holder}::text, ${end}::timestamptz, ${summed.get(holder)!}::integer, ${at}::timestamptz)`))
    const rows = yield* sql<Row>`
      WITH purged AS (
        DELETE FROM counter_windows WHERE holder IN (
          SELECT holder FROM counter_windows WHERE window_end <= ${at} AND holder <> ALL(${ordered}::text[])
          ORDER BY window_end LIMIT ${PURGE_PER_COUNT * ordered.length} FOR UPDATE SKIP LOCKED))
      INSERT INTO counter_windows (holder, window_end, count, next_lookup_at) VALUES ${values}
      ON CONFLICT (holder) DO UPDATE SET
        count = CASE WHEN counter_windows.window_end <= ${at} THEN EXCLUDED.count ELSE counter_windows.count + EXCLUDED.count END,
        next_lookup_at = CASE WHEN counter_windows.window_end <= ${at} THEN EXCLUDED.next_lookup_at ELSE counter_windows.next_lookup_at END,
        window_end = CASE WHEN counter_windows.window_end <= ${at} THEN EXCLUDED.window_end ELSE counter_windows.window_end END
      RETURNING holder, window_end, count, next_lookup_at`
    return rows.map(toWindow)
  })

/** Counts one failure for each of `holders` (countEvents). */
export const countFailures = (holders: ReadonlyArray<string>, now: number, windowMs: number) =>
  countEvents(holders.map((holder) => [holder, 1] as const), now, windowMs)

/** The current windows of `holders` at `now` (a holder without one is absent). */
export const readWindows = (holders: ReadonlyArray<string>, now: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Row>`
      SELECT holder, window_end, count, next_lookup_at FROM counter_windows
      WHERE holder = ANY(${[...holders]}::text[]) AND window_end > ${new Date(now)}`.pipe(Effect.map((rows) => rows.map(toWindow))))

/** Forgets `holder`'s window (a right password clears its email's failures). */
export const forgetFailures = (holder: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`DELETE FROM counter_windows WHERE holder = ${holder}`))

/**
 * For a token the key cache does not know: whether `holder` may have it looked up at `now`. A holder
 * under `limit` failures may; one at its limit may only when `intervalMs` is given and its next
 * lookup is due, which this statement takes (the next one is due `intervalMs` later, for every
 * process). Returns the decision and the holder's window (undefined: none is open).
 */
export const takeLookup = (holder: string, now: number, limit: number, intervalMs: number | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const at = new Date(now)
    const rows = yield* sql<Row & { readonly took: boolean }>`
      WITH taken AS (
        UPDATE counter_windows SET next_lookup_at = ${new Date(now + (intervalMs ?? 0))}
        WHERE ${intervalMs !== undefined}::boolean AND holder = ${holder} AND window_end > ${at} AND count >= ${limit} AND next_lookup_at <= ${at}
        RETURNING holder, window_end, count, next_lookup_at, true AS took)
      SELECT * FROM taken
      UNION ALL
      SELECT holder, window_end, count, next_lookup_at, false AS took FROM counter_windows
      WHERE holder = ${holder} AND window_end > ${at} AND NOT EXISTS (SELECT 1 FROM taken)`
    const row = rows[0]
    if (row === undefined) return { allowed: true, window: undefined }
    return { allowed: row.count < limit || row.took, window: toWindow(row) }
  })
