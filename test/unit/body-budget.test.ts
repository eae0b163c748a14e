/**
 * The body budget's own rules (body-budget.ts), on its real semaphores: an account holds at most
 * its share across all its keys, a key at most its part of that, the public pages together at most
 * an account's share and one client address its part; room comes back when the holder's scope
 * closes, and a wait that is given up takes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, Scope } from "effect"
import { type BodyOwner, makeBodyBudget } from "../../src/http/body-budget.ts"

const MB = 1024 * 1024
const KB_PER_MB = 1024

/** 100 MB in all, an account 50 % of it, a key 50 % of its account's: 50 MB and 25 MB. */
const budget = () =>
  makeBodyBudget({ budgetBytes: 100 * MB, accountSharePercent: 50, keySharePercent: 50, maxJsonBytes: 10 * MB, maxBodyBytes: 1 * MB })

const key = (accountId: string, keyId: string): BodyOwner => ({ _tag: "Key", accountId, keyId })
const address = (ip: string): BodyOwner => ({ _tag: "Public", address: ip })

/** Lets waiting fibers go on: a hold passes through three semaphores, each a hop of the scheduler. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

/** Starts holding `mb` for `owner` in a scope of its own; `granted` says whether it got the room yet. */
const holder = (b: ReturnType<typeof budget>, owner: BodyOwner, mb: number) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const fiber = yield* Effect.fork(Scope.extend(b.hold(owner, mb * KB_PER_MB), scope))
    yield* settle
    const granted = Effect.map(Fiber.poll(fiber), Option.isSome)
    const release = Effect.zipRight(Fiber.interrupt(fiber), Scope.close(scope, Exit.void))
    return { granted, release }
  })

describe("makeBodyBudget", () => {
  it("sizes an account's and a key's parts from the percentages, never below the largest body", () => {
    const b = budget()
    expect(b.sizes).toEqual({ totalKb: 100 * KB_PER_MB, key: { group: 50 * KB_PER_MB, member: 25 * KB_PER_MB }, public: { group: 50 * KB_PER_MB, member: 25 * KB_PER_MB } })
    // The defaults: 32 MB in all and 15 MB sends: an account 16 MB, a key still one whole send.
    const defaults = makeBodyBudget({ budgetBytes: 32 * MB, accountSharePercent: 50, keySharePercent: 50, maxJsonBytes: 15 * MB, maxBodyBytes: 1 * MB })
    expect(defaults.sizes.key).toEqual({ group: 16 * KB_PER_MB, member: 15 * KB_PER_MB })
    expect(defaults.sizes.public).toEqual({ group: 16 * KB_PER_MB, member: 8 * KB_PER_MB })
  })

  it.effect("holds an account to its share across its keys, and a key to its part of that", () =>
    Effect.gen(function*() {
      const b = budget()
      const first = yield* holder(b, key("acct_a", "key_1"), 25)
      expect(yield* first.granted).toBe(true)
      // The same key again: its 25 MB part is taken.
      const sameKey = yield* holder(b, key("acct_a", "key_1"), 5)
      expect(yield* sameKey.granted).toBe(false)
      // Another key of the account: the account's other 25 MB.
      const second = yield* holder(b, key("acct_a", "key_2"), 25)
      expect(yield* second.granted).toBe(true)
      // A third key of the same account (accounts make their own keys): the account's 50 MB are taken.
      const third = yield* holder(b, key("acct_a", "key_3"), 5)
      expect(yield* third.granted).toBe(false)
      // Another account is not kept waiting: the other half of the budget is there.
      const other = yield* holder(b, key("acct_b", "key_9"), 25)
      expect(yield* other.granted).toBe(true)
      // Room comes back when a holder is done: the third key gets its turn.
      yield* first.release
      yield* settle
      expect(yield* third.granted).toBe(true)
      for (const h of [sameKey, second, third, other]) yield* h.release
      expect(b.partsInUse()).toBe(0)
    }))

  it.effect("counts the public pages as one account whose parts are client addresses", () =>
    Effect.gen(function*() {
      const b = budget()
      const one = yield* holder(b, address("192.0.2.1"), 25)
      expect(yield* one.granted).toBe(true)
      const sameAddress = yield* holder(b, address("192.0.2.1"), 1)
      expect(yield* sameAddress.granted).toBe(false)
      // An IPv6 client is one address by its /64.
      const v6 = yield* holder(b, address("2001:db8:1:2::a"), 25)
      const v6Again = yield* holder(b, address("2001:db8:1:2::b"), 1)
      expect(yield* v6.granted).toBe(true)
      expect(yield* v6Again.granted).toBe(false)
      // The public's 50 MB are taken; an account's key still gets its room.
      const third = yield* holder(b, address("198.51.100.7"), 1)
      expect(yield* third.granted).toBe(false)
      const account = yield* holder(b, key("acct_a", "key_1"), 25)
      expect(yield* account.granted).toBe(true)
      for (const h of [one, sameAddress, v6, v6Again, third, account]) yield* h.release
      expect(b.partsInUse()).toBe(0)
    }))

  it.effect("gives nothing away when a wait is given up (a client that went away)", () =>
    Effect.gen(function*() {
      const b = budget()
      const first = yield* holder(b, key("acct_a", "key_1"), 25)
      const waiting = yield* holder(b, key("acct_a", "key_1"), 25)
      expect(yield* waiting.granted).toBe(false)
      yield* waiting.release
      yield* first.release
      // All 25 MB of the key's part are there again.
      const again = yield* holder(b, key("acct_a", "key_1"), 25)
      expect(yield* again.granted).toBe(true)
      yield* again.release
      expect(b.partsInUse()).toBe(0)
    }))

  it.effect("holdNow (SMTP submission's messages) takes the room there is at once or nothing, and shares the parts with hold", () =>
    Effect.gen(function*() {
      const b = budget()
      const scope = yield* Scope.make()
      // 20 of the key's 25 MB, without waiting.
      expect(yield* Scope.extend(b.holdNow(key("acct_a", "key_1"), 20 * KB_PER_MB), scope)).toBe(true)
      // 10 more do not fit: refused at once, and nothing of them taken.
      const refusedScope = yield* Scope.make()
      expect(yield* Scope.extend(b.holdNow(key("acct_a", "key_1"), 10 * KB_PER_MB), refusedScope)).toBe(false)
      expect(yield* Scope.extend(b.holdNow(key("acct_a", "key_1"), 5 * KB_PER_MB), refusedScope)).toBe(true)
      // A waiting hold (an HTTP body) of the same key sees the same part: full, so it waits.
      const http = yield* holder(b, key("acct_a", "key_1"), 1)
      expect(yield* http.granted).toBe(false)
      // The messages' transactions end: their room goes back, and the HTTP body gets its turn.
      yield* Scope.close(scope, Exit.void)
      yield* Scope.close(refusedScope, Exit.void)
      yield* settle
      expect(yield* http.granted).toBe(true)
      yield* http.release
      expect(b.partsInUse()).toBe(0)
      // Nothing was kept: the whole part can be taken at once again.
      const again = yield* Scope.make()
      expect(yield* Scope.extend(b.holdNow(key("acct_a", "key_1"), 25 * KB_PER_MB), again)).toBe(true)
      yield* Scope.close(again, Exit.void)
    }))
})
