/**
 * The outbound MTA's scheduling state and its decisions, as pure transitions: what each lane may
 * claim and when, which claimed delivery starts now and which waits (its domain's ready line, or
 * the memory budget's line), who goes next when an attempt leaves its destination, and whether
 * more work is probably due (the backlog flags). The actor (Mta.ts) keeps one `MtaState` in a Ref
 * and only performs the `MtaAction`s a transition returns; a metrics endpoint reads the same value.
 *
 * Each transition is `(state, input, …) → { state, actions }` and never changes its input: it
 * copies the collections it touches (sets and lines of at most HERALD_MTA_CONCURRENCY entries,
 * a few microseconds per event). Tested as tables in test/unit/mta-state.test.ts.
 *
 * Two lanes, claimed apart (deliveries.channel): transactional and bulk. Bulk attempts hold at
 * most concurrency − max(1, 20 %) of the attempts in hand, so a bulk backlog always leaves room to
 * claim a transactional send.
 */
import { type BudgetState, emptyBudget, giveRoom, takeRoom } from "./message-budget.ts"
import type { Channel } from "./queue/StoredMessage.ts"

/** Without a wake-up, a lane's claim is made at least this often (retries that fall due). */
export const POLL_MS = 1_000
/** The destinations' skip list is read at most this often: a busy MTA claims many times a second. */
export const SKIP_RECHECK_MS = 1_000

/** What the decisions read of a claimed delivery (DeliveryQueue's ClaimedDelivery has more). */
export interface Claim {
  readonly id: string
  readonly message_id: string
  readonly channel: Channel
  readonly recipient_domain: string
  readonly content_bytes: number
}

/** How many connections the destination's site gives the lane now (Destinations.connectionsFor). */
export type Connections = (domain: string, channel: Channel) => number

export interface MtaLimits {
  /** HERALD_MTA_CONCURRENCY: attempts in hand at most. */
  readonly concurrency: number
  /** Bulk attempts in hand at most: the rest of the capacity is kept for transactional sends. */
  readonly bulkCapacity: number
  /**
   * With work in hand, claims wait until this many places are free: a claim (and the skip list
   * read before it) then serves a group of attempts rather than one per finished attempt. Idle
   * capacity claims at once, so a new send on a quiet MTA goes out without waiting.
   */
  readonly refillAt: number
}

export const mtaLimits = (concurrency: number): MtaLimits => ({
  concurrency,
  bulkCapacity: concurrency <= 1 ? concurrency : concurrency - Math.max(1, Math.floor(concurrency / 5)),
  refillAt: Math.max(1, Math.floor(concurrency / 4))
})

export interface MtaState<D extends Claim = Claim> {
  readonly limits: MtaLimits
  /** Claimed deliveries not finished (leased by this replica: refreshed, given back at shutdown). */
  readonly inHand: ReadonlySet<string>
  /** How many of `inHand` are bulk. */
  readonly bulkInHand: number
  /** A transactional claim is worth making: woken by a send, or its last claim was full. */
  readonly transactionalDue: boolean
  /** When the last transactional claim was made (epoch ms): one is made at least every POLL_MS. */
  readonly transactionalClaimedAt: number
  /** More work is probably due: the next attempt to finish wakes the loop. */
  readonly backlog: boolean
  /**
   * The last bulk claim took all it asked for, so more bulk work is probably due. Kept until a
   * bulk claim comes back short: the claims in between wait for `refillAt` free places and make
   * none, and forgetting the backlog there left a campaign's work to the one-second poll — 80
   * deliveries (the bulk share) a second, whatever the destination could take (bench/campaign.ts).
   */
  readonly bulkBacklog: boolean
  /** The domains a claim leaves out (paused sites, sites full with other replicas' connections), and when read. */
  readonly skip: ReadonlyArray<string>
  readonly skipReadAt: number
  /** Attempts running, by lane and domain (`laneKey`): a domain runs at most twice its site's connections. */
  readonly running: ReadonlyMap<string, ReadonlySet<string>>
  /**
   * Claimed deliveries not started yet, by lane and domain, oldest first. An attempt that waited
   * for a connection instead held a fiber, its message and its waiting machinery: a claim of 100
   * for a site of 10 connections made 90 such waits, most of the MTA's heap growth on
   * bench/outbound.ts. Per lane, so a transactional send never queues behind bulk ones.
   */
  readonly ready: ReadonlyMap<string, ReadonlyArray<D>>
  /** Claimed deliveries whose message found no room in the memory budget, oldest first. */
  readonly overBudget: ReadonlyArray<D>
  /** A delivery holds its message's room from admission (waiting in a ready line included) until its attempt ends. */
  readonly budget: BudgetState
}

export type MtaAction<D extends Claim = Claim> =
  /** Run the delivery's attempt (its place among its domain's running attempts is taken). */
  | { readonly _tag: "Start"; readonly delivery: D }
  /** Give these claimed deliveries back to the queue, unattempted. */
  | { readonly _tag: "GiveBack"; readonly ids: ReadonlyArray<string> }
  /** Wake the loop for a claim. */
  | { readonly _tag: "Wake" }

export interface Transition<D extends Claim> {
  readonly state: MtaState<D>
  readonly actions: ReadonlyArray<MtaAction<D>>
}

export const initialMtaState = <D extends Claim>(concurrency: number, budgetBytes: number): MtaState<D> => ({
  limits: mtaLimits(concurrency),
  inHand: new Set(),
  bulkInHand: 0,
  transactionalDue: true,
  transactionalClaimedAt: Number.NEGATIVE_INFINITY,
  backlog: false,
  bulkBacklog: false,
  skip: [],
  skipReadAt: Number.NEGATIVE_INFINITY,
  running: new Map(),
  ready: new Map(),
  overBudget: [],
  budget: emptyBudget(budgetBytes)
})

export const laneKey = (d: Claim) => `${d.channel} ${d.recipient_domain}`
const freePlaces = (s: MtaState<Claim>) => s.limits.concurrency - s.inHand.size
const wake = { _tag: "Wake" } as const

/** A new send was signalled (this replica's at once, other replicas' by NOTIFY): a transactional claim is due. */
export const signalled = <D extends Claim>(s: MtaState<D>): Transition<D> => ({ state: { ...s, transactionalDue: true }, actions: [wake] })

export const skipListStale = (s: MtaState<Claim>, now: number) => now - s.skipReadAt >= SKIP_RECHECK_MS
export const skipListRead = <D extends Claim>(s: MtaState<D>, skip: ReadonlyArray<string>, now: number): MtaState<D> => ({ ...s, skip, skipReadAt: now })

/**
 * How many of `lane` to claim now, 0 for none. With work of the lane in hand, a claim waits until
 * `refillAt` places are free; bulk stays within `bulkCapacity`; a transactional claim is made only
 * when one may be due (see transactionalDue) or POLL_MS has passed, not at every bulk attempt
 * that finishes.
 */
export const wanted = (s: MtaState<Claim>, lane: Channel, now: number): number => {
  const total = freePlaces(s)
  const { bulkCapacity, refillAt } = s.limits
  if (lane === "bulk") {
    const free = Math.min(total, bulkCapacity - s.bulkInHand)
    return free > 0 && (free >= refillAt || s.bulkInHand === 0) ? free : 0
  }
  const inHand = s.inHand.size - s.bulkInHand
  if (!s.transactionalDue && now - s.transactionalClaimedAt < POLL_MS) return 0
  return total > 0 && (total >= refillAt || inHand === 0) ? total : 0
}

/**
 * The lane's claim to make now: `limit` 0 for none (then `more` says whether every place is
 * taken, so more work may be waiting). A transactional claim made is no longer due.
 */
export const planClaim = <D extends Claim>(s: MtaState<D>, lane: Channel, now: number): { readonly state: MtaState<D>; readonly limit: number; readonly more: boolean } => {
  const limit = wanted(s, lane, now)
  if (limit === 0) return { state: s, limit, more: freePlaces(s) <= 0 }
  if (lane === "bulk") return { state: s, limit, more: false }
  return { state: { ...s, transactionalDue: false, transactionalClaimedAt: now }, limit, more: false }
}

/** The state's collections copied once for one transition, changed in place, then frozen as the next state. */
interface Draft<D extends Claim> {
  limits: MtaLimits
  inHand: Set<string>
  bulkInHand: number
  transactionalDue: boolean
  transactionalClaimedAt: number
  backlog: boolean
  bulkBacklog: boolean
  skip: ReadonlyArray<string>
  skipReadAt: number
  running: Map<string, ReadonlySet<string>>
  ready: Map<string, ReadonlyArray<D>>
  overBudget: Array<D>
  budget: BudgetState
  readonly actions: Array<MtaAction<D>>
}

const draft = <D extends Claim>(s: MtaState<D>): Draft<D> => ({
  ...s,
  inHand: new Set(s.inHand),
  running: new Map(s.running),
  ready: new Map(s.ready),
  overBudget: [...s.overBudget],
  actions: []
})

const done = <D extends Claim>({ actions, ...state }: Draft<D>): Transition<D> => ({ state, actions })

const start = <D extends Claim>(t: Draft<D>, d: D) => {
  const key = laneKey(d)
  t.running.set(key, new Set(t.running.get(key)).add(d.id))
  t.actions.push({ _tag: "Start", delivery: d })
}

/** Starts `d`, or makes it wait among its domain's ready deliveries (it holds its message's room already). */
const place = <D extends Claim>(t: Draft<D>, d: D, connections: Connections) => {
  const key = laneKey(d)
  if ((t.running.get(key)?.size ?? 0) < 2 * connections(d.recipient_domain, d.channel)) return start(t, d)
  t.ready.set(key, [...(t.ready.get(key) ?? []), d])
}

const admit = <D extends Claim>(t: Draft<D>, d: D, connections: Connections) => {
  t.inHand.add(d.id)
  if (d.channel === "bulk") t.bulkInHand += 1
  // A transactional send does not wait behind bulk messages for memory budget room either.
  const room = d.channel === "transactional" || t.overBudget.length === 0 ? takeRoom(t.budget, d.message_id, d.content_bytes) : undefined
  if (room === undefined) return void t.overBudget.push(d)
  t.budget = room
  place(t, d, connections)
}

/** Admits the deliveries waiting for budget room, oldest first, while their messages find room. */
const admitWaiting = <D extends Claim>(t: Draft<D>, connections: Connections) => {
  const admitted: Array<D> = []
  for (let room = takeFirst(t); room !== undefined; room = takeFirst(t)) {
    t.budget = room
    admitted.push(t.overBudget.shift()!)
  }
  for (const d of admitted) place(t, d, connections)
}
const takeFirst = (t: Draft<Claim>) => t.overBudget.length === 0 ? undefined : takeRoom(t.budget, t.overBudget[0]!.message_id, t.overBudget[0]!.content_bytes)

/**
 * A claim of `limit` for `lane` brought `claimed`: each is admitted (started, or waiting for its
 * domain or for budget room). `more`: it took all it asked for, so more is probably due — a full
 * transactional claim keeps the lane due, and the bulk backlog lasts until a bulk claim comes back short.
 */
export const claimed = <D extends Claim>(s: MtaState<D>, lane: Channel, limit: number, deliveries: ReadonlyArray<D>, connections: Connections): Transition<D> & { readonly more: boolean } => {
  const t = draft(s)
  for (const d of deliveries) admit(t, d, connections)
  const full = deliveries.length === limit
  if (full && lane === "transactional") t.transactionalDue = true
  if (lane === "bulk") t.bulkBacklog = full
  return { ...done(t), more: full }
}

/**
 * Both lanes' claims are made. The backlog flag (wake at the next attempt's end) is set when woken
 * while (nearly) full or a claim took all it asked for; `more`: claim again at once.
 */
export const claimsMade = <D extends Claim>(s: MtaState<D>, transactionalMore: boolean, bulkMore: boolean): { readonly state: MtaState<D>; readonly more: boolean } => {
  const backlog = transactionalMore || bulkMore || s.bulkBacklog || freePlaces(s) < s.limits.refillAt
  return { state: { ...s, backlog }, more: s.transactionalDue && freePlaces(s) > 0 }
}

/**
 * With transactional work in hand, the sends of the next moment are claimed together: a busy API
 * wakes the MTA once per send, and a claim per wake-up cost a statement per message
 * (bench/outbound.ts). Bulk work in hand does not delay a transactional claim.
 */
export const gatherBeforeClaim = (s: MtaState<Claim>) => s.inHand.size - s.bulkInHand > 0

/**
 * `d` leaves its domain's running attempts (once: later calls change nothing). Its place goes to
 * the next ready delivery of the domain (`startNext`); when the destination refused `d`, the ready
 * ones are given back with it, in one statement, rather than each waiting in turn for the same
 * refusal (up to 5 s each when other replicas hold every connection).
 */
const leave = <D extends Claim>(t: Draft<D>, d: D, startNext: boolean, refused: boolean) => {
  const key = laneKey(d)
  const runners = t.running.get(key)
  if (runners === undefined || !runners.has(d.id)) return
  const others = new Set(runners)
  others.delete(d.id)
  if (others.size === 0) t.running.delete(key)
  else t.running.set(key, others)
  const line = t.ready.get(key) ?? []
  if (refused) {
    t.ready.delete(key)
    for (const r of line) {
      t.inHand.delete(r.id)
      if (r.channel === "bulk") t.bulkInHand -= 1
      t.budget = giveRoom(t.budget, r.message_id).budget
    }
    if (line.length > 0) t.actions.push({ _tag: "GiveBack", ids: line.map((r) => r.id) })
    return
  }
  const [next, ...rest] = line
  if (!startNext || next === undefined) return
  if (rest.length === 0) t.ready.delete(key)
  else t.ready.set(key, rest)
  start(t, next)
}

/** `d`'s attempt is done with the destination's connection; `refused`: the destination would not take it now. */
export const leftDestination = <D extends Claim>(s: MtaState<D>, d: D, refused: boolean): Transition<D> => {
  if (s.running.get(laneKey(d))?.has(d.id) !== true) return { state: s, actions: [] }
  const t = draft(s)
  leave(t, d, true, refused)
  return done(t)
}

/**
 * `d`'s attempt ended. Its place and its message's room are given back; room freed admits what
 * waited for it. At shutdown (`interrupted`) nothing new starts: what is still ready is given back
 * with the leases. With a backlog, the loop is woken to claim.
 */
export const attemptEnded = <D extends Claim>(s: MtaState<D>, d: D, interrupted: boolean, connections: Connections): Transition<D> => {
  const t = draft(s)
  t.inHand.delete(d.id)
  if (d.channel === "bulk") t.bulkInHand -= 1
  leave(t, d, !interrupted, false)
  const given = giveRoom(t.budget, d.message_id)
  t.budget = given.budget
  if (!interrupted && given.freed && t.overBudget.length > 0) admitWaiting(t, connections)
  if (t.backlog) t.actions.push(wake)
  return done(t)
}
