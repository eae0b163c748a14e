/** Another replica's NOTIFY reaches this replica's workers through the LISTEN connection. */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Queue } from "effect"
import { QueueSignal, RemoteWakeupsLive } from "../../src/mta/queue/QueueSignal.ts"
import { servicesOn } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { sleep } from "../support/net.ts"

describe("queue wake-ups across replicas", () => {
  it.live("wakes local subscribers when another connection NOTIFYs a channel", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* Effect.promise(freshDatabase)
      const received = yield* Effect.gen(function*() {
        const wakeups = yield* (yield* QueueSignal).subscribe
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
})
