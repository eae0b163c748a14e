/**
 * The outbound MTA actor: claims due deliveries (FOR UPDATE SKIP LOCKED, leased), runs each
 * attempt in its own fiber under the destination's limits, keeps the leases of work in hand
 * fresh, and on shutdown gives unfinished work back at once. Wakes on the queue signal (new sends,
 * local at once, other replicas by NOTIFY) and polls every second for retries that fall due.
 */
import { Clock, Duration, Effect, Queue, Schedule } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { actorLayer } from "../lib/actor.ts"
import { randomBase62 } from "../lib/ids.ts"
import { Delivery } from "./Delivery.ts"
import { Destinations } from "./Destinations.ts"
import { MtaConfig } from "./MtaConfig.ts"
import { DeliveryQueue } from "./queue/DeliveryQueue.ts"
import { QueueSignal } from "./queue/QueueSignal.ts"

export const QUEUE_CHANNEL = "herald_queue"
const POLL = Duration.seconds(1)

export const MtaLive = actorLayer("mta", Effect.gen(function*() {
  const mta = yield* MtaConfig
  if (!mta.enabled) return yield* Effect.logInfo("outbound delivery is disabled (HERALD_MTA_ENABLED=false)")
  const config = yield* AppConfig
  const queue = yield* DeliveryQueue
  const delivery = yield* Delivery
  const destinations = yield* Destinations
  const signal = yield* QueueSignal
  const owner = `${config.hostname}/${process.pid}/${randomBase62(6)}`
  const inFlight = new Set<string>()
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  yield* Effect.addFinalizer(() =>
    Effect.flatMap(now, (at) => queue.release(owner, [...inFlight], at)).pipe(Effect.ignoreLogged))

  const refresh = Effect.gen(function*() {
    const at = yield* Clock.currentTimeMillis
    yield* queue.extend(owner, [...inFlight], new Date(at + mta.leaseMs))
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("lease refresh failed", cause)))
  // Refreshed at a quarter of the lease, so a slow GC or DB blip never lets a live lease lapse.
  yield* Effect.forkScoped(Effect.repeat(refresh, Schedule.spaced(Duration.millis(mta.leaseMs / 4))))

  const wakeups = yield* signal.subscribe("herald_queue")

  const step = Effect.gen(function*() {
    const free = mta.concurrency - inFlight.size
    if (free <= 0) return false
    const at = yield* now
    const claimed = yield* queue.claim(owner, at, new Date(at.getTime() + mta.leaseMs), free, yield* destinations.paused(at.getTime()))
    for (const d of claimed) {
      inFlight.add(d.id)
      yield* Effect.forkScoped(
        delivery.attempt(owner, d).pipe(
          Effect.catchAllCause((cause) => Effect.logError("delivery attempt failed; the lease will hand it out again", cause)),
          Effect.ensuring(Effect.sync(() => inFlight.delete(d.id))),
          Effect.annotateLogs({ delivery_id: d.id, recipient_domain: d.recipient_domain })
        )
      )
    }
    return claimed.length === free
  }).pipe(Effect.catchAllCause((cause) => Effect.logError("claim failed; retrying", cause).pipe(Effect.as(false))))

  yield* Effect.logInfo("outbound MTA started").pipe(Effect.annotateLogs({ owner, concurrency: mta.concurrency }))
  yield* Effect.forever(Effect.gen(function*() {
    const more = yield* step
    if (!more) yield* Queue.take(wakeups).pipe(Effect.timeout(POLL), Effect.ignore)
  }))
}))
