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
import { Duration, Effect, Layer, PubSub, type Queue, Ref, Stream } from "effect"

/** The channels replicas wake each other on. */
export const CHANNELS = ["herald_queue", "herald_inbound", "herald_events"] as const

export interface Signal {
  /** Call after committing new work for `channel`. */
  readonly wake: (channel: string) => Effect.Effect<void>
  readonly wakeLocal: (channel: string) => Effect.Effect<void>
  /** A subscription that receives the channel name on every wake-up (local or remote). */
  readonly subscribe: Effect.Effect<Queue.Dequeue<string>, never, import("effect").Scope.Scope>
}

export class QueueSignal extends Effect.Service<QueueSignal>()("herald/QueueSignal", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hub = yield* PubSub.sliding<string>(1024)
    const pending = yield* Ref.make(new Set<string>())
    const scheduled = yield* Ref.make(false)
    const scope = yield* Effect.scope

    const flush = Effect.gen(function*() {
      yield* Ref.set(scheduled, false)
      const channels = yield* Ref.getAndSet(pending, new Set<string>())
      for (const channel of channels) yield* sql`SELECT pg_notify(${channel}, '')`
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("queue notify failed", cause)))

    /** The first wake-up of a quiet period schedules one NOTIFY 25 ms later for all that follow. */
    const wake = (channel: string) =>
      Effect.gen(function*() {
        yield* PubSub.publish(hub, channel)
        yield* Ref.update(pending, (s) => new Set(s).add(channel))
        if (!(yield* Ref.getAndSet(scheduled, true))) {
          yield* Effect.forkIn(Effect.delay(flush, Duration.millis(25)), scope)
        }
      })

    /** A wake-up that came from another replica: local workers only, no NOTIFY echoed back. */
    const wakeLocal = (channel: string) => PubSub.publish(hub, channel).pipe(Effect.asVoid)

    return { wake, wakeLocal, subscribe: PubSub.subscribe(hub) } satisfies Signal
  })
}) {}

/**
 * Other replicas' NOTIFYs wake this replica's workers. Part of the running appliance only (its
 * LISTEN connections are held for the process's life; a short CLI command needs none).
 */
export const RemoteWakeupsLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const pg = yield* PgClient.PgClient
    const signal = yield* QueueSignal
    for (const channel of CHANNELS) {
      yield* Effect.forkScoped(
        pg.listen(channel).pipe(
          Stream.runForEach(() => signal.wakeLocal(channel)),
          Effect.catchAllCause((cause) => Effect.logWarning("LISTEN stopped; workers fall back to polling", cause))
        )
      )
    }
  })
)
