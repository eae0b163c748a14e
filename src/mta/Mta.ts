/**
 * The outbound MTA actor: claims due deliveries (FOR UPDATE SKIP LOCKED, leased), runs each
 * attempt in its own fiber under the destination's limits, keeps the leases of work in hand
 * fresh, and on shutdown gives unfinished work back at once. Wakes on the queue signal (new sends,
 * local at once, other replicas by NOTIFY), when attempts finish while a backlog is due, and polls
 * every second for retries that fall due.
 *
 * What to claim for which lane, which claimed delivery starts and which waits, and when more is
 * due are decided by the pure transitions of mta-state.ts; this loop keeps their one state value
 * in a Ref (read by `MtaStatus.snapshot`) and performs the actions they return. Two lanes:
 * transactional and bulk, bulk within its share of HERALD_MTA_CONCURRENCY; each lane has its own
 * ready line per domain, and Destinations keeps part of each site's connections for transactional
 * mail. A transactional send behind 5,000 bulk messages to the same destination goes out after at
 * most a few of them (test/mta/lanes.test.ts).
 */
import { Clock, Context, Duration, Effect, Exit, Layer, Queue, Ref, Schedule } from "effect"
import { AppConfig } from "../config/app-config.ts"
import type { Dns } from "../lib/dns.ts"
import { randomBase62 } from "../lib/ids.ts"
import { Delivery } from "./Delivery.ts"
import { Destinations } from "./Destinations.ts"
import {
  attemptEnded,
  claimed,
  claimsMade,
  gatherBeforeClaim,
  initialMtaState,
  leftDestination,
  type MtaAction,
  type MtaState,
  planClaim,
  POLL_MS,
  signalled,
  skipListRead,
  skipListStale,
  type Transition
} from "./mta-state.ts"
import { MtaConfig } from "./MtaConfig.ts"
import { type ClaimedDelivery, DeliveryQueue } from "./queue/DeliveryQueue.ts"
import type { Channel } from "./queue/StoredMessage.ts"
import { QueueSignal } from "../db/QueueSignal.ts"

export const QUEUE_CHANNEL = "herald_queue"
const POLL = Duration.millis(POLL_MS)
const CLAIM_GATHER = Duration.millis(50)

/** The MTA's scheduling state as it is now (lanes, ready lines, budget, backlog flags): what metrics read. */
export class MtaStatus extends Context.Tag("herald/MtaStatus")<MtaStatus, {
  readonly snapshot: Effect.Effect<MtaState<ClaimedDelivery>>
}>() {}

type Cell = Ref.Ref<MtaState<ClaimedDelivery>>

const mtaActor = (cell: Cell) =>
  Effect.gen(function*() {
    const mta = yield* MtaConfig
    if (!mta.enabled) return yield* Effect.logInfo("outbound delivery is disabled (HERALD_MTA_ENABLED=false)")
    const config = yield* AppConfig
    const queue = yield* DeliveryQueue
    const owner = `${config.hostname}/${process.pid}/${randomBase62(6)}`
    const inHand = Effect.map(Ref.get(cell), (s) => [...s.inHand])
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    yield* Effect.addFinalizer(() =>
      Effect.all([now, inHand]).pipe(Effect.flatMap(([at, ids]) => queue.release(owner, ids, at)), Effect.ignoreLogged))

    const refresh = Effect.gen(function*() {
      const at = yield* Clock.currentTimeMillis
      yield* queue.extend(owner, yield* inHand, new Date(at + mta.leaseMs))
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("lease refresh failed", cause)))
    // Refreshed at a quarter of the lease, so a slow GC or DB blip never lets a live lease lapse.
    yield* Effect.forkScoped(Effect.repeat(refresh, Schedule.spaced(Duration.millis(mta.leaseMs / 4))))

    // Wake-ups: new sends (this replica's at once, other replicas' by NOTIFY), and attempts that
    // finish while due work was left behind by a full claim.
    const kick = yield* Queue.sliding<void>(1)
    const { apply, step } = yield* mtaSteps(cell, owner, kick)
    const wakeups = yield* (yield* QueueSignal).subscribe("herald_queue")
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(wakeups), apply(signalled<ClaimedDelivery>))))

    yield* Effect.logInfo("outbound MTA started").pipe(Effect.annotateLogs({ owner, concurrency: mta.concurrency }))
    yield* Effect.forever(Effect.gen(function*() {
      if (yield* step) return
      yield* Queue.take(kick).pipe(Effect.timeout(POLL), Effect.ignore)
      if (gatherBeforeClaim(yield* Ref.get(cell))) yield* Effect.sleep(CLAIM_GATHER)
    }))
  })

/**
 * The effects the transitions ask for: `apply` runs a transition on the state and performs its
 * actions (attempts forked into the actor's scope, deliveries given back, the loop woken); `step`
 * is one round of claims.
 */
const mtaSteps = (cell: Cell, owner: string, kick: Queue.Queue<void>) =>
  Effect.gen(function*() {
    const mta = yield* MtaConfig
    const queue = yield* DeliveryQueue
    const delivery = yield* Delivery
    const destinations = yield* Destinations
    const scope = yield* Effect.scope
    const connections = destinations.connectionsFor
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const apply = <T extends Transition<ClaimedDelivery>>(transition: (s: MtaState<ClaimedDelivery>) => T): Effect.Effect<T, never, Dns> =>
      Effect.flatMap(Ref.modify(cell, (s) => {
        const t = transition(s)
        return [t, t.state]
      }), (t) => Effect.as(Effect.forEach(t.actions, perform, { discard: true }), t))

    const perform = (action: MtaAction<ClaimedDelivery>): Effect.Effect<void, never, Dns> => {
      switch (action._tag) {
        case "Start":
          return run(action.delivery)
        case "Wake":
          return Queue.offer(kick, undefined)
        case "GiveBack":
          return Effect.flatMap(now, (at) => queue.release(owner, action.ids, at)).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning("giving deliveries back failed; their leases run out", cause))
          )
      }
    }

    const run = (d: ClaimedDelivery): Effect.Effect<void, never, Dns> =>
      delivery.attempt(owner, d, (refused) => Effect.asVoid(apply((s) => leftDestination(s, d, refused)))).pipe(
        Effect.catchAllCause((cause) => Effect.logError("delivery attempt failed; the lease will hand it out again", cause)),
        Effect.annotateLogs({ delivery_id: d.id, recipient_domain: d.recipient_domain, channel: d.channel }),
        Effect.onExit((exit) => apply((s) => attemptEnded(s, d, Exit.isInterrupted(exit), connections))),
        Effect.forkIn(scope),
        Effect.asVoid
      )

    const claimLane = (lane: Channel, at: Date) =>
      Effect.gen(function*() {
        const plan = yield* Ref.modify(cell, (s) => {
          const p = planClaim(s, lane, at.getTime())
          return [p, p.state]
        })
        if (plan.limit === 0) return plan.more
        const skip = (yield* Ref.get(cell)).skip
        const rows = yield* queue.claim(owner, at, new Date(at.getTime() + mta.leaseMs), plan.limit, skip, lane)
        return (yield* apply((s) => claimed(s, lane, plan.limit, rows, connections))).more
      })

    const step = Effect.gen(function*() {
      const at = yield* now
      if (skipListStale(yield* Ref.get(cell), at.getTime())) {
        const skip = yield* destinations.paused(at.getTime())
        yield* Ref.update(cell, (s) => skipListRead(s, skip, at.getTime()))
      }
      // Transactional first: it may use every place, bulk only what is left of its share.
      const transactionalMore = yield* claimLane("transactional", at)
      const bulkMore = yield* claimLane("bulk", at)
      return yield* Ref.modify(cell, (s) => {
        const made = claimsMade(s, transactionalMore, bulkMore)
        return [made.more, made.state]
      })
    }).pipe(Effect.catchAllCause((cause) => Effect.logError("claim failed; retrying", cause).pipe(Effect.as(false))))

    return { apply, step } as const
  })

/** The MTA actor, forked for as long as the appliance runs (as lib/actor.ts's actorLayer), and its state for readers. */
export const MtaLive = Layer.scoped(
  MtaStatus,
  Effect.gen(function*() {
    const mta = yield* MtaConfig
    const cell: Cell = yield* Ref.make(initialMtaState<ClaimedDelivery>(mta.concurrency, mta.messageBudgetBytes))
    yield* Effect.logInfo("actor started").pipe(Effect.zipRight(Effect.forkScoped(mtaActor(cell))), Effect.annotateLogs("actor", "mta"))
    return MtaStatus.of({ snapshot: Ref.get(cell) })
  })
)
