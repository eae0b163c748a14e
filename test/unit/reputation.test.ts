/** The reputation rule: pause past 5 % hard bounces or 0.1 % complaints, with a minimum volume. */
import { describe, expect, it } from "vitest"
import { pauseReason } from "../../src/platform/reputation/rates.ts"

const policy = { bounceRate: 0.05, complaintRate: 0.001, windowDays: 7, minVolume: 200 }

describe("pauseReason", () => {
  it.each([
    [{ completed: 150, hardBounces: 50, complaints: 0 }, null],
    [{ completed: 1000, hardBounces: 50, complaints: 0 }, null],
    [{ completed: 1000, hardBounces: 60, complaints: 0 }, "hard-bounce rate 6.00%"],
    [{ completed: 1000, hardBounces: 0, complaints: 1 }, null],
    [{ completed: 1000, hardBounces: 0, complaints: 2 }, "complaint rate 0.200%"],
    [{ completed: 199, hardBounces: 0, complaints: 5 }, null]
  ])("for %o says %s", (counts, expected) => {
    const reason = pauseReason(counts, policy)
    if (expected === null) expect(reason).toBeNull()
    else expect(reason).toContain(expected)
  })
})
