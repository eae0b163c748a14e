/**
 * Monthly billing periods, anchored on the day the subscription (or, without a plan, the account)
 * started: a period runs from the anchor's day-of-month to the same day next month. A day the
 * month lacks (31st, 29 February) clamps to the month's last day, as card billing does.
 * Always pass the original anchor, never a period's start: a clamped start (Feb 28 for an anchor
 * of Jan 31) would move every later period to the 28th.
 */
export interface Period {
  readonly start: Date
  readonly end: Date
}

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate()

/** The anchor's day and time of day, in month `monthIndex` counted from year 0 (UTC). */
const nthMonth = (anchor: Date, monthIndex: number): Date => {
  const year = Math.floor(monthIndex / 12)
  const month = monthIndex - year * 12
  const day = Math.min(anchor.getUTCDate(), daysIn(year, month))
  return new Date(Date.UTC(
    year, month, day,
    anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()
  ))
}

export const currentPeriod = (anchor: Date, now: Date): Period => {
  let index = now.getUTCFullYear() * 12 + now.getUTCMonth()
  if (nthMonth(anchor, index).getTime() > now.getTime()) index -= 1
  const anchorIndex = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth()
  if (index < anchorIndex) index = anchorIndex
  return { start: nthMonth(anchor, index), end: nthMonth(anchor, index + 1) }
}
