/**
 * The webhook dispatcher actor: turns outbox events into deliveries for each key's endpoint and
 * delivers due ones (leased claims, so replicas never run the same attempt at once). Queued
 * retries wait in the database, not in memory: a receiver down for hours costs rows, not RAM.
 *
 * Fairness: at most CONCURRENCY attempts run at once (a delivery waiting between burst retries
 * holds no slot), and a key has at most PER_KEY workers in this replica, each with one delivery
 * in progress (its burst included) and at most BATCH leased; the rest of its work waits in the
 * database. A dead or hanging receiver thus slows only its own key, and its in-memory cost is
 * bounded. A worker leases its key's due deliveries BATCH at a time and hands finished attempts
 * to one writer that records them many per statement, so a busy key does not wait on the
 * database between POSTs. A worker whose attempt fails gives its unstarted leases back at once.
 */
import { Chunk, Clock, Duration, Effect, Queue, Schedule } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { actorLayer } from "../lib/actor.ts"
import { randomBase62 } from "../lib/ids.ts"
import { QueueSignal } from "../mta/queue/QueueSignal.ts"
import { WebhookSender } from "./WebhookSender.ts"
import { type HeldDelivery, type Outcome, WebhookStore } from "./WebhookStore.ts"

export const CONCURRENCY = 32
export const PER_KEY = 4
const BATCH = 16
const LEASE_MS = 90_000
/** A worker starts no leased delivery whose lease is this close to its end; it leases afresh. */
const LEASE_MARGIN_MS = 20_000
const POLL = Duration.millis(250)
const FAN_OUT_BATCH = 200

export const DispatcherLive = actorLayer("webhooks", Effect.gen(function*() {
  const config = yield* AppConfig
  const store = yield* WebhookStore
  const sender = yield* WebhookSender
  const signal = yield* QueueSignal
  const wakeups = yield* signal.subscribe("herald_events")
  const owner = `${config.hostname}/${process.pid}/${randomBase62(6)}`
  const slots = yield* Effect.makeSemaphore(CONCURRENCY)
  /** Workers per key. */
  const held = new Map<string, number>()
  /** Deliveries attempting or waiting for a slot: what claims must leave room for. */
  let active = 0
  const kick = yield* Queue.sliding<void>(1)
  const wake = Queue.offer(kick, undefined)
  yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(wakeups), wake)))
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  // The writer of finished attempts: many per statement; what is queued at shutdown is written
  // before the scope closes (workers stop first: their fibers were forked later).
  const outcomes = yield* Queue.unbounded<Outcome>()
  const write = (batch: ReadonlyArray<Outcome>) =>
    batch.length === 0 ? Effect.void : store.recordMany(batch).pipe(
      Effect.retry(Schedule.exponential(Duration.millis(100)).pipe(Schedule.intersect(Schedule.recurs(5)))),
      Effect.catchAllCause((cause) => Effect.logError("webhook attempts not recorded; their leases hand them out again", cause))
    )
  yield* Effect.forkScoped(
    Effect.forever(Effect.flatMap(Queue.takeBetween(outcomes, 1, 500), (chunk) => write(Chunk.toReadonlyArray(chunk)))).pipe(
      Effect.onInterrupt(() => Effect.flatMap(Queue.takeAll(outcomes), (chunk) => write(Chunk.toReadonlyArray(chunk))))
    )
  )
  const recordDone = (outcome: Outcome) => Queue.offer(outcomes, outcome).pipe(Effect.asVoid)

  /**
   * The slot discipline of one delivery: a claim made by the main loop has already counted its
   * first attempt in `active` (`reserved`), so the next claim leaves room for it; every other
   * attempt counts itself.
   */
  const slotsFor = (reserved: boolean) => {
    let counted = reserved
    const withSlot = <A, E, R>(attempt: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => (counted ? (counted = false) : (active += 1))),
        () => slots.withPermits(1)(attempt),
        () => Effect.sync(() => (active -= 1))
      )
    const unreserve = Effect.sync(() => {
      if (counted) active -= 1
      counted = false
    })
    return { withSlot, unreserve }
  }

  const adjust = (key: string, by: number) => {
    const n = (held.get(key) ?? 0) + by
    if (n > 0) held.set(key, n)
    else held.delete(key)
  }

  /** One of a key's workers: the claimed delivery, then the key's due ones, BATCH at a time while slots are free. */
  const worker = (first: HeldDelivery) => {
    let current: HeldDelivery | undefined
    let batch: Array<HeldDelivery> = [first]
    const giveBack = (at: Date) => {
      const ids = [...(current === undefined ? [] : [current.id]), ...batch.map((d) => d.id)]
      batch = []
      return store.release(ids, owner, at)
    }
    return Effect.gen(function*() {
      let reserved = true
      let leasedAt = yield* Clock.currentTimeMillis
      while (batch.length > 0) {
        if ((yield* Clock.currentTimeMillis) - leasedAt > LEASE_MS - LEASE_MARGIN_MS) {
          yield* giveBack(yield* now)
        } else {
          const d = batch.shift()!
          current = d
          const { unreserve, withSlot } = slotsFor(reserved)
          reserved = false
          const ok = yield* sender.deliver(d, { owner, withSlot, waiting: wake, recordDone }).pipe(
            Effect.catchAllCause((cause) => Effect.as(Effect.logError(`webhook delivery ${d.id} failed; its lease hands it out again`, cause), false)),
            Effect.ensuring(unreserve)
          )
          current = undefined
          // A receiver in trouble holds no more of its key's work than the delivery it fails.
          if (!ok) yield* giveBack(yield* now)
          if (batch.length > 0) continue
          if (active >= CONCURRENCY) return
          // More of this key's work: a batch after a success, one delivery (a probe) after a failure.
          const at = yield* now
          leasedAt = at.getTime()
          batch = [...(yield* store.claimBatch(owner, first.key_id, at, new Date(leasedAt + LEASE_MS), ok ? BATCH : 1))]
        }
      }
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("webhook worker stopped; its leases hand its work out again", cause)),
      // Shutting down: give leased deliveries back at once rather than when their leases end.
      Effect.onInterrupt(() => Effect.flatMap(now, giveBack).pipe(Effect.ignore)),
      Effect.ensuring(Effect.zipRight(Effect.sync(() => adjust(first.key_id, -1)), wake))
    )
  }

  const step = Effect.gen(function*() {
    const at = yield* now
    if (yield* store.hasUndispatched) {
      if ((yield* store.fanOut(at, FAN_OUT_BATCH)) === FAN_OUT_BATCH) yield* wake
    }
    const free = CONCURRENCY - active
    if (free <= 0) return
    const due = yield* store.claim(owner, at, new Date(at.getTime() + LEASE_MS), free, PER_KEY, held)
    active += due.length
    for (const d of due) {
      adjust(d.key_id, 1)
      yield* Effect.forkScoped(worker(d))
    }
  }).pipe(Effect.catchAllCause((cause) => Effect.logError("webhook dispatch failed; retrying", cause)))

  yield* Effect.forever(step.pipe(Effect.zipRight(Queue.take(kick).pipe(Effect.timeout(POLL), Effect.ignore))))
}))
