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
import { Duration, Effect, Layer, PubSub, type Queue, Redacted, Ref, Runtime, Schedule, type Scope } from "effect"
import pg from "pg"
import { randomBase62 } from "../lib/ids.ts"

/**
 * The channels replicas wake each other on: the delivery queue, inbound mail, webhook events, and
 * key changes (sent by a trigger, migration 0012: the key cache is emptied, src/platform/keys/).
 */
export const CHANNELS = ["herald_queue", "herald_inbound", "herald_events", "herald_keys"] as const
export type Channel = typeof CHANNELS[number]

const isChannel = (name: string): name is Channel => (CHANNELS as ReadonlyArray<string>).includes(name)

export interface Signal {
  /** This replica's id, the payload of its NOTIFYs: its own echo is not a remote wake-up. */
  readonly replicaId: string
  /** Call after committing new work for `channel`. */
  readonly wake: (channel: Channel) => Effect.Effect<void>
  readonly wakeLocal: (channel: string) => Effect.Effect<void>
  /**
   * A subscription that receives the channel name on every wake-up (local or remote) of that one
   * channel: a worker of one queue is not woken by another queue's work (every send used to wake
   * the inbound and webhook actors into an empty claim each).
   */
  readonly subscribe: (channel: Channel) => Effect.Effect<Queue.Dequeue<Channel>, never, Scope.Scope>
}

export class QueueSignal extends Effect.Service<QueueSignal>()("herald/QueueSignal", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hubs = new Map<Channel, PubSub.PubSub<Channel>>()
    for (const channel of CHANNELS) hubs.set(channel, yield* PubSub.sliding<Channel>(1024))
    const hubOf = (channel: Channel) => hubs.get(channel)!
    const replicaId = randomBase62(12)
    const pending = yield* Ref.make(new Set<Channel>())
    const scheduled = yield* Ref.make(false)
    const scope = yield* Effect.scope

    const flush = Effect.gen(function*() {
      yield* Ref.set(scheduled, false)
      const channels = yield* Ref.getAndSet(pending, new Set<Channel>())
      for (const channel of channels) yield* sql`SELECT pg_notify(${channel}, ${replicaId})`
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("queue notify failed", cause)))

    /** The first wake-up of a quiet period schedules one NOTIFY 25 ms later for all that follow. */
    const wake = (channel: Channel) =>
      Effect.gen(function*() {
        yield* PubSub.publish(hubOf(channel), channel)
        yield* Ref.update(pending, (s) => new Set(s).add(channel))
        if (!(yield* Ref.getAndSet(scheduled, true))) {
          yield* Effect.forkIn(Effect.delay(flush, Duration.millis(25)), scope)
        }
      })

    /** A wake-up that came from another replica: local workers only, no NOTIFY echoed back. */
    const wakeLocal = (channel: string) => isChannel(channel) ? PubSub.publish(hubOf(channel), channel).pipe(Effect.asVoid) : Effect.void

    return {
      replicaId,
      wake,
      wakeLocal,
      subscribe: (channel: Channel) => PubSub.subscribe(hubOf(channel))
    } satisfies Signal
  })
}) {}

/**
 * Other replicas' NOTIFYs wake this replica's workers. Part of the running appliance only (its
 * LISTEN connection is held for the process's life; a short CLI command needs none).
 *
 * The connection is Herald's own rather than the SQL client's `listen`: that one takes its error
 * handler off before closing a failed connection, so a termination notice arriving in between (a
 * database restart) became an unhandled `error` event. Here the handler stays for the client's
 * whole life, and a lost connection is simply made again a second later; meanwhile the workers
 * poll, as they always do.
 */
export const RemoteWakeupsLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const pgClient = yield* PgClient.PgClient
    const signal = yield* QueueSignal
    const wake = Runtime.runSync(yield* Effect.runtime<never>())
    const { url, host, port, username, password, database } = pgClient.config
    const options = url === undefined
      ? { host, port, user: username, password: password === undefined ? undefined : Redacted.value(password), database }
      : { connectionString: Redacted.value(url) }

    /** One LISTEN session: ends (successfully) when its connection is lost or the scope closes. */
    const session = Effect.async<void>((resume) => {
      const client = new pg.Client(options)
      let ended = false
      const end = () => {
        if (!ended) {
          ended = true
          client.end().catch(() => undefined)
          resume(Effect.void)
        }
      }
      client.on("error", end)
      client.on("end", end)
      client.on("notification", (message) => {
        if (message.payload !== signal.replicaId) wake(signal.wakeLocal(message.channel))
      })
      client.connect()
        .then(() => client.query(CHANNELS.map((channel) => `LISTEN ${channel}`).join("; ")))
        .catch(end)
      return Effect.promise(() => client.end().catch(() => undefined))
    })

    yield* Effect.forkScoped(Effect.repeat(session, Schedule.spaced(Duration.seconds(1))))
  })
)
