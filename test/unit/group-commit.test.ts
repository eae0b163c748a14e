/**
 * Group commit (src/lib/group-commit.ts), how the MX listener and the MTA write what arrives
 * together with one statement: items submitted while a write is under way share the next write,
 * each submitter resumes with its own item's result only after the write that holds it, groups
 * are bounded by items and bytes, a failed group is redone item by item so that one bad item
 * fails alone, and submitters still waiting at shutdown are interrupted rather than left hanging.
 */
import { Deferred, Effect, Exit, Fiber, FiberStatus, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { makeGroupCommit } from "../../src/lib/group-commit.ts"

interface Item {
  readonly name: string
  readonly size: number
}

const item = (name: string, size = 1): Item => ({ name, size })

/** A writer that records its groups and refuses any group holding a "bad" item. */
const recorder = () => {
  const groups: Array<ReadonlyArray<string>> = []
  const write = (items: ReadonlyArray<Item>) =>
    Effect.sync(() => {
      groups.push(items.map((i) => i.name))
      if (items.some((i) => i.name.startsWith("bad"))) throw new Error("refused")
      return items.map((i) => `stored ${i.name}`)
    })
  return { groups, write }
}

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))

describe("group commit", () => {
  it("writes items that arrive while a write is under way as one group, each submitter getting its own result", async () => {
    const groups: Array<ReadonlyArray<string>> = []
    const result = await run(Effect.gen(function*() {
      const firstStarted = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const group = yield* makeGroupCommit({
        write: (items: ReadonlyArray<Item>) =>
          Effect.gen(function*() {
            groups.push(items.map((i) => i.name))
            if (groups.length === 1) {
              yield* Deferred.succeed(firstStarted, undefined)
              yield* Deferred.await(release)
            }
            return items.map((i) => `stored ${i.name}`)
          }),
        maxItems: 10
      })
      const first = yield* Effect.fork(group.submit(item("a")))
      yield* Deferred.await(firstStarted)
      const rest = yield* Effect.forEach(["b", "c", "d"], (n) => Effect.fork(group.submit(item(n))))
      // A submitter suspends only once its item waits in the group's queue.
      yield* Effect.forEach(rest, (f) => f.status).pipe(
        Effect.zipLeft(Effect.yieldNow()),
        Effect.repeat({ until: (statuses) => statuses.every(FiberStatus.isSuspended) })
      )
      yield* Deferred.succeed(release, undefined)
      return [yield* Fiber.join(first), ...(yield* Effect.forEach(rest, Fiber.join))]
    }))
    expect(result).toEqual(["stored a", "stored b", "stored c", "stored d"])
    expect(groups).toEqual([["a"], ["b", "c", "d"]])
  })

  it("bounds a group by items and by bytes, an item larger than the byte bound going alone", async () => {
    const { groups, write } = recorder()
    await run(Effect.gen(function*() {
      const group = yield* makeGroupCommit({ write, maxItems: 3, maxBytes: 10, sizeOf: (i: Item) => i.size })
      yield* Effect.all([item("a", 4), item("b", 4), item("c", 4), item("big", 50), item("d", 1), item("e", 1), item("f", 1)].map(group.submit), {
        concurrency: "unbounded"
      })
    }))
    expect(groups.flat()).toEqual(["a", "b", "c", "big", "d", "e", "f"])
    for (const g of groups) expect(g.length).toBeLessThanOrEqual(3)
    expect(groups).toContainEqual(["big"])
    expect(groups.some((g) => g.includes("a") && g.includes("b") && g.includes("c"))).toBe(false)
  })

  it("redoes a failed group item by item: only the bad item's submitter sees the failure", async () => {
    const { groups, write } = recorder()
    const exits = await run(Effect.gen(function*() {
      const group = yield* makeGroupCommit({ write, maxItems: 10 })
      return yield* Effect.all(["a", "bad", "c"].map((n) => Effect.exit(group.submit(item(n)))), { concurrency: "unbounded" })
    }))
    expect(exits.map(Exit.isSuccess)).toEqual([true, false, true])
    expect(exits[0]).toEqual(Exit.succeed("stored a"))
    expect(groups.filter((g) => g.length === 1).map((g) => g[0]).sort()).toEqual(["a", "bad", "c"])
  })

  it("interrupts submitters still waiting when its scope closes", async () => {
    const scope = Effect.runSync(Scope.make())
    const never = Effect.never as Effect.Effect<ReadonlyArray<string>>
    const group = await Effect.runPromise(Scope.extend(makeGroupCommit({ write: (_: ReadonlyArray<Item>) => never, maxItems: 1 }), scope))
    const exits = await Effect.runPromise(Effect.gen(function*() {
      const fibers = yield* Effect.forEach(["a", "b"], (n) => Effect.fork(group.submit(item(n))))
      yield* Effect.forEach(fibers, (f) => f.status).pipe(
        Effect.zipLeft(Effect.yieldNow()),
        Effect.repeat({ until: (statuses) => statuses.every(FiberStatus.isSuspended) })
      )
      yield* Scope.close(scope, Exit.void)
      return yield* Effect.forEach(fibers, Fiber.await)
    }))
    // "a" was being written when the scope closed, "b" still waited for a writer.
    expect(exits.every(Exit.isInterrupted)).toBe(true)
  })
  it("offers items with plain callbacks (the tracking front door's fast path): each done once, with its own result, after its write", async () => {
    const { groups, write } = recorder()
    const exits = await run(Effect.gen(function*() {
      const group = yield* makeGroupCommit({ write, maxItems: 10 })
      return yield* Effect.promise(() =>
        Promise.all(["a", "bad", "c"].map((n) =>
          new Promise<Array<Exit.Exit<string, unknown>>>((resolve) => {
            const calls: Array<Exit.Exit<string, unknown>> = []
            group.offer(item(n), (exit) => {
              calls.push(exit)
              // Called again by mistake, the caller would see two calls.
              setTimeout(() => resolve(calls), 20)
            })
          })
        ))
      )
    }))
    expect(exits.map((calls) => calls.length)).toEqual([1, 1, 1])
    expect(exits[0]![0]).toEqual(Exit.succeed("stored a"))
    expect(Exit.isFailure(exits[1]![0]!)).toBe(true)
    expect(exits[2]![0]).toEqual(Exit.succeed("stored c"))
    expect(new Set(groups.flat())).toEqual(new Set(["a", "bad", "c"]))
  })
})
