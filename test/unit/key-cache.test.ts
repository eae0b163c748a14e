/**
 * The key cache's own rules: remembered until the time limit, forgotten whole on clear, bounded;
 * and the tokens it recognizes as valid before (a reason to look one up for a throttled address).
 */
import { describe, expect, it } from "vitest"
import { KEY_CACHE_TTL_MS, makeKeyCache, RECOGNIZED_TTL_MS } from "../../src/platform/keys/key-cache.ts"

describe("makeKeyCache", () => {
  it("answers a remembered digest until the time limit, then forgets it", () => {
    const cache = makeKeyCache<string>()
    cache.set("d1", { principal: "key_1", lastUsedAt: null }, 1_000, cache.generation())
    expect(cache.get("d1", 1_000 + KEY_CACHE_TTL_MS - 1)?.principal).toBe("key_1")
    expect(cache.get("d1", 1_000 + KEY_CACHE_TTL_MS)).toBeUndefined()
    expect(cache.size()).toBe(0)
  })

  it("forgets everything on clear", () => {
    const cache = makeKeyCache<string>()
    cache.set("d1", { principal: "key_1", lastUsedAt: null }, 0, cache.generation())
    cache.set("d2", { principal: "key_2", lastUsedAt: null }, 0, cache.generation())
    cache.clear()
    expect(cache.get("d1", 1)).toBeUndefined()
    expect(cache.get("d2", 1)).toBeUndefined()
  })

  it("does not remember a lookup that was under way when it was emptied", () => {
    const cache = makeKeyCache<string>()
    const readAt = cache.generation()
    cache.clear() // a revocation announced while the lookup ran
    cache.set("d1", { principal: "key_1", lastUsedAt: null }, 0, readAt)
    expect(cache.get("d1", 1)).toBeUndefined()
    cache.set("d1", { principal: "key_1", lastUsedAt: null }, 0, cache.generation())
    expect(cache.get("d1", 1)?.principal).toBe("key_1")
  })

  it("starts afresh rather than growing past its bound", () => {
    const cache = makeKeyCache<number>()
    for (let i = 0; i < 10_000; i++) cache.set(`d${i}`, { principal: i, lastUsedAt: null }, 0, cache.generation())
    expect(cache.size()).toBe(10_000)
    cache.set("one-more", { principal: -1, lastUsedAt: null }, 0, cache.generation())
    expect(cache.size()).toBe(1)
    expect(cache.get("one-more", 1)?.principal).toBe(-1)
  })

  it("recognizes a token that was valid for a day, across clears, until a lookup of it fails", () => {
    const cache = makeKeyCache<string>()
    expect(cache.recognizes("d1", 0)).toBe(false)
    cache.recognize("d1", 1_000)
    // Emptied by a key change: no longer trusted, still recognized (so still looked up).
    cache.clear()
    expect(cache.get("d1", 2_000)).toBeUndefined()
    expect(cache.recognizes("d1", 2_000)).toBe(true)
    expect(cache.recognizes("d1", 1_000 + RECOGNIZED_TTL_MS)).toBe(false)
    cache.recognize("d2", 0)
    cache.unrecognize("d2")
    expect(cache.recognizes("d2", 1)).toBe(false)
  })
})
