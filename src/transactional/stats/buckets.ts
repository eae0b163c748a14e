/**
 * The buckets of a stats period (pure): 24 hours, or 7 or 30 UTC days, ending with the current
 * hour or day, and the counts of each filled in from the rows the database returned (a bucket
 * with nothing in it has no row).
 */
import type { ActivityRow, ActivityUnit } from "../../mta/queue/read-models/account-activity.ts"
import type { StatsPeriod } from "./Api.ts"

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

const SHAPES: Record<StatsPeriod, { readonly unit: ActivityUnit; readonly count: number; readonly ms: number }> = {
  "24h": { unit: "hour", count: 24, ms: HOUR_MS },
  "7d": { unit: "day", count: 7, ms: DAY_MS },
  "30d": { unit: "day", count: 30, ms: DAY_MS }
}

export interface PeriodWindow {
  readonly unit: ActivityUnit
  /** The first bucket's start (inclusive). */
  readonly from: Date
  /** The end of the current bucket (exclusive). */
  readonly to: Date
  readonly starts: ReadonlyArray<number>
}

/** The window of `period` at `nowMs`: whole UTC hours or days, the current one last. */
export const periodWindow = (period: StatsPeriod, nowMs: number): PeriodWindow => {
  const { count, ms, unit } = SHAPES[period]
  const current = Math.floor(nowMs / ms) * ms
  const starts = Array.from({ length: count }, (_, i) => current - (count - 1 - i) * ms)
  return { unit, from: new Date(starts[0]!), to: new Date(current + ms), starts }
}

/** Every bucket of the window, oldest first, with the rows' counts and zeros elsewhere. */
export const fillBuckets = (window: PeriodWindow, rows: ReadonlyArray<ActivityRow>) => {
  const byStart = new Map(rows.map((r) => [r.start.getTime(), r]))
  return window.starts.map((start) => {
    const r = byStart.get(start)
    return {
      start: new Date(start).toISOString(),
      sent: r?.sent ?? 0,
      delivered: r?.delivered ?? 0,
      deferred: r?.deferred ?? 0,
      bounced: r?.bounced ?? 0,
      complained: r?.complained ?? 0,
      failed: r?.failed ?? 0
    }
  })
}
