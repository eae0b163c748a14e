/**
 * Wakes the workers of a queue when new work is committed, without a NOTIFY in the committing
 * transaction: PostgreSQL serialises the commits of all notifying transactions on one global lock
 * held through the WAL flush (measured: sends capped at ~160/s). Instead a committed write calls
 * `wake` (after its commit): local workers wake at once, and a single coalesced NOTIFY, sent at
 * most every 25 ms from outside any transaction, wakes the other replicas. Workers also poll, so
 * a lost signal only delays work.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, PubSub, type Queue, Ref, Schedule, Stream } from "effect"

/** The channels replicas wake each other on. */
export const CHANNELS = ["herald_queue", "herald_inbound", "herald_events"] as const

export interface Signal {
  /** Call after committing new work for `channel`. */
  readonly wake: (channel: string) => Effect.Effect<void>
  /** A subscription that receives the channel name on every wake-up (local or remote). */
  readonly subscribe: Effect.Effect<Queue.Dequeue<string>, never, import("effect").Scope.Scope>
}

export class QueueSignal extends Effect.Service<QueueSignal>()("herald/QueueSignal", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const hub = yield* PubSub.sliding<string>(1024)
    // Other replicas' NOTIFYs wake this replica's workers (only locally: no echo back).
    for (const channel of CHANNELS) {
      yield* Effect.forkScoped(
        pg.listen(channel).pipe(
          Stream.runForEach(() => PubSub.publish(hub, channel)),
          Effect.catchAllCause((cause) => Effect.logWarning("LISTEN stopped; workers fall back to polling", cause))
        )
      )
    }
    const pending = yield* Ref.make(new Set<string>())

    const flush = Effect.gen(function*() {
      const channels = yield* Ref.getAndSet(pending, new Set<string>())
      for (const channel of channels) yield* sql`SELECT pg_notify(${channel}, '')`
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("queue notify failed", cause)))
    yield* Effect.forkScoped(Effect.repeat(flush, Schedule.spaced(Duration.millis(25))))

    const wake = (channel: string) =>
      PubSub.publish(hub, channel).pipe(Effect.zipRight(Ref.update(pending, (s) => new Set(s).add(channel))))

    return { wake, subscribe: PubSub.subscribe(hub) } satisfies Signal
  })
}) {}

