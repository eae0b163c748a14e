import { describe, expect, it } from "vitest"
import { newId, randomBase62 } from "../../src/lib/ids.ts"

describe("ids", () => {
  it("are a prefix and 20 base62 characters", () => {
    expect(newId("msg")).toMatch(/^msg_[0-9A-Za-z]{20}$/)
    expect(randomBase62(7)).toMatch(/^[0-9A-Za-z]{7}$/)
  })

  it("do not repeat across many refills of the random pool", () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => newId("x")))
    expect(ids.size).toBe(20_000)
  })

  it("use every character of the alphabet about equally (no modulo bias)", () => {
    const counts = new Map<string, number>()
    const text = randomBase62(62 * 2_000)
    for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect(counts.size).toBe(62)
    // Expected 2,000 each; a biased mapping (byte % 62 over all 256 values) gives the first
    // 8 characters ~2,500.
    for (const n of counts.values()) expect(Math.abs(n - 2_000)).toBeLessThan(250)
  })
})
