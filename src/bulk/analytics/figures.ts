/**
 * The pure parts of a campaign's analytics: the rates (issue 20 "Analytics": fractions, 0 when
 * the denominator is 0) and the timeline's buckets (hourly over the first 72 hours from the
 * campaign's start, then daily), so the SQL only has to count per hour.
 */

export interface Counts {
  readonly delivered: number
  readonly opens_unique: number
  readonly clicks_unique: number
  readonly bounces: number
  readonly complaints: number
  readonly unsubs: number
}

export interface Rates {
  readonly open: number
  readonly ctr: number
  readonly ctor: number
  readonly bounce: number
  readonly complaint: number
  readonly unsub: number
}

/** part / whole as a fraction with 4 decimals (as a campaign's delivery_rate); 0 when whole is 0. */
export const fraction = (part: number, whole: number): number => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000)

export const ratesOf = (c: Counts): Rates => ({
  open: fraction(c.opens_unique, c.delivered),
  ctr: fraction(c.clicks_unique, c.delivered),
  ctor: fraction(c.clicks_unique, c.opens_unique),
  bounce: fraction(c.bounces, c.delivered + c.bounces),
  complaint: fraction(c.complaints, c.delivered),
  unsub: fraction(c.unsubs, c.delivered)
})

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
/** The first hours of a campaign are shown hour by hour; what follows, day by day. */
export const HOURLY_SPAN_HOURS = 72

export interface HourCounts {
  readonly hour: Date
  readonly delivered: number
  readonly opens: number
  readonly clicks: number
}

export interface TimelineBucket {
  readonly at: string
  readonly delivered: number
  readonly opens: number
  readonly clicks: number
}

/**
 * The timeline of a campaign started at `startedAt`, from per-hour counts: buckets from the hour
 * of the start, hour by hour for 72 hours, then 24-hour days counted from the end of those hours;
 * every bucket from the first up to the last one with anything in it (empty ones too, so a chart
 * has no gaps). Counts from before the start's hour (none expected) go in the first bucket.
 */
export const timelineOf = (startedAt: Date, hours: ReadonlyArray<HourCounts>): ReadonlyArray<TimelineBucket> => {
  const first = Math.floor(startedAt.getTime() / HOUR_MS) * HOUR_MS
  const dailyFrom = first + HOURLY_SPAN_HOURS * HOUR_MS
  /** The bucket's index: 0–71 the hours, 72 and on the days. */
  const indexOf = (at: number): number =>
    at < dailyFrom ? Math.max(0, Math.floor((at - first) / HOUR_MS)) : HOURLY_SPAN_HOURS + Math.floor((at - dailyFrom) / DAY_MS)
  const startOf = (index: number): number =>
    index < HOURLY_SPAN_HOURS ? first + index * HOUR_MS : dailyFrom + (index - HOURLY_SPAN_HOURS) * DAY_MS
  const sums = new Map<number, { delivered: number; opens: number; clicks: number }>()
  for (const h of hours) {
    if (h.delivered === 0 && h.opens === 0 && h.clicks === 0) continue
    const index = indexOf(h.hour.getTime())
    const sum = sums.get(index) ?? { delivered: 0, opens: 0, clicks: 0 }
    sums.set(index, { delivered: sum.delivered + h.delivered, opens: sum.opens + h.opens, clicks: sum.clicks + h.clicks })
  }
  if (sums.size === 0) return []
  const last = Math.max(...sums.keys())
  return Array.from({ length: last + 1 }, (_, index) => ({
    at: new Date(startOf(index)).toISOString(),
    ...(sums.get(index) ?? { delivered: 0, opens: 0, clicks: 0 })
  }))
}
