/**
 * The webhook dispatcher's scheduling state and decisions, as pure transitions: each key's lane
 * (its workers, the deliveries leased for them, whether it is healthy and has a backlog), how many
 * workers the fan-out and the claims start, when a claim across keys is made and how big, what a
 * worker does next, and which leased deliveries go back to the database. The actor
 * (Dispatcher.ts) keeps one `DispatchState` and only performs the actions the transitions return;
 * a metrics endpoint reads the same value. Tested as tables in test/unit/dispatch-state.test.ts.
 *
 * Attempts running or waiting for a slot are counted by the slots (slots.ts), passed in as `busy`;
 * `reserved` counts workers started and yet to attempt. Together they are what claims leave room for.
 */

import { processShare } from "../config/process-share.ts"

/** Attempts in flight at once, per appliance: each of HERALD_PROCESSES workers takes its share (process-share.ts). */
export const CONCURRENCY = processShare.count(32)
export const PER_KEY = 4
export const BATCH = 32
/** A healthy lane with this few deliveries left is refilled while its workers go on. */
export const LOW_WATER = 16
/** Leased deliveries waiting in one key's lane, and in all lanes together: the memory bound. */
export const LANE_CAP = 64
export const QUEUED_CAP = 512
export const LANE_IDLE_MS = 10_000
export const LEASE_MS = 90_000
/** A worker starts no leased delivery whose lease is this close to its end; it leases afresh. */
export const LEASE_MARGIN_MS = 20_000
/**
 * How often, without a wake-up, the outbox is looked at (writers of events do not wake this
 * actor, so this bounds their delay; measured at 100 events/s, a 100 ms poll halved the median
 * delay but made fan-outs and records of fewer events: 0.8 → 1.3 statements per event) and due
 * deliveries are claimed across keys (retries falling due, leases ending).
 */
export const POLL_MS = 250
export const FAN_OUT_BATCH = 200

/** What the decisions read of a webhook delivery (WebhookStore's HeldDelivery has more). */
export interface Held {
  readonly id: string
  readonly key_id: string
}

export interface Leased<D extends Held> {
  readonly delivery: D
  /** When its lease was taken (epoch ms). */
  readonly leasedAt: number
}

/** One key's work in this replica: its workers and the deliveries leased for them, oldest first. */
export interface LaneState<D extends Held> {
  readonly workers: number
  readonly queue: ReadonlyArray<Leased<D>>
  /** The key's last finished attempt here succeeded: it may lease more than a probe. */
  readonly healthy: boolean
  /** A claim for this lane is under way (its workers may wait for it). */
  readonly refilling: boolean
  /**
   * The key's last claim was full (or came from the dispatcher's claim across keys): more may
   * wait in the database, worth claiming before the lane runs dry. Otherwise its new work comes
   * from the fan-out and the dispatcher's claims, and its workers leave when it runs dry: claims
   * that find nothing cost a statement every few deliveries at a trickle of events.
   */
  readonly backlog: boolean
  /** When its last worker left (epoch ms): an idle lane is kept LANE_IDLE_MS, so the fan-out can lease to it ahead. */
  readonly idleSince: number
}

export interface DispatchState<D extends Held = Held> {
  readonly lanes: ReadonlyMap<string, LaneState<D>>
  /** Deliveries waiting in all lanes. */
  readonly queued: number
  /** Workers started and yet to attempt. */
  readonly reserved: number
  /**
   * Whether the next step claims across keys: after a wake-up from elsewhere (another replica, a
   * test event), new deliveries the fan-out left unleased, or a slot freed while work waited for
   * one, and at least every POLL_MS. Other wake-ups (a worker leaving) only fan out what has
   * arrived: at a trickle of events, a claim per wake-up was most of the dispatcher's statements.
   */
  readonly claimWanted: boolean
  readonly lastClaim: number
  /** The last claim filled every free slot: more may be waiting for one. */
  readonly starved: boolean
}

export type DispatchAction<D extends Held = Held> =
  /** Fork `n` more workers of the key (already counted in the lane and in `reserved`). */
  | { readonly _tag: "StartWorkers"; readonly keyId: string; readonly n: number }
  /** Give these leased deliveries back to the database (due at once, for any replica). */
  | { readonly _tag: "GiveBack"; readonly deliveries: ReadonlyArray<D> }
  /** Wake the dispatcher's loop. */
  | { readonly _tag: "Wake" }
  /** A slot was freed: apply `slotFreed` then (it reads `starved` as it is when the action is performed). */
  | { readonly _tag: "SlotFreed" }

export interface Transition<D extends Held> {
  readonly state: DispatchState<D>
  readonly actions: ReadonlyArray<DispatchAction<D>>
}

export const initialDispatchState = <D extends Held>(): DispatchState<D> => ({
  lanes: new Map(),
  queued: 0,
  reserved: 0,
  claimWanted: true,
  lastClaim: 0,
  starved: false
})

const idleLane: LaneState<never> = { workers: 0, queue: [], healthy: false, refilling: false, backlog: true, idleSince: 0 }
const wake = { _tag: "Wake" } as const
const noActions: ReadonlyArray<never> = []
const freedSlot = { _tag: "SlotFreed" } as const
const giveBack = <D extends Held>(deliveries: ReadonlyArray<D>): ReadonlyArray<DispatchAction<D>> =>
  deliveries.length === 0 ? [] : [{ _tag: "GiveBack", deliveries }]

export const laneOf = <D extends Held>(s: DispatchState<D>, keyId: string): LaneState<D> => s.lanes.get(keyId) ?? idleLane
const withLane = <D extends Held>(s: DispatchState<D>, keyId: string, lane: LaneState<D>): DispatchState<D> =>
  ({ ...s, lanes: new Map(s.lanes).set(keyId, lane) })
const changeLane = <D extends Held>(s: DispatchState<D>, keyId: string, change: (lane: LaneState<D>) => Partial<LaneState<D>>) => {
  const lane = laneOf(s, keyId)
  return withLane(s, keyId, { ...lane, ...change(lane) })
}
/** Attempts running or waiting for a slot, and workers yet to attempt. */
export const active = (s: DispatchState<Held>, busy: number) => busy + s.reserved

const enqueue = <D extends Held>(s: DispatchState<D>, keyId: string, deliveries: ReadonlyArray<D>, leasedAt: number) =>
  ({ ...changeLane(s, keyId, (lane) => ({ queue: [...lane.queue, ...deliveries.map((delivery) => ({ delivery, leasedAt }))] })), queued: s.queued + deliveries.length })

/** The lane's waiting deliveries taken out (to give back). */
const takeQueued = <D extends Held>(s: DispatchState<D>, keyId: string): { readonly state: DispatchState<D>; readonly taken: ReadonlyArray<D> } => {
  const lane = laneOf(s, keyId)
  if (lane.queue.length === 0) return { state: s, taken: [] }
  return { state: { ...withLane(s, keyId, { ...lane, queue: [] }), queued: s.queued - lane.queue.length }, taken: lane.queue.map((q) => q.delivery) }
}

const startWorkers = <D extends Held>(s: DispatchState<D>, keyId: string, n: number) => ({
  state: { ...changeLane(s, keyId, (lane) => ({ workers: lane.workers + n })), reserved: s.reserved + n },
  action: { _tag: "StartWorkers", keyId, n } as const
})

export const byKey = <D extends Held>(deliveries: ReadonlyArray<D>) => {
  const groups = new Map<string, Array<D>>()
  for (const d of deliveries) {
    const group = groups.get(d.key_id)
    if (group === undefined) groups.set(d.key_id, [d])
    else group.push(d)
  }
  return groups
}

/** A wake-up from elsewhere (another replica, a test event): the next step claims across keys. */
export const signalled = <D extends Held>(s: DispatchState<D>): Transition<D> => ({ state: { ...s, claimWanted: true }, actions: [wake] })

/** A slot was freed: wake the loop, to claim if the last claim filled every free slot. */
export const slotFreed = <D extends Held>(s: DispatchState<D>): Transition<D> =>
  ({ state: s.starved ? { ...s, claimWanted: true } : s, actions: [wake] })

/** Lanes with no worker, no claim under way and idle for LANE_IDLE_MS are forgotten. */
export const pruneIdle = <D extends Held>(s: DispatchState<D>, now: number): DispatchState<D> => {
  const idle = [...s.lanes].filter(([, lane]) => lane.workers === 0 && !lane.refilling && now - lane.idleSince > LANE_IDLE_MS)
  if (idle.length === 0) return s
  const lanes = new Map(s.lanes)
  for (const [keyId] of idle) lanes.delete(keyId)
  return { ...s, lanes }
}

/** How many of each key's new events the fan-out may lease straight to its lane (a healthy one, idle or not). */
export const roomAhead = (s: DispatchState<Held>): ReadonlyMap<string, number> => {
  const room = new Map<string, number>()
  let budget = QUEUED_CAP - s.queued
  for (const [keyId, lane] of s.lanes) {
    const n = Math.min(LANE_CAP - lane.queue.length, budget)
    if (!lane.healthy || n <= 0) continue
    room.set(keyId, n)
    budget -= n
  }
  return room
}

/**
 * The fan-out leased `leased` to their lanes: an idle lane gets a worker, one with fewer than it
 * could use gets more. New deliveries it left unleased make the next step claim; a full batch of
 * events means more are waiting (wake at once).
 */
export const fannedOut = <D extends Held>(
  s0: DispatchState<D>,
  fanned: { readonly leased: ReadonlyArray<D>; readonly deliveries: number; readonly events: number },
  now: number,
  busy: number
): Transition<D> => {
  let s = s0
  const actions: Array<DispatchAction<D>> = []
  for (const [keyId, deliveries] of byKey(fanned.leased)) {
    s = enqueue(s, keyId, deliveries, now)
    const lane = laneOf(s, keyId)
    const wanted = Math.min(PER_KEY - lane.workers, lane.queue.length, CONCURRENCY - active(s, busy))
    if (lane.workers > 0 && wanted <= 0) continue
    const started = startWorkers(s, keyId, Math.max(1, wanted))
    s = started.state
    actions.push(started.action)
  }
  if (fanned.deliveries > fanned.leased.length) s = { ...s, claimWanted: true }
  if (fanned.events === FAN_OUT_BATCH) actions.push(wake)
  return { state: s, actions }
}

/**
 * The claim across keys to make now, if any: `limit` is every free slot, `held` each key's
 * workers here (the claim leaves a key at PER_KEY). None when not wanted and the poll's time has
 * not come, or when no slot is free (starved: a freed slot then wakes a claim).
 */
export const planClaim = <D extends Held>(s: DispatchState<D>, now: number, busy: number): {
  readonly state: DispatchState<D>
  readonly claim: { readonly limit: number; readonly held: ReadonlyMap<string, number> } | undefined
} => {
  if (!s.claimWanted && now - s.lastClaim < POLL_MS) return { state: s, claim: undefined }
  const free = CONCURRENCY - active(s, busy)
  if (free <= 0) return { state: { ...s, starved: true }, claim: undefined }
  const held = new Map([...s.lanes].map(([keyId, lane]) => [keyId, lane.workers]))
  return { state: { ...s, starved: false, claimWanted: false, lastClaim: now }, claim: { limit: free, held } }
}

/** The claim across keys brought `due` (its oldest due deliveries per key: more may wait): a worker for each. */
export const claimed = <D extends Held>(s0: DispatchState<D>, due: ReadonlyArray<D>, limit: number, now: number): Transition<D> => {
  let s: DispatchState<D> = { ...s0, starved: due.length === limit }
  const actions: Array<DispatchAction<D>> = []
  for (const [keyId, deliveries] of byKey(due)) {
    s = enqueue(changeLane(s, keyId, () => ({ backlog: true })), keyId, deliveries, now)
    const started = startWorkers(s, keyId, deliveries.length)
    s = started.state
    actions.push(started.action)
  }
  return { state: s, actions }
}

/** A lane's claim: BATCH after a success (within the caps), one (a probe) after a failure. */
export const refillSize = (s: DispatchState<Held>, keyId: string) => {
  const lane = laneOf(s, keyId)
  return lane.healthy ? Math.max(1, Math.min(BATCH, LANE_CAP - lane.queue.length, QUEUED_CAP - s.queued)) : 1
}

/** A lane's claim of `size` leased `leased`: a full one means a backlog; a lane whose workers all left gives them back. */
export const refilled = <D extends Held>(s: DispatchState<D>, keyId: string, size: number, leased: ReadonlyArray<D>, now: number): Transition<D> => {
  const withBacklog = changeLane(s, keyId, () => ({ backlog: leased.length === size }))
  if (laneOf(s, keyId).workers === 0) return { state: withBacklog, actions: giveBack(leased) }
  return { state: enqueue(withBacklog, keyId, leased, now), actions: [] }
}

/** The lane's claim ended (leased, or failed). */
export const refillEnded = <D extends Held>(s: DispatchState<D>, keyId: string): DispatchState<D> => changeLane(s, keyId, () => ({ refilling: false }))

/** What a worker does next. */
export type WorkerStep<D extends Held> =
  | { readonly _tag: "Attempt"; readonly delivery: D }
  /** Its lease is too close to its end: give it back and look again. */
  | { readonly _tag: "Expired"; readonly delivery: D }
  /** Nothing leased: wait for the lane's claim under way (started by this step if `refill`). */
  | { readonly _tag: "AwaitRefill" }
  /** Nothing leased and nothing to wait for: the fan-out and the dispatcher's claims bring new work. */
  | { readonly _tag: "Leave" }

/**
 * A worker of `keyId` looks for its next delivery. A lane whose key has a backlog is refilled
 * when it runs low (if healthy) or empty; without one, the workers leave when it is empty.
 * `refill`: start the lane's claim now (it is marked under way).
 */
export const workerNext = <D extends Held>(s0: DispatchState<D>, keyId: string, now: number, busy: number): {
  readonly state: DispatchState<D>
  readonly refill: boolean
  readonly step: WorkerStep<D>
} => {
  let s = s0
  const low = laneOf(s, keyId)
  let refill = low.healthy && low.backlog && !low.refilling && low.queue.length <= LOW_WATER
  if (refill) s = changeLane(s, keyId, () => ({ refilling: true }))
  const lane = laneOf(s, keyId)
  // Indexed and sliced rather than destructured (`[next, ...rest]`): the spread walks the iterator
  // protocol over the whole lane once per attempt.
  const next = lane.queue[0]
  if (next === undefined) {
    if (!lane.refilling && (!lane.backlog || active(s, busy) >= CONCURRENCY)) return { state: s, refill, step: { _tag: "Leave" } }
    if (!lane.refilling) {
      refill = true
      s = changeLane(s, keyId, () => ({ refilling: true }))
    }
    return { state: s, refill, step: { _tag: "AwaitRefill" } }
  }
  s = { ...withLane(s, keyId, { ...lane, queue: lane.queue.slice(1) }), queued: s.queued - 1 }
  const expired = now - next.leasedAt > LEASE_MS - LEASE_MARGIN_MS
  return { state: s, refill, step: expired ? { _tag: "Expired", delivery: next.delivery } : { _tag: "Attempt", delivery: next.delivery } }
}

/** The claim a worker waited for leased `leased`: with none leased and none waiting, the worker leaves. */
export const afterRefill = (s: DispatchState<Held>, keyId: string, leased: number): "Leave" | "Continue" =>
  leased === 0 && laneOf(s, keyId).queue.length === 0 ? "Leave" : "Continue"

/** A worker made its first attempt (or left without one): it no longer counts as reserved. */
export const workerStarted = <D extends Held>(s: DispatchState<D>): DispatchState<D> => ({ ...s, reserved: s.reserved - 1 })

/**
 * A worker's attempt finished: the lane is healthy if it succeeded. A receiver in trouble holds no
 * more of its key's work than the deliveries it is failing: the lane's waiting ones go back.
 */
export const attempted = <D extends Held>(s: DispatchState<D>, keyId: string, ok: boolean): Transition<D> => {
  // The usual case — a healthy lane's attempt succeeded — changes nothing: no copy of the lanes per attempt.
  if (ok && laneOf(s, keyId).healthy) return { state: s, actions: noActions }
  const marked = changeLane(s, keyId, () => ({ healthy: ok }))
  if (ok) return { state: marked, actions: [] }
  const { state, taken } = takeQueued(marked, keyId)
  return { state, actions: giveBack(taken) }
}

/** A failed attempt starts its burst (and gives up its slot meanwhile): the key is in trouble from now, not when the burst ends. */
export const failing = <D extends Held>(s: DispatchState<D>, keyId: string): Transition<D> => {
  const { state, taken } = takeQueued(changeLane(s, keyId, () => ({ healthy: false })), keyId)
  return { state, actions: [...giveBack(taken), freedSlot] }
}

/** Shutting down: the lane's waiting deliveries (and the worker's current one) go back at once rather than when their leases end. */
export const workerInterrupted = <D extends Held>(s: DispatchState<D>, keyId: string, current: D | undefined): Transition<D> => {
  const { state, taken } = takeQueued(s, keyId)
  return { state, actions: giveBack([...(current === undefined ? [] : [current]), ...taken]) }
}

/** A worker left (`unstarted`: before its first attempt). The last to leave gives back what was leased to the lane meanwhile. */
export const workerLeft = <D extends Held>(s0: DispatchState<D>, keyId: string, unstarted: boolean, now: number): Transition<D> => {
  const counted = unstarted ? workerStarted(s0) : s0
  const s = changeLane(counted, keyId, (lane) => ({ workers: lane.workers - 1 }))
  if (laneOf(s, keyId).workers > 0) return { state: s, actions: [freedSlot] }
  const { state, taken } = takeQueued(changeLane(s, keyId, () => ({ idleSince: now })), keyId)
  return { state, actions: [...giveBack(taken), freedSlot] }
}
