/**
 * The failed-authentication table's own rules: a window per client, IPv6 by its /64, bounded; a
 * throttled client's lookups of unknown tokens, one per THROTTLED_LOOKUP_INTERVAL_MS.
 */
import { describe, expect, it } from "vitest"
import { clientOf, makeAuthFailures, THROTTLED_LOOKUP_INTERVAL_MS, WINDOW_MS } from "../../src/http/auth-failures.ts"

describe("makeAuthFailures", () => {
  it("refuses an address from its limit-th failure until its window ends", () => {
    const failures = makeAuthFailures(3)
    for (let i = 0; i < 2; i++) failures.record("192.0.2.1", 1_000 + i)
    expect(failures.refusedUntil("192.0.2.1", 1_010)).toBeUndefined()
    failures.record("192.0.2.1", 1_020)
    expect(failures.refusedUntil("192.0.2.1", 1_030)).toBe(1_000 + WINDOW_MS)
    expect(failures.refusedUntil("192.0.2.2", 1_030)).toBeUndefined()
    expect(failures.refusedUntil("192.0.2.1", 1_000 + WINDOW_MS)).toBeUndefined()
  })

  it("holds at most its number of addresses, forgetting the one whose window opened first", () => {
    const failures = makeAuthFailures(1, 2)
    failures.record("192.0.2.1", 0)
    failures.record("192.0.2.2", 1)
    failures.record("192.0.2.3", 2)
    expect(failures.size()).toBe(2)
    expect(failures.refusedUntil("192.0.2.1", 3)).toBeUndefined()
    expect(failures.refusedUntil("192.0.2.2", 3)).toBe(1 + WINDOW_MS)
    expect(failures.refusedUntil("192.0.2.3", 3)).toBe(2 + WINDOW_MS)
  })

  it("counts an IPv6 client by its /64 and an IPv4-mapped address as the IPv4 one", () => {
    expect(clientOf("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64")
    expect(clientOf("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64")
    expect(clientOf("2001:db8::1")).toBe("2001:db8:0:0::/64")
    expect(clientOf("::1")).toBe("0:0:0:0::/64")
    expect(clientOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
    expect(clientOf("::ffff:127.0.0.2")).toBe("127.0.0.2")
    expect(clientOf("127.0.0.2")).toBe("127.0.0.2")
    const failures = makeAuthFailures(2)
    failures.record("2001:db8:1:2::a", 0)
    failures.record("2001:db8:1:2::b", 0)
    expect(failures.refusedUntil("2001:db8:1:2::c", 1)).toBe(WINDOW_MS)
  })

  it("grants a throttled client one lookup per interval, whatever it asks, and any client that is not throttled all", () => {
    const failures = makeAuthFailures(2)
    expect(failures.takeLookup("192.0.2.1", 0)).toBe(true)
    failures.record("192.0.2.1", 0)
    failures.record("192.0.2.1", 10)
    expect(failures.takeLookup("192.0.2.1", 20)).toBe(true)
    for (let i = 0; i < 100; i++) expect(failures.takeLookup("192.0.2.1", 21 + i)).toBe(false)
    expect(failures.takeLookup("192.0.2.1", 20 + THROTTLED_LOOKUP_INTERVAL_MS)).toBe(true)
    expect(failures.takeLookup("192.0.2.1", 21 + THROTTLED_LOOKUP_INTERVAL_MS)).toBe(false)
    // Another client is not throttled; and the window's end ends the throttle.
    expect(failures.takeLookup("192.0.2.2", 30)).toBe(true)
    expect(failures.takeLookup("192.0.2.2", 31)).toBe(true)
    expect(failures.takeLookup("192.0.2.1", WINDOW_MS)).toBe(true)
    expect(failures.takeLookup("192.0.2.1", WINDOW_MS + 1)).toBe(true)
  })
})
