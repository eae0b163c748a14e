/**
 * The charge for an upgrade: the new plan's price for the days left in the current cycle,
 * `round(price × days_charged / cycle_days)` to the cent (half up). Days are whole UTC days:
 * `cycle_days` is the length of the period, `days_charged` the days from the change (the day of
 * the change counts in full) to the period's end. An account with no plan starts a new cycle on the
 * day of the change, so it pays the whole first cycle.
 */
import type { Period } from "./billing-period.ts"

const DAY_MS = 86_400_000

const utcDay = (d: Date) => Math.floor(d.getTime() / DAY_MS)

export interface Proration {
  readonly amount_usd_cents: number
  readonly days_charged: number
  readonly cycle_days: number
}

export const prorate = (newPriceCents: number, period: Period, at: Date): Proration => {
  const cycleDays = utcDay(period.end) - utcDay(period.start)
  const daysCharged = Math.min(cycleDays, Math.max(0, utcDay(period.end) - utcDay(at)))
  return {
    amount_usd_cents: cycleDays === 0 ? 0 : Math.round((newPriceCents * daysCharged) / cycleDays),
    days_charged: daysCharged,
    cycle_days: cycleDays
  }
}
