/**
 * The outbound MTA actor: claims due deliveries (FOR UPDATE SKIP LOCKED, leased), runs each
 * attempt in its own fiber under the destination's limits, keeps the leases of work in hand
 * fresh, and on shutdown gives unfinished work back at once. Wakes on the queue signal (new sends,
 * local at once, other replicas by NOTIFY), when attempts finish while a backlog is due, and polls
 * every second for retries that fall due.
 *
 * Two lanes, claimed apart (deliveries.channel): transactional and bulk. Bulk attempts hold at
 * most HERALD_MTA_CONCURRENCY − max(1, 20 %) of the attempts in hand, so a bulk backlog always
 * leaves room to claim a transactional send; each lane has its own ready line per domain, and
 * Destinations keeps part of each site's connections for transactional mail. A transactional
 * send behind 5,000 bulk messages to the same destination goes out after at most a few of them
 * (test/mta/lanes.test.ts).
 */
import { Clock, Duration, Effect, Exit, Queue, Schedule } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { actorLayer } from "../lib/actor.ts"
import type { Dns } from "../lib/dns.ts"
import { randomBase62 } from "../lib/ids.ts"
import { Delivery } from "./Delivery.ts"
import { Destinations } from "./Destinations.ts"
import { makeMessageBudget } from "./message-budget.ts"
import { MtaConfig } from "./MtaConfig.ts"
import { type ClaimedDelivery, DeliveryQueue } from "./queue/DeliveryQueue.ts"
import type { Channel } from "./queue/StoredMessage.ts"
import { QueueSignal } from "../db/QueueSignal.ts"

export const QUEUE_CHANNEL = "herald_queue"
const POLL_MS = 1_000
const POLL = Duration.millis(POLL_MS)
const SKIP_RECHECK_MS = 1_000
const CLAIM_GATHER = Duration.millis(50)

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

  // Wake-ups: new sends (this replica's at once, other replicas' by NOTIFY), and attempts that
  // finish while due work was left behind by a full claim.
  const kick = yield* Queue.sliding<void>(1)
  const wakeups = yield* signal.subscribe("herald_queue")
  /** A transactional claim is worth making: woken by a send, its last claim was full, or a poll's time has come. */
  let transactionalDue = true
  let transactionalClaimedAt = Number.NEGATIVE_INFINITY
  yield* Effect.forkScoped(Effect.forever(Queue.take(wakeups).pipe(
    Effect.zipRight(Effect.sync(() => (transactionalDue = true))),
    Effect.zipRight(Queue.offer(kick, undefined))
  )))
  /** More work is probably due: wake at the next attempt's end (see `step`). */
  let backlog = false
  /**
   * The last bulk claim took all it asked for, so more bulk work is probably due. Kept until a bulk
   * claim comes back short: the claims in between wait for `refillAt` free places and make none,
   * and forgetting the backlog there left a campaign's work to the one-second poll — 80 deliveries
   * (the bulk share) a second, whatever the destination could take (bench/campaign.ts).
   */
  let bulkBacklog = false
  /** Bulk attempts in hand, and the most there may be: the rest of the capacity is kept for transactional sends. */
  let bulkInFlight = 0
  const bulkCapacity = mta.concurrency <= 1 ? mta.concurrency : mta.concurrency - Math.max(1, Math.floor(mta.concurrency / 5))
  /**
   * With work in hand, claims wait until this many slots are free: a claim (and the destinations'
   * skip list read before it) then serves a group of attempts rather than one per finished
   * attempt. Idle capacity claims at once, so a new send on a quiet MTA goes out without waiting.
   */
  const refillAt = Math.max(1, Math.floor(mta.concurrency / 4))
  /**
   * The domains a claim leaves out (paused sites, sites full with other replicas' connections),
   * read at most once a second: a busy MTA claims many times a second, and work claimed for a site
   * paused meanwhile is only given back (Destinations checks its own view of the pauses).
   */
  let skip: ReadonlyArray<string> = []
  let skipReadAt = Number.NEGATIVE_INFINITY

  /**
   * Claimed deliveries not started yet, by recipient domain. A domain runs at most twice as many
   * attempts as its site may hold connections (one sending and one ready to follow, per
   * connection); the others wait here as claimed rows, leased like the rest of the work in hand.
   * An attempt that waits for a connection instead holds a fiber, its message and its waiting
   * machinery, and a long wait moves them all to the old generation: a claim of 100 for a site of
   * 10 connections made 90 such waits, most of the MTA's heap growth on bench/outbound.ts.
   */
  const ready = new Map<string, Array<ClaimedDelivery>>()
  const running = new Map<string, number>()
  /** Ready lines and running counts are per lane and domain: a transactional send never queues behind bulk ones. */
  const laneKey = (d: ClaimedDelivery) => `${d.channel} ${d.recipient_domain}`
  const scope = yield* Effect.scope
  /**
   * Claimed deliveries whose message found no room in the memory budget (HERALD_MTA_MESSAGE_BUDGET_MB),
   * oldest first: they are admitted as attempts give room back. A delivery holds its message's
   * room from admission (waiting among its domain's ready ones included) until its attempt ends.
   */
  const budget = makeMessageBudget(mta.messageBudgetBytes)
  const overBudget: Array<ClaimedDelivery> = []
  /**
   * `d` no longer holds its message: if that freed room (it was the message's last holder), what
   * waited is admitted — into that room and any freed before it by deliveries given back.
   */
  const giveRoom = (d: ClaimedDelivery): Effect.Effect<void, never, Dns> =>
    Effect.suspend(() => (budget.give(d.message_id) && overBudget.length > 0 ? admitWaiting : Effect.void))

  /** Starts `d`; its place among its domain's running attempts goes to the next ready one once it leaves the destination. */
  const start = (d: ClaimedDelivery): Effect.Effect<void, never, Dns> =>
    Effect.suspend(() => {
      const domain = laneKey(d)
      running.set(domain, (running.get(domain) ?? 0) + 1)
      let left = false
      /**
       * Gives `d`'s place to the next ready delivery of the domain; when the destination refused
       * `d`, the ready ones are given back with it, in one statement, rather than each waiting in
       * turn for the same refusal (up to 5 s each when other replicas hold every connection).
       */
      const leave = (startNext: boolean, refused: boolean): Effect.Effect<void, never, Dns> =>
        Effect.suspend(() => {
          if (left) return Effect.void
          left = true
          const others = running.get(domain)! - 1
          if (others === 0) running.delete(domain)
          else running.set(domain, others)
          if (refused) {
            const back = ready.get(domain) ?? []
            ready.delete(domain)
            for (const r of back) {
              inFlight.delete(r.id)
              if (r.channel === "bulk") bulkInFlight -= 1
              budget.give(r.message_id)
            }
            return back.length === 0 ? Effect.void : Effect.flatMap(now, (at) => queue.release(owner, back.map((r) => r.id), at)).pipe(
              Effect.catchAllCause((cause) => Effect.logWarning("giving deliveries back failed; their leases run out", cause))
            )
          }
          const next = startNext ? ready.get(domain)?.shift() : undefined
          if (ready.get(domain)?.length === 0) ready.delete(domain)
          return next === undefined ? Effect.void : start(next)
        })
      return delivery.attempt(owner, d, (refused) => leave(true, refused)).pipe(
        Effect.catchAllCause((cause) => Effect.logError("delivery attempt failed; the lease will hand it out again", cause)),
        Effect.annotateLogs({ delivery_id: d.id, recipient_domain: d.recipient_domain, channel: d.channel }),
        Effect.onExit((exit) =>
          Effect.suspend(() => {
            inFlight.delete(d.id)
            if (d.channel === "bulk") bulkInFlight -= 1
            const interrupted = Exit.isInterrupted(exit)
            // At shutdown nothing new starts: what is still ready is given back with the leases.
            return leave(!interrupted, false).pipe(
              Effect.zipRight(interrupted ? Effect.sync(() => budget.give(d.message_id)) : giveRoom(d)),
              Effect.zipRight(backlog ? Queue.offer(kick, undefined) : Effect.void)
            )
          })
        ),
        Effect.forkIn(scope),
        Effect.asVoid
      )
    })

  /** Starts `d`, or makes it wait among its domain's ready deliveries (it holds its message's room already). */
  const place = (d: ClaimedDelivery) =>
    Effect.suspend(() => {
      const domain = laneKey(d)
      if ((running.get(domain) ?? 0) < 2 * destinations.connectionsFor(d.recipient_domain, d.channel)) return start(d)
      const waiting = ready.get(domain)
      if (waiting === undefined) ready.set(domain, [d])
      else waiting.push(d)
      return Effect.void
    })

  const admit = (d: ClaimedDelivery) =>
    Effect.suspend(() => {
      inFlight.add(d.id)
      if (d.channel === "bulk") bulkInFlight += 1
      // A transactional send does not wait behind bulk messages for memory budget room either.
      if (d.channel === "transactional" && budget.take(d.message_id, d.content_bytes)) return place(d)
      if (overBudget.length === 0 && budget.take(d.message_id, d.content_bytes)) return place(d)
      overBudget.push(d)
      return Effect.void
    })

  /** Admits waiting deliveries, oldest first, while their messages find room. */
  const admitWaiting: Effect.Effect<void, never, Dns> = Effect.suspend(() => {
    const admitted: Array<ClaimedDelivery> = []
    while (overBudget.length > 0 && budget.take(overBudget[0]!.message_id, overBudget[0]!.content_bytes)) admitted.push(overBudget.shift()!)
    return Effect.forEach(admitted, place, { discard: true })
  })

  /**
   * How many of `lane` to claim now, 0 for none. With work of the lane in hand, a claim waits until
   * `refillAt` places are free (a claim then serves a group of attempts); bulk stays within
   * `bulkCapacity`; a transactional claim is made only when one may be due (see transactionalDue),
   * not at every bulk attempt that finishes.
   */
  const wanted = (lane: Channel, atMs: number): number => {
    const total = mta.concurrency - inFlight.size
    if (lane === "bulk") {
      const free = Math.min(total, bulkCapacity - bulkInFlight)
      return free > 0 && (free >= refillAt || bulkInFlight === 0) ? free : 0
    }
    const inHand = inFlight.size - bulkInFlight
    if (!transactionalDue && atMs - transactionalClaimedAt < POLL_MS) return 0
    return total > 0 && (total >= refillAt || inHand === 0) ? total : 0
  }

  const claimLane = (lane: Channel, at: Date) =>
    Effect.gen(function*() {
      const limit = wanted(lane, at.getTime())
      if (limit === 0) return mta.concurrency - inFlight.size <= 0
      if (lane === "transactional") {
        transactionalDue = false
        transactionalClaimedAt = at.getTime()
      }
      const claimed = yield* queue.claim(owner, at, new Date(at.getTime() + mta.leaseMs), limit, skip, lane)
      for (const d of claimed) yield* admit(d)
      const full = claimed.length === limit
      if (full && lane === "transactional") transactionalDue = true
      if (lane === "bulk") bulkBacklog = full
      return full
    })

  const step = Effect.gen(function*() {
    const at = yield* now
    if (at.getTime() - skipReadAt >= SKIP_RECHECK_MS) {
      skip = yield* destinations.paused(at.getTime())
      skipReadAt = at.getTime()
    }
    // Transactional first: it may use every place, bulk only what is left of its share.
    const transactionalMore = yield* claimLane("transactional", at)
    const bulkMore = yield* claimLane("bulk", at)
    // Woken while (nearly) full, or a claim took all it asked for: the next attempts to finish claim what may have come.
    backlog = transactionalMore || bulkMore || bulkBacklog || mta.concurrency - inFlight.size < refillAt
    return transactionalDue && mta.concurrency - inFlight.size > 0
  }).pipe(Effect.catchAllCause((cause) => Effect.logError("claim failed; retrying", cause).pipe(Effect.as(false))))

  yield* Effect.logInfo("outbound MTA started").pipe(Effect.annotateLogs({ owner, concurrency: mta.concurrency }))
  yield* Effect.forever(Effect.gen(function*() {
    const more = yield* step
    if (more) return
    yield* Queue.take(kick).pipe(Effect.timeout(POLL), Effect.ignore)
    // With transactional work in hand, the sends of the next moment are claimed together: a busy
    // API wakes the MTA once per send, and a claim per wake-up cost a statement per message
    // (bench/outbound.ts). Bulk work in hand does not delay a transactional claim.
    if (inFlight.size - bulkInFlight > 0) yield* Effect.sleep(CLAIM_GATHER)
  }))
}))
