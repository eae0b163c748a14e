/** Another replica's NOTIFY reaches this replica's workers through the LISTEN connection. */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Queue } from "effect"
import { QueueSignal, RemoteWakeupsLive } from "../../src/db/QueueSignal.ts"
import { servicesOn } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { sleep } from "../support/net.ts"

describe("queue wake-ups across replicas", () => {
  it.live("wakes local subscribers when another connection NOTIFYs a channel", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* Effect.promise(freshDatabase)
      const received = yield* Effect.gen(function*() {
        const wakeups = yield* (yield* QueueSignal).subscribe("herald_inbound")
        // Give the LISTEN session a moment to connect, then notify from a plain connection.
        for (let i = 0; i < 50; i++) {
          yield* Effect.promise(() => query(databaseUrl, "SELECT pg_notify('herald_inbound', '')"))
          const got = yield* Queue.take(wakeups).pipe(Effect.timeout(Duration.millis(200)), Effect.option)
          if (got._tag === "Some") return got.value
          yield* Effect.promise(() => sleep(50))
        }
        return null
      }).pipe(Effect.provide(RemoteWakeupsLive.pipe(Layer.provideMerge(servicesOn(databaseUrl)))), Effect.scoped)
      expect(received).toBe("herald_inbound")
    }), 60_000)

  it.live("a wake-up reaches only its own channel's workers, and this replica's NOTIFY echo is not a remote wake-up", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* Effect.promise(freshDatabase)
      const seen = yield* Effect.gen(function*() {
        const signal = yield* QueueSignal
        const inbound = yield* signal.subscribe("herald_inbound")
        const queue = yield* signal.subscribe("herald_queue")
        // First make sure the LISTEN session is up: another replica's NOTIFY arrives.
        let listening = false
        while (!listening) {
          yield* Effect.promise(() => query(databaseUrl, "SELECT pg_notify('herald_queue', 'another-replica')"))
          listening = (yield* Queue.take(queue).pipe(Effect.timeout(Duration.millis(200)), Effect.option))._tag === "Some"
        }
        yield* Effect.promise(() => sleep(200))
        yield* Queue.takeAll(queue)
        yield* signal.wake("herald_queue")
        const first = yield* Queue.take(queue)
        // The coalesced NOTIFY follows 25 ms later and comes back on the LISTEN connection.
        yield* Effect.promise(() => sleep(500))
        return { first, echoed: yield* Queue.size(queue), inbound: yield* Queue.size(inbound) }
      }).pipe(Effect.provide(RemoteWakeupsLive.pipe(Layer.provideMerge(servicesOn(databaseUrl)))), Effect.scoped)
      expect(seen).toEqual({ first: "herald_queue", echoed: 0, inbound: 0 })
    }), 60_000)
})
