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
 *
 * The lanes, workers and claims are decided by the pure transitions of dispatch-state.ts; this
 * actor keeps their one state value in a Ref (read by `DispatcherStatus.snapshot`) and performs
 * the actions they return.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Duration, Effect, Fiber, Layer, Queue, Schedule } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { randomBase62 } from "../lib/ids.ts"
import { recordWebhookAttempt } from "../lib/metrics.ts"
import { QueueSignal } from "../db/QueueSignal.ts"
import {
  afterRefill,
  CONCURRENCY,
  PER_KEY,
  attempted,
  claimed,
  type DispatchAction,
  type DispatchState,
  FAN_OUT_BATCH,
  failing,
  fannedOut,
  initialDispatchState,
  LEASE_MS,
  planClaim,
  POLL_MS,
  pruneIdle,
  refilled,
  refillEnded,
  refillSize,
  roomAhead,
  signalled,
  slotFreed,
  type Transition,
  workerInterrupted,
  workerLeft,
  workerNext,
  workerStarted
} from "./dispatch-state.ts"
import { makeSlots } from "./slots.ts"
import { WebhookSender } from "./WebhookSender.ts"
import { type HeldDelivery, type Outcome, WebhookStore } from "./WebhookStore.ts"

export { CONCURRENCY, PER_KEY }

const POLL = Duration.millis(POLL_MS)
/** Finished attempts are recorded at most this many per statement, gathered for at least GATHER. */
const WRITE_BATCH = 500
const GATHER = Duration.millis(10)

/** The dispatcher's lanes, workers and claim flags as they are now: what metrics read. */
export class DispatcherStatus extends Context.Tag("herald/DispatcherStatus")<DispatcherStatus, {
  readonly snapshot: Effect.Effect<DispatchState<HeldDelivery>>
}>() {}

/**
 * The one state value, owned by the actor. A plain holder rather than a Ref: its transitions are
 * synchronous, and a lane's claim must be marked ended and forgotten in one step (see `refill`).
 */
interface Cell {
  state: DispatchState<HeldDelivery>
}

/**
 * The writer of finished attempts: they gather in a plain array — while a statement is under
 * way, and for GATHER after the first arrives — and go many per statement. Measured: an Effect
 * queue whose taker woke for every attempt cost ~50 µs CPU per attempt, and the statements of
 * small batches were most of the dispatcher's round trips. What is left at shutdown is written
 * before the scope closes (workers stop first: their fibers were forked later).
 */
const attemptWriter = Effect.gen(function*() {
  const store = yield* WebhookStore
  let finished: Array<Outcome> = []
  const arrived = yield* Effect.makeLatch(false)
  const recordDone = (outcome: Outcome) => {
    // The metrics count each attempt here, once: a pending outcome means another attempt follows.
    recordWebhookAttempt(outcome.status === "pending" ? "retry" : outcome.status)
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
  return recordDone
})

/** What a give-back that fails does to the effect that asked for it: fail it, or log and go on. */
type OnGiveBackFailure = "fail" | "warn" | "ignore"

interface Actor {
  readonly cell: Cell
  readonly owner: string
  readonly apply: (transition: (s: DispatchState<HeldDelivery>) => Transition<HeldDelivery>, onGiveBackFailure?: OnGiveBackFailure) => Effect.Effect<void, SqlError>
  readonly giveBack: (deliveries: ReadonlyArray<HeldDelivery>) => Effect.Effect<void, SqlError>
  readonly withSlot: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly busy: () => number
}

const dispatcherActor = (cell: Cell) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* WebhookStore
    const signal = yield* QueueSignal
    const wakeups = yield* signal.subscribe("herald_events")
    const owner = `${config.hostname}/${process.pid}/${randomBase62(6)}`
    const scope = yield* Effect.scope
    const slots = makeSlots(CONCURRENCY)
    const kick = yield* Queue.sliding<void>(1)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const leaseEnd = (at: Date) => new Date(at.getTime() + LEASE_MS)
    const giveBack = (deliveries: ReadonlyArray<HeldDelivery>) =>
      Effect.flatMap(now, (at) => store.release(deliveries.map((d) => d.id), owner, at))

    const apply: Actor["apply"] = (transition, onGiveBackFailure = "fail") =>
      Effect.suspend(() => {
        const t = transition(cell.state)
        cell.state = t.state
        // Most transitions of an attempt have no action: no forEach (and its fibers' bookkeeping) for them.
        if (t.actions.length === 0) return Effect.void
        if (t.actions.length === 1) return perform(t.actions[0]!, onGiveBackFailure)
        return Effect.forEach(t.actions, (action) => perform(action, onGiveBackFailure), { discard: true })
      })
    const perform = (action: DispatchAction<HeldDelivery>, onGiveBackFailure: OnGiveBackFailure): Effect.Effect<void, SqlError> => {
      switch (action._tag) {
        case "Wake":
          return Queue.offer(kick, undefined)
        case "SlotFreed":
          return apply(slotFreed)
        case "StartWorkers":
          return Effect.forEach(Array.from({ length: action.n }), () => Effect.forkIn(worker(action.keyId), scope), { discard: true })
        case "GiveBack":
          if (onGiveBackFailure === "fail") return giveBack(action.deliveries)
          if (onGiveBackFailure === "ignore") return Effect.ignore(giveBack(action.deliveries))
          return giveBack(action.deliveries).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning("webhook leases not given back; they end on their own", cause))
          )
      }
    }
    const worker = yield* makeWorker({ cell, owner, apply, giveBack, withSlot: slots.withSlot, busy: slots.busy })
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(wakeups), apply(signalled))))

    const step = Effect.gen(function*() {
      const at = yield* now
      cell.state = pruneIdle(cell.state, at.getTime())
      const waiting = yield* store.undispatched(FAN_OUT_BATCH)
      if (waiting > 0) {
        const fanned = yield* store.fanOut(at, waiting, { owner, leaseUntil: leaseEnd(at), room: roomAhead(cell.state) })
        yield* apply((s) => fannedOut(s, fanned, at.getTime(), slots.busy()))
      }
      const plan = planClaim(cell.state, at.getTime(), slots.busy())
      cell.state = plan.state
      if (plan.claim === undefined) return
      const { limit, held } = plan.claim
      const due = yield* store.claim(owner, at, leaseEnd(at), limit, PER_KEY, held)
      yield* apply((s) => claimed(s, due, limit, at.getTime()))
    }).pipe(Effect.catchAllCause((cause) => Effect.logError("webhook dispatch failed; retrying", cause)))

    yield* Effect.forever(step.pipe(Effect.zipRight(Queue.take(kick).pipe(Effect.timeout(POLL), Effect.ignore))))
  })

/**
 * The key's workers: each takes the lane's leased deliveries one by one, as `workerNext` decides,
 * and the lane's claims (refills) run beside them, so a busy key does not wait on a claim's round trip.
 */
const makeWorker = (actor: Actor) =>
  Effect.gen(function*() {
    const store = yield* WebhookStore
    const sender = yield* WebhookSender
    const recordDone = yield* attemptWriter
    const scope = yield* Effect.scope
    const { cell, owner, apply, giveBack } = actor
    /** The claim under way for each lane, which answers how many it leased. */
    const refills = new Map<string, Fiber.Fiber<number, SqlError>>()

    const refill = (keyId: string) =>
      Effect.gen(function*() {
        const at = new Date(yield* Clock.currentTimeMillis)
        const size = refillSize(cell.state, keyId)
        const leased = yield* store.claimBatch(owner, keyId, at, new Date(at.getTime() + LEASE_MS), size)
        yield* apply((s) => refilled(s, keyId, size, leased, at.getTime()))
        return leased.length
      }).pipe(Effect.ensuring(Effect.sync(() => {
        refills.delete(keyId)
        cell.state = refillEnded(cell.state, keyId)
      })))
    const startRefill = (keyId: string) => Effect.map(Effect.forkIn(refill(keyId), scope), (fiber) => void refills.set(keyId, fiber))

    return (keyId: string) => {
      let current: HeldDelivery | undefined
      let unstarted = true
      const started = Effect.sync(() => {
        if (unstarted) cell.state = workerStarted(cell.state)
        unstarted = false
      })
      const waiting = apply((s) => failing(s, keyId), "warn").pipe(Effect.catchAll(() => Effect.void))
      const options = { owner, withSlot: actor.withSlot, waiting, recordDone }
      return Effect.gen(function*() {
        for (;;) {
          const at = yield* Clock.currentTimeMillis
          const next = workerNext(cell.state, keyId, at, actor.busy())
          cell.state = next.state
          if (next.refill) yield* startRefill(keyId)
          const step = next.step
          if (step._tag === "Leave") return
          if (step._tag === "AwaitRefill") {
            const refilling = refills.get(keyId)
            // Marked under way by another worker whose fork has not returned yet: let it.
            if (refilling === undefined) yield* Effect.yieldNow()
            else if (afterRefill(cell.state, keyId, yield* Fiber.join(refilling)) === "Leave") return
            continue
          }
          if (step._tag === "Expired") {
            yield* giveBack([step.delivery])
            continue
          }
          current = step.delivery
          yield* started
          const ok = yield* sender.deliver(current, options).pipe(
            Effect.catchAllCause((cause) => Effect.as(Effect.logError(`webhook delivery ${step.delivery.id} failed; its lease hands it out again`, cause), false))
          )
          current = undefined
          yield* apply((s) => attempted(s, keyId, ok))
        }
      }).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("webhook worker stopped; its leases hand its work out again", cause)),
        // Shutting down: give leased deliveries back at once rather than when their leases end.
        Effect.onInterrupt(() => apply((s) => workerInterrupted(s, keyId, current), "ignore").pipe(Effect.ignore)),
        Effect.ensuring(Effect.clockWith((clock) =>
          Effect.suspend(() => {
            const wasUnstarted = unstarted
            unstarted = false
            return apply((s) => workerLeft(s, keyId, wasUnstarted, clock.unsafeCurrentTimeMillis()), "ignore").pipe(Effect.ignore)
          })))
      )
    }
  })

/** The dispatcher actor, forked for as long as the appliance runs (as lib/actor.ts's actorLayer), and its state for readers. */
export const DispatcherLive = Layer.scoped(
  DispatcherStatus,
  Effect.gen(function*() {
    const cell: Cell = { state: initialDispatchState() }
    yield* Effect.logInfo("actor started").pipe(Effect.zipRight(Effect.forkScoped(dispatcherActor(cell))), Effect.annotateLogs("actor", "webhooks"))
    return DispatcherStatus.of({ snapshot: Effect.sync(() => cell.state) })
  })
)
