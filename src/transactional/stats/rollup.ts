/**
 * The stats' hourly rollup (tables in migrations/0034_console_insight.sql; this module is their
 * only writer). Counting a month of a busy account from the queue's tables takes seconds
 * (bench/stats.ts: 1,000,000 deliveries), and the console asks for it on every overview. A past
 * hour's counts do not change once the writes stamped inside it have committed, so:
 *
 * - an hour is *settled* SETTLE_MS after it ends (longer than any transaction that stamps rows:
 *   the long bulk work's statement timeout is 5 minutes by default);
 * - a stats read first folds the account's settled hours not counted yet into
 *   account_activity_hours, a day per statement, each under the statement timeout and committed on
 *   its own, so a first read after a long quiet spell makes progress even if it runs out of time;
 * - it then answers from the rollup for settled hours and from the queue's tables only for the
 *   last hour or two.
 *
 * Folding twice at once is harmless: both count the same settled rows, ON CONFLICT keeps one.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { withStatementTimeout } from "../../db/statement-timeout.ts"
import { accountActivity, ActivityRow, activityCounts } from "../../mta/queue/read-models/account-activity.ts"
import type { PeriodWindow } from "./buckets.ts"

const HOUR_MS = 3_600_000
/** After its end, how long an hour waits before it is counted for good (see the header). */
export const SETTLE_MS = 10 * 60_000
/** Hours folded per statement: one day of a busy account is about a tenth of a second of scans. */
const FOLD_CHUNK_MS = 24 * HOUR_MS
/** The rollup keeps what the longest period (30 days) needs, and a day more. */
const KEEP_MS = 31 * 24 * HOUR_MS

const floorHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS

const tooSlow = { param: "period", message: "Counting this period took too long; ask again (counted hours are kept) or choose a shorter period" }

/** Counts the account's settled hours in [from, to) into the rollup and moves its watermark to `to`. */
const foldChunk = (sql: SqlClient.SqlClient, accountId: string, from: Date, to: Date) =>
  Effect.gen(function*() {
    yield* sql`
      INSERT INTO account_activity_hours (account_id, hour, sent, delivered, deferred, bounced, complained, failed)
      SELECT ${accountId}, start, sent, delivered, deferred, bounced, complained, failed
      FROM (${activityCounts(sql, accountId, "hour", from, to)}) counted
      ON CONFLICT (account_id, hour) DO NOTHING`
    yield* sql`
      INSERT INTO account_activity_folds (account_id, folded_through) VALUES (${accountId}, ${to})
      ON CONFLICT (account_id) DO UPDATE SET folded_through = greatest(account_activity_folds.folded_through, excluded.folded_through)`
    yield* sql`DELETE FROM account_activity_hours WHERE account_id = ${accountId} AND hour < ${new Date(to.getTime() - KEEP_MS)}`
  })

/** Folds every settled hour of the account not counted yet (within KEEP_MS); answers where settled hours end. */
const foldSettled = (sql: SqlClient.SqlClient, accountId: string, nowMs: number, timeoutMs: number) =>
  Effect.gen(function*() {
    const settledEnd = floorHour(nowMs - SETTLE_MS)
    const [mark] = yield* sql<{ folded_through: Date }>`
      SELECT folded_through FROM account_activity_folds WHERE account_id = ${accountId}`
    let through = Math.max(mark?.folded_through.getTime() ?? 0, floorHour(nowMs - KEEP_MS))
    while (through < settledEnd) {
      const end = Math.min(through + FOLD_CHUNK_MS, settledEnd)
      yield* foldChunk(sql, accountId, new Date(through), new Date(end)).pipe(withStatementTimeout(sql, timeoutMs, tooSlow))
      through = end
    }
    return settledEnd
  })

const sumRows = (rows: ReadonlyArray<ActivityRow>): ReadonlyArray<ActivityRow> => {
  const byStart = new Map<number, ActivityRow>()
  for (const r of rows) {
    const seen = byStart.get(r.start.getTime())
    byStart.set(r.start.getTime(), seen === undefined ? r : {
      start: r.start,
      sent: seen.sent + r.sent,
      delivered: seen.delivered + r.delivered,
      deferred: seen.deferred + r.deferred,
      bounced: seen.bounced + r.bounced,
      complained: seen.complained + r.complained,
      failed: seen.failed + r.failed
    })
  }
  return [...byStart.values()]
}

/** The account's activity in the window: settled hours from the rollup, the rest from the queue's tables. */
export const windowActivity = (accountId: string, window: PeriodWindow, nowMs: number, timeoutMs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settledEnd = new Date(Math.max(window.from.getTime(), yield* foldSettled(sql, accountId, nowMs, timeoutMs)))
    const read = Effect.gen(function*() {
      const rolled = yield* sql`
        SELECT date_trunc(${window.unit}, hour, 'UTC') AS start, sum(sent) AS sent, sum(delivered) AS delivered,
               sum(deferred) AS deferred, sum(bounced) AS bounced, sum(complained) AS complained, sum(failed) AS failed
        FROM account_activity_hours
        WHERE account_id = ${accountId} AND hour >= ${window.from} AND hour < ${settledEnd}
        GROUP BY 1`.pipe(Effect.flatMap((rows) => Effect.orDie(Schema.decodeUnknown(Schema.Array(ActivityRow))(rows))))
      const live = yield* accountActivity(accountId, window.unit, settledEnd, window.to)
      return sumRows([...rolled, ...live])
    })
    return yield* read.pipe(withStatementTimeout(sql, timeoutMs, tooSlow))
  })
