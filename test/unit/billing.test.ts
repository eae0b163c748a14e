/** The pure rules of billing: monthly periods, upgrade proration and quota decisions. */
import { describe, expect, it } from "vitest"
import { currentPeriod } from "../../src/platform/usage/billing-period.ts"
import { prorate } from "../../src/platform/usage/proration.ts"
import { decideQuota } from "../../src/platform/usage/Quota.ts"

const d = (iso: string) => new Date(iso)

describe("currentPeriod", () => {
  it.each([
    ["2026-01-15T10:00:00Z", "2026-03-20T00:00:00Z", "2026-03-15T10:00:00.000Z", "2026-04-15T10:00:00.000Z"],
    ["2026-01-15T10:00:00Z", "2026-03-15T09:59:59Z", "2026-02-15T10:00:00.000Z", "2026-03-15T10:00:00.000Z"],
    ["2026-01-31T00:00:00Z", "2026-02-10T00:00:00Z", "2026-01-31T00:00:00.000Z", "2026-02-28T00:00:00.000Z"],
    ["2026-01-31T00:00:00Z", "2026-03-01T00:00:00Z", "2026-02-28T00:00:00.000Z", "2026-03-31T00:00:00.000Z"],
    ["2028-01-31T00:00:00Z", "2028-02-29T12:00:00Z", "2028-02-29T00:00:00.000Z", "2028-03-31T00:00:00.000Z"],
    ["2026-12-10T00:00:00Z", "2027-01-10T00:00:00Z", "2027-01-10T00:00:00.000Z", "2027-02-10T00:00:00.000Z"],
    ["2026-05-05T00:00:00Z", "2026-05-05T00:00:00Z", "2026-05-05T00:00:00.000Z", "2026-06-05T00:00:00.000Z"],
    // An anchor of the 31st through the months after a short February: back to the 31st each time
    // the month has one (the anchor is the subscription's start, never a clamped period start).
    ["2026-01-31T10:00:00Z", "2026-03-28T10:00:00Z", "2026-02-28T10:00:00.000Z", "2026-03-31T10:00:00.000Z"],
    ["2026-01-31T10:00:00Z", "2026-03-31T09:59:59Z", "2026-02-28T10:00:00.000Z", "2026-03-31T10:00:00.000Z"],
    ["2026-01-31T10:00:00Z", "2026-03-31T10:00:00Z", "2026-03-31T10:00:00.000Z", "2026-04-30T10:00:00.000Z"],
    ["2026-01-31T10:00:00Z", "2026-05-30T10:00:00Z", "2026-04-30T10:00:00.000Z", "2026-05-31T10:00:00.000Z"],
    ["2026-01-31T10:00:00Z", "2027-02-28T10:00:00Z", "2027-02-28T10:00:00.000Z", "2027-03-31T10:00:00.000Z"],
    ["2026-08-30T00:00:00Z", "2027-03-01T00:00:00Z", "2027-02-28T00:00:00.000Z", "2027-03-30T00:00:00.000Z"],
    ["2028-02-29T00:00:00Z", "2029-03-28T00:00:00Z", "2029-02-28T00:00:00.000Z", "2029-03-29T00:00:00.000Z"],
    ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2032-02-29T00:00:00.000Z", "2032-03-29T00:00:00.000Z"]
  ])("anchored %s, at %s runs %s → %s", (anchor, now, start, end) => {
    const p = currentPeriod(d(anchor), d(now))
    expect([p.start.toISOString(), p.end.toISOString()]).toEqual([start, end])
  })

  it("walks an anchor of Jan 31 month after month without drifting to the 28th", () => {
    const anchor = d("2026-01-31T10:00:00Z")
    const starts: Array<string> = []
    let at = anchor
    for (let i = 0; i < 12; i++) {
      const p = currentPeriod(anchor, at)
      starts.push(p.start.toISOString().slice(0, 10))
      at = p.end
    }
    expect(starts).toEqual([
      "2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31", "2026-06-30",
      "2026-07-31", "2026-08-31", "2026-09-30", "2026-10-31", "2026-11-30", "2026-12-31"
    ])
  })
})

describe("prorate", () => {
  it.each([
    // price, period start, period end, change at, amount, days charged, cycle days
    [4900, "2026-11-01", "2026-12-01", "2026-11-16T08:00:00Z", 2450, 15, 30],
    [4900, "2026-02-01", "2026-03-01", "2026-02-15T00:00:00Z", 2450, 14, 28],
    [4900, "2028-02-01", "2028-03-01", "2028-02-15T00:00:00Z", 2534, 15, 29],
    [19900, "2026-01-01", "2026-02-01", "2026-01-01T00:00:00Z", 19900, 31, 31],
    [19900, "2026-01-01", "2026-02-01", "2026-01-31T23:00:00Z", 642, 1, 31],
    [1500, "2026-04-01", "2026-05-01", "2026-04-21T00:00:00Z", 500, 10, 30],
    [999, "2026-04-01", "2026-05-01", "2026-04-30T00:00:00Z", 33, 1, 30],
    // The period after a short February for an anchor of the 31st: Feb 28 → Mar 31, 31 days.
    [4900, "2026-02-28T10:00:00Z", "2026-03-31T10:00:00Z", "2026-03-15T00:00:00Z", 2529, 16, 31]
  ])("%i¢ over %s→%s changed at %s charges %i¢ for %i of %i days", (price, start, end, at, amount, days, cycle) => {
    expect(prorate(price, { start: d(start), end: d(end) }, d(at))).toEqual({
      amount_usd_cents: amount,
      days_charged: days,
      cycle_days: cycle
    })
  })
})

describe("an upgrade's charge after a short month", () => {
  it("prices the cycle from the anchor (Feb 28 → Mar 31), not from the clamped Feb 28", () => {
    const at = d("2026-03-15T00:00:00Z")
    expect(prorate(4900, currentPeriod(d("2026-01-31T10:00:00Z"), at), at)).toEqual({
      amount_usd_cents: 2529,
      days_charged: 16,
      cycle_days: 31
    })
  })
})

describe("decideQuota", () => {
  it.each([
    [0, 10, 100, false, { _tag: "charged", overage: 0 }],
    [90, 10, 100, false, { _tag: "charged", overage: 0 }],
    [95, 10, 100, false, { _tag: "no_overage" }],
    [100, 1, 100, false, { _tag: "exhausted" }],
    [95, 10, 100, true, { _tag: "charged", overage: 5 }],
    [120, 10, 100, true, { _tag: "charged", overage: 10 }]
  ])("with %i used, %i more of %i (overage %s) → %o", (before, n, quota, overage, expected) => {
    expect(decideQuota(before, n, quota, overage)).toEqual(expected)
  })
})
