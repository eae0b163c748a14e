/**
 * The webhook dispatcher actor: turns outbox events into deliveries for each key's endpoint and
 * delivers due ones (leased claims, so replicas never run the same attempt at once). Queued
 * retries wait in the database, not in memory: a receiver down for hours costs rows, not RAM.
 *
 * Fairness: at most CONCURRENCY attempts run at once (a delivery waiting between burst retries
 * holds no slot), and a key has at most PER_KEY workers in this replica, each with one delivery
 * in progress (its burst included), sharing the key's lane: at most LANE_CAP leased deliveries
 * waiting in memory (QUEUED_CAP in all lanes); the rest of its work waits in the database. A dead
 * or hanging receiver thus slows only its own key, and its in-memory cost is bounded: a failed
 * attempt gives the lane's unstarted leases back at once, and until the key succeeds again its
 * workers lease one delivery at a time (a probe).
 *
 * Under load the database is the cost: each statement a round trip, each leased or recorded
 * delivery a row version with its index entries (measured: a claim ≈ 0.1–0.2 ms of server time
 * per row). So the fan-out leases a healthy key's new events to its lane itself, without a claim
 * (unless older deliveries of the key wait due: they go first); a lane with a backlog claims
 * BATCH at a time before it runs dry, beside its workers rather than in their way; and finished
 * attempts go to one writer that records many per statement. Before: ~0.3 statements and 0.75 ms
 * of appliance CPU per delivered event in bench:webhooks; after: ~0.07 and ~0.45 ms.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Duration, Effect, Fiber, Queue, Schedule } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { actorLayer } from "../lib/actor.ts"
import { randomBase62 } from "../lib/ids.ts"
import { QueueSignal } from "../db/QueueSignal.ts"
import { makeSlots } from "./slots.ts"
import { WebhookSender } from "./WebhookSender.ts"
import { type HeldDelivery, type Outcome, WebhookStore } from "./WebhookStore.ts"

export const CONCURRENCY = 32
export const PER_KEY = 4
const BATCH = 32
/** A healthy lane with this few deliveries left is refilled while its workers go on. */
const LOW_WATER = 16
/** Leased deliveries waiting in one key's lane, and in all lanes together: the memory bound. */
const LANE_CAP = 64
const QUEUED_CAP = 512
const LANE_IDLE_MS = 10_000
const LEASE_MS = 90_000
/** A worker starts no leased delivery whose lease is this close to its end; it leases afresh. */
const LEASE_MARGIN_MS = 20_000
/**
 * How often, without a wake-up, the outbox is looked at (writers of events do not wake this
 * actor, so this bounds their delay; measured at 100 events/s, a 100 ms poll halved the median
 * delay but made fan-outs and records of fewer events: 0.8 → 1.3 statements per event) and due
 * deliveries are claimed across keys (retries falling due, leases ending).
 */
const POLL = Duration.millis(250)
const FAN_OUT_BATCH = 200
/** Finished attempts are recorded at most this many per statement, gathered for at least GATHER. */
const WRITE_BATCH = 500
const GATHER = Duration.millis(10)

const byKey = (deliveries: ReadonlyArray<HeldDelivery>) => {
  const groups = new Map<string, Array<HeldDelivery>>()
  for (const d of deliveries) {
    const group = groups.get(d.key_id)
    if (group === undefined) groups.set(d.key_id, [d])
    else group.push(d)
  }
  return groups
}

/** One key's work in this replica: its workers and the deliveries leased for them, oldest first. */
interface Lane {
  workers: number
  readonly queue: Array<{ readonly delivery: HeldDelivery; readonly leasedAt: number }>
  /** The key's last finished attempt here succeeded: it may lease more than a probe. */
  healthy: boolean
  /** The claim under way for this lane, which answers how many it leased. */
  refill: Fiber.Fiber<number, SqlError> | undefined
  /**
   * The key's last claim was full (or came from the dispatcher's claim across keys): more may
   * wait in the database, worth claiming before the lane runs dry. Otherwise its new work comes
   * from the fan-out and the dispatcher's claims, and its workers leave when it runs dry: claims
   * that find nothing cost a statement every few deliveries at a trickle of events.
   */
  backlog: boolean
  /** When its last worker left (epoch ms): an idle lane is kept LANE_IDLE_MS, so the fan-out can lease to it ahead. */
  idleSince: number
}

export const DispatcherLive = actorLayer("webhooks", Effect.gen(function*() {
  const config = yield* AppConfig
  const store = yield* WebhookStore
  const sender = yield* WebhookSender
  const signal = yield* QueueSignal
  const wakeups = yield* signal.subscribe("herald_events")
  const owner = `${config.hostname}/${process.pid}/${randomBase62(6)}`
  const scope = yield* Effect.scope
  const slots = makeSlots(CONCURRENCY)
  const lanes = new Map<string, Lane>()
  /** Deliveries waiting in all lanes. */
  let queued = 0
  /** Workers started and yet to attempt: with the attempts running or waiting for a slot, what claims leave room for. */
  let reserved = 0
  const active = () => slots.busy() + reserved
  const kick = yield* Queue.sliding<void>(1)
  const wake = Queue.offer(kick, undefined)
  /**
   * Whether the next step claims across keys: after a wake-up from elsewhere (another replica, a
   * test event), new deliveries the fan-out left unleased, or a slot freed while work waited for
   * one, and at least every POLL. Other wake-ups (a worker leaving) only fan out what has arrived:
   * at a trickle of events, a claim per wake-up was most of the dispatcher's statements.
   */
  let claimWanted = true
  let lastClaim = 0
  /** The last claim filled every free slot: more may be waiting for one. */
  let starved = false
  const wakeToClaim = Effect.suspend(() => {
    claimWanted = true
    return wake
  })
  const slotFreed = Effect.suspend(() => (starved ? wakeToClaim : wake))
  yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(wakeups), wakeToClaim)))
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
  const leaseEnd = (at: Date) => new Date(at.getTime() + LEASE_MS)

  // The writer of finished attempts: they gather in a plain array — while a statement is under
  // way, and for GATHER after the first arrives — and go many per statement. Measured: an Effect
  // queue whose taker woke for every attempt cost ~50 µs CPU per attempt, and the statements of
  // small batches were most of the dispatcher's round trips. What is left at shutdown is written
  // before the scope closes (workers stop first: their fibers were forked later).
  let finished: Array<Outcome> = []
  const arrived = yield* Effect.makeLatch(false)
  const recordDone = (outcome: Outcome) => {
    finished.push(outcome)
    if (finished.length === 1) arrived.unsafeOpen()
  }
  const takeFinished = () => {
    arrived.unsafeClose()
    const batch = finished.length <= WRITE_BATCH ? finished : finished.slice(0, WRITE_BATCH)
    finished = finished.length <= WRITE_BATCH ? [] : finished.slice(WRITE_BATCH)
    if (finished.length > 0) arrived.unsafeOpen()
    return batch
  }
  const write = (batch: ReadonlyArray<Outcome>) =>
    batch.length === 0 ? Effect.void : store.recordMany(batch).pipe(
      Effect.retry(Schedule.exponential(Duration.millis(100)).pipe(Schedule.intersect(Schedule.recurs(5)))),
      Effect.catchAllCause((cause) => Effect.logError("webhook attempts not recorded; their leases hand them out again", cause))
    )
  // Gathering is batching, not a delay of the ladder's: it runs on the real clock even under a test clock.
  const gather = Effect.sleep(GATHER).pipe(Effect.withClock(Clock.make()))
  yield* Effect.forkScoped(
    Effect.forever(arrived.await.pipe(Effect.zipRight(gather), Effect.zipRight(Effect.suspend(() => write(takeFinished()))))).pipe(
      Effect.onInterrupt(() => Effect.suspend(() => write(finished.splice(0))))
    )
  )

  const laneOf = (keyId: string) => {
    let lane = lanes.get(keyId)
    if (lane === undefined) {
      lane = { workers: 0, queue: [], healthy: false, refill: undefined, backlog: true, idleSince: 0 }
      lanes.set(keyId, lane)
    }
    return lane
  }
  const enqueue = (lane: Lane, deliveries: ReadonlyArray<HeldDelivery>, leasedAt: number) => {
    for (const delivery of deliveries) lane.queue.push({ delivery, leasedAt })
    queued += deliveries.length
  }
  const takeQueued = (lane: Lane) => {
    queued -= lane.queue.length
    return lane.queue.splice(0).map((q) => q.delivery)
  }
  const giveBack = (deliveries: ReadonlyArray<HeldDelivery>) =>
    Effect.flatMap(now, (at) => store.release(deliveries.map((d) => d.id), owner, at))

  /**
   * Leases more of a key's due deliveries into its lane: BATCH after a success, one (a probe) after
   * a failure. Runs beside the lane's workers (when the lane runs low and the key has a backlog),
   * so a busy key does not wait on the claim's round trip.
   */
  const refill = (keyId: string, lane: Lane) =>
    Effect.gen(function*() {
      const at = yield* now
      const room = lane.healthy ? Math.max(1, Math.min(BATCH, LANE_CAP - lane.queue.length, QUEUED_CAP - queued)) : 1
      const leased = yield* store.claimBatch(owner, keyId, at, leaseEnd(at), room)
      lane.backlog = leased.length === room
      // Every worker of the lane left meanwhile: back to the database.
      if (lane.workers === 0) yield* giveBack(leased)
      else enqueue(lane, leased, at.getTime())
      return leased.length
    }).pipe(Effect.ensuring(Effect.sync(() => (lane.refill = undefined))))
  const startRefill = (keyId: string, lane: Lane) =>
    Effect.map(Effect.forkIn(refill(keyId, lane), scope), (fiber) => (lane.refill = fiber))

  /**
   * One of a key's workers: takes the lane's leased deliveries one by one. A lane whose key has a
   * backlog is refilled when it runs low (if healthy) or empty; without one, the workers leave
   * when it is empty. A worker is counted in `reserved` from its start until its first attempt.
   */
  const worker = (keyId: string, lane: Lane) => {
    let current: HeldDelivery | undefined
    let unstarted = true
    const started = () => {
      if (unstarted) reserved -= 1
      unstarted = false
    }
    // A failed attempt starting its burst: the key is in trouble from now, not when the burst ends.
    const failing = Effect.suspend(() => {
      lane.healthy = false
      const released = giveBack(takeQueued(lane)).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("webhook leases not given back; they end on their own", cause))
      )
      return Effect.zipRight(released, slotFreed)
    })
    const options = { owner, withSlot: slots.withSlot, waiting: failing, recordDone }
    return Effect.gen(function*() {
      for (;;) {
        if (lane.healthy && lane.backlog && lane.refill === undefined && lane.queue.length <= LOW_WATER) yield* startRefill(keyId, lane)
        const next = lane.queue.shift()
        if (next === undefined) {
          // Nothing leased: wait for the claim under way, or make one if the key may have more (and
          // slots are free); else leave — the fan-out and the dispatcher's claims bring new work.
          if (lane.refill === undefined && (!lane.backlog || active() >= CONCURRENCY)) return
          const refilling = lane.refill ?? (yield* startRefill(keyId, lane))
          if ((yield* Fiber.join(refilling)) === 0 && lane.queue.length === 0) return
          continue
        }
        queued -= 1
        if ((yield* Clock.currentTimeMillis) - next.leasedAt > LEASE_MS - LEASE_MARGIN_MS) {
          yield* giveBack([next.delivery])
          continue
        }
        current = next.delivery
        started()
        const ok = yield* sender.deliver(current, options).pipe(
          Effect.catchAllCause((cause) => Effect.as(Effect.logError(`webhook delivery ${next.delivery.id} failed; its lease hands it out again`, cause), false))
        )
        current = undefined
        lane.healthy = ok
        // A receiver in trouble holds no more of its key's work than the deliveries it is failing.
        if (!ok) yield* giveBack(takeQueued(lane))
      }
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("webhook worker stopped; its leases hand its work out again", cause)),
      // Shutting down: give leased deliveries back at once rather than when their leases end.
      Effect.onInterrupt(() => giveBack([...(current === undefined ? [] : [current]), ...takeQueued(lane)]).pipe(Effect.ignore)),
      Effect.ensuring(Effect.clockWith((clock) => {
        started()
        lane.workers -= 1
        if (lane.workers > 0) return slotFreed
        lane.idleSince = clock.unsafeCurrentTimeMillis()
        // Leased to a lane whose last worker was already leaving: back to the database.
        return Effect.zipRight(giveBack(takeQueued(lane)).pipe(Effect.ignore), slotFreed)
      }))
    )
  }

  const startWorkers = (keyId: string, lane: Lane, n: number) =>
    Effect.gen(function*() {
      for (let i = 0; i < n; i++) {
        lane.workers += 1
        reserved += 1
        yield* Effect.forkScoped(worker(keyId, lane))
      }
    })

  /** How many of each key's new events the fan-out may lease straight to its lane (a healthy one, idle or not). */
  const roomAhead = () => {
    const room = new Map<string, number>()
    let budget = QUEUED_CAP - queued
    for (const [keyId, lane] of lanes) {
      const n = Math.min(LANE_CAP - lane.queue.length, budget)
      if (!lane.healthy || n <= 0) continue
      room.set(keyId, n)
      budget -= n
    }
    return room
  }

  const step = Effect.gen(function*() {
    const at = yield* now
    for (const [keyId, lane] of lanes) {
      if (lane.workers === 0 && lane.refill === undefined && at.getTime() - lane.idleSince > LANE_IDLE_MS) lanes.delete(keyId)
    }
    const waiting = yield* store.undispatched(FAN_OUT_BATCH)
    if (waiting > 0) {
      const fanned = yield* store.fanOut(at, waiting, { owner, leaseUntil: leaseEnd(at), room: roomAhead() })
      for (const [keyId, deliveries] of byKey(fanned.leased)) {
        const lane = laneOf(keyId)
        enqueue(lane, deliveries, at.getTime())
        // An idle lane gets a worker, one with fewer than it could use gets more.
        const wanted = Math.min(PER_KEY - lane.workers, lane.queue.length, CONCURRENCY - active())
        if (lane.workers === 0 || wanted > 0) yield* startWorkers(keyId, lane, Math.max(1, wanted))
      }
      if (fanned.deliveries > fanned.leased.length) claimWanted = true
      if (fanned.events === FAN_OUT_BATCH) yield* wake
    }
    if (!claimWanted && at.getTime() - lastClaim < Duration.toMillis(POLL)) return
    const free = CONCURRENCY - active()
    starved = free <= 0
    if (starved) return
    claimWanted = false
    lastClaim = at.getTime()
    const held = new Map([...lanes].map(([keyId, lane]) => [keyId, lane.workers]))
    const due = yield* store.claim(owner, at, leaseEnd(at), free, PER_KEY, held)
    starved = due.length === free
    for (const [keyId, deliveries] of byKey(due)) {
      const lane = laneOf(keyId)
      // Its oldest due deliveries: more of them may wait.
      lane.backlog = true
      enqueue(lane, deliveries, at.getTime())
      yield* startWorkers(keyId, lane, deliveries.length)
    }
  }).pipe(Effect.catchAllCause((cause) => Effect.logError("webhook dispatch failed; retrying", cause)))

  yield* Effect.forever(step.pipe(Effect.zipRight(Queue.take(kick).pipe(Effect.timeout(POLL), Effect.ignore))))
}))
