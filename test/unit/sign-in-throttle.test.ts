/**
 * The console sign-in's failure counters (src/api/console/sign-in-throttle.ts) as tables: fixed
 * windows, per client (an IPv6 /64 as one) and per email (any case), and a bounded memory of the
 * keys a stranger chooses.
 */
import { describe, expect, it } from "vitest"
import { ACCOUNT_FAILURES_PER_WINDOW, makeFailureCounter, makeSignInThrottle, WINDOW_MS } from "../../src/api/console/sign-in-throttle.ts"

describe("a failure counter", () => {
  it("refuses a key at its limit until its window ends, then forgets it", () => {
    const counter = makeFailureCounter(3, 1_000)
    for (const at of [0, 100, 200]) {
      expect(counter.refusedUntil("a", at)).toBeUndefined()
      counter.record("a", at)
    }
    expect(counter.refusedUntil("a", 300)).toBe(1_000)
    expect(counter.refusedUntil("b", 300)).toBeUndefined()
    expect(counter.refusedUntil("a", 1_000)).toBeUndefined()
  })

  it("remembers at most its bound of keys, forgetting the oldest window first", () => {
    const counter = makeFailureCounter(1, 60_000, 3)
    for (const key of ["a", "b", "c", "d"]) counter.record(key, 0)
    expect(counter.refusedUntil("a", 1)).toBeUndefined()
    for (const key of ["b", "c", "d"]) expect(counter.refusedUntil(key, 1)).toBe(60_000)
  })
})

describe("the sign-in throttle", () => {
  it("counts an email in any case, and an IPv6 client by its /64", () => {
    const throttle = makeSignInThrottle(1_000)
    for (let i = 0; i < ACCOUNT_FAILURES_PER_WINDOW; i++) throttle.failed(`2001:db8::${i + 1}`, i % 2 === 0 ? "Ops@Acme.example" : "ops@acme.example ", 0)
    expect(throttle.refusedUntil("198.51.100.7", "OPS@acme.example", 1)).toBe(WINDOW_MS)
    throttle.succeeded("ops@acme.example")
    expect(throttle.refusedUntil("198.51.100.7", "ops@acme.example", 1)).toBeUndefined()

    const byAddress = makeSignInThrottle(2)
    byAddress.failed("2001:db8:1:2::a", "x@example.com", 0)
    byAddress.failed("2001:db8:1:2::b", "y@example.com", 0)
    expect(byAddress.refusedUntil("2001:db8:1:2::c", "z@example.com", 1)).toBe(WINDOW_MS)
    expect(byAddress.refusedUntil("2001:db8:1:3::c", "z@example.com", 1)).toBeUndefined()
  })
})
