/**
 * The two halves of "what counts as an open or a click" without a database: the request path's
 * memory of recently logged tokens (repeats.ts: a repeat within the window is not logged; the
 * memory stays bounded however many tokens arrive) and the aggregator's per-token decision
 * (windows.ts `admit`: counted once per window, either side of out-of-order hits, detail capped).
 * The end-to-end replay is test/bulk/tracking-replay.test.ts.
 */
import { describe, expect, it } from "vitest"
import type { LoggedHit } from "../../src/bulk/tracking/ingest.ts"
import { RecentTokens, tokenKey } from "../../src/bulk/tracking/repeats.ts"
import { admit, DETAIL_ROWS_PER_TOKEN, type TokenWindow } from "../../src/bulk/tracking/windows.ts"

const W = 60_000

describe("the request path's memory (RecentTokens)", () => {
  it("lets a token through once per window and again once the window has passed", () => {
    const recent = new RecentTokens(W)
    const key = tokenKey("dl_1", null, false)
    expect(recent.isRepeat(key, 0)).toBe(false)
    for (let t = 1; t < W; t += 997) expect(recent.isRepeat(key, t)).toBe(true)
    expect(recent.isRepeat(key, W)).toBe(false)
    expect(recent.isRepeat(key, W + 1)).toBe(true)
  })

  it("keeps a token's opener classes and links apart: a proxy's prefetch never hides the person's open", () => {
    const recent = new RecentTokens(W)
    expect(recent.isRepeat(tokenKey("dl_1", null, true), 0)).toBe(false)
    expect(recent.isRepeat(tokenKey("dl_1", null, false), 1)).toBe(false)
    expect(recent.isRepeat(tokenKey("dl_1", 0, false), 2)).toBe(false)
    expect(recent.isRepeat(tokenKey("dl_1", 1, false), 3)).toBe(false)
    expect(recent.isRepeat(tokenKey("dl_2", null, false), 4)).toBe(false)
  })

  it("forgets a token whose logging failed, so its next fetch is logged", () => {
    const recent = new RecentTokens(W)
    expect(recent.isRepeat("k", 10)).toBe(false)
    recent.forget("k", 10)
    expect(recent.isRepeat("k", 11)).toBe(false)
  })

  it("stays bounded: at most its capacity, expired entries dropped as time moves", () => {
    const recent = new RecentTokens(W, 1_000)
    for (let i = 0; i < 100_000; i++) recent.isRepeat(`dl_${i} -1 p`, i % W)
    expect(recent.size).toBeLessThanOrEqual(1_000)
    // The oldest went first: a forgotten token is let through again (the aggregator does not count it twice).
    expect(recent.isRepeat("dl_0 -1 p", 50_000)).toBe(false)
    recent.isRepeat("another", 10 * W)
    expect(recent.size).toBe(1)
  })

  it("with a window of 0, lets every fetch through and keeps nothing", () => {
    const recent = new RecentTokens(0)
    for (let i = 0; i < 10; i++) expect(recent.isRepeat("k", 5)).toBe(false)
    expect(recent.size).toBe(1)
  })
})

describe("the aggregator's decision (admit)", () => {
  const hit = (at: number): LoggedHit => ({ campaignId: "cp_1", deliveryId: "dl_1", linkIndex: null, machine: false, at: new Date(at) })
  const fresh = (): TokenWindow => ({ deliveryId: "dl_1", linkIndex: -1, machine: false, campaignId: "cp_1", countedAt: null, detailRows: 0, changed: false })

  it("counts the first fetch and each one a window after the last counted, whatever arrives between", () => {
    const window = fresh()
    const verdicts = [0, 1_000, 59_999, 60_000, 61_000, 130_000].map((at) => admit(window, hit(at), W).counted)
    expect(verdicts).toEqual([true, false, false, true, false, true])
    expect(window.countedAt).toEqual(new Date(130_000))
    expect(window.changed).toBe(true)
  })

  it("does not count a late-logged hit just before a counted one (replicas log slightly out of order)", () => {
    const window = fresh()
    expect(admit(window, hit(100_000), W).counted).toBe(true)
    expect(admit(window, hit(99_000), W).counted).toBe(false)
    expect(admit(window, hit(30_000), W).counted).toBe(true)
    // An older counted hit does not move the window back.
    expect(window.countedAt).toEqual(new Date(100_000))
  })

  it("caps the detail per token: past DETAIL_ROWS_PER_TOKEN a counted fetch leaves no detail row", () => {
    const window = fresh()
    const verdicts = Array.from({ length: DETAIL_ROWS_PER_TOKEN + 10 }, (_, i) => admit(window, hit(i * W), W))
    expect(verdicts.every((v) => v.counted)).toBe(true)
    expect(verdicts.filter((v) => v.detail)).toHaveLength(DETAIL_ROWS_PER_TOKEN)
    expect(window.detailRows).toBe(DETAIL_ROWS_PER_TOKEN)
  })

  it("with a window of 0, counts every fetch", () => {
    const window = fresh()
    expect([0, 0, 1, 1].map((at) => admit(window, hit(at), 0).counted)).toEqual([true, true, true, true])
  })
})
