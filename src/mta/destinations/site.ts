/**
 * This replica's side of one destination site: the connection slots it holds (leased in
 * PostgreSQL), which of them an SMTP transaction is using, and the fibers waiting for one. Plain
 * synchronous bookkeeping — fibers interleave only between effects, so each function here is atomic.
 *
 * Slots reserved for transactional mail: bulk transactions use at most `bulkSlots(max)` of the
 * site's slots at once — max_connections − max(1, 20 % of it), and all of them when the site has
 * only one — so a bulk backlog always leaves a connection to a transactional send. A slot handed
 * on goes to a waiting transactional transaction first, then to a bulk one while bulk is under
 * its share. A transactional transaction may use every slot.
 */
import { Deferred, Duration, Effect, Exit, FiberId } from "effect"
import type { Channel } from "../queue/StoredMessage.ts"
import type { Shaping } from "../shaping.ts"

/** How many of a site's `maxConnections` slots bulk mail may use at once (see the header). */
export const bulkSlots = (maxConnections: number): number =>
  maxConnections <= 1 ? maxConnections : maxConnections - Math.max(1, Math.floor(maxConnections / 5))

interface Held {
  busy: boolean
  /** The channel of the transaction using it (when busy). */
  channel: Channel
  /** When a transaction last gave the slot back (ms): idle slots are released after a while. */
  lastUsed: number
  /** The database gave the slot to another replica (our lease ran out): drop it once free. */
  lost: boolean
  /** This replica's acquisition counter when the slot was acquired. */
  readonly acquisition: number
}

interface Waiter {
  readonly channel: Channel
  /** A slot handed over by a finishing transaction; null: "ask the database again". */
  handed: number | null | undefined
  readonly wake: Deferred.Deferred<void>
}

export interface Site {
  readonly key: string
  readonly shaping: Shaping
  registered: boolean
  readonly held: Map<number, Held>
  readonly waiters: Array<Waiter>
  /** Slots busy with bulk transactions (at most `bulkSlots`). */
  bulkBusy: number
  /** No fiber asks the database for another slot before this (ms); one asks at a time. */
  askAfter: number
  /** A slot acquisition is on its way to the database (the heartbeat must not judge its rows). */
  acquiring: boolean
  /** One fiber registers the site (and a new domain of it) while the others wait. */
  readonly registering: Effect.Semaphore
}

/**
 * The site of a domain: its MX host set (domains hosted together share connections and limits,
 * like gmail.com and googlemail.com), or the domain itself behind a smarthost or without hosts.
 */
export const siteKey = (domain: string, mxHosts: ReadonlyArray<string>, viaSmarthost: boolean): string => {
  if (viaSmarthost || mxHosts.length === 0) return `domain:${domain.toLowerCase()}`
  const hosts = [...new Set(mxHosts.map((h) => h.toLowerCase().replace(/\.$/, "")))].sort()
  return `mx:${hosts.join(",")}`
}

export const newSite = (key: string, shaping: Shaping): Site => ({
  key,
  shaping,
  registered: false,
  held: new Map(),
  waiters: [],
  bulkBusy: 0,
  askAfter: 0,
  acquiring: false,
  registering: Effect.unsafeMakeSemaphore(1)
})

/** Whether a transaction of `channel` may take one more slot now (bulk: within its share). */
export const mayUse = (site: Site, channel: Channel): boolean =>
  channel === "transactional" || site.bulkBusy < bulkSlots(site.shaping.maxConnections)

const markBusy = (site: Site, h: Held, channel: Channel) => {
  h.busy = true
  h.channel = channel
  if (channel === "bulk") site.bulkBusy += 1
}

const markFree = (site: Site, h: Held) => {
  if (h.busy && h.channel === "bulk") site.bulkBusy -= 1
  h.busy = false
}

/** The lowest idle slot held here, now busy for `channel` (lowest first, so unneeded slots idle out). */
export const takeIdle = (site: Site, channel: Channel): number | undefined => {
  if (!mayUse(site, channel)) return undefined
  let best: number | undefined
  for (const [slot, h] of site.held) {
    if (!h.busy && !h.lost && (best === undefined || slot < best)) best = slot
  }
  if (best !== undefined) markBusy(site, site.held.get(best)!, channel)
  return best
}

export const addBusy = (site: Site, slot: number, now: number, acquisition: number, channel: Channel) => {
  const h: Held = { busy: false, channel, lastUsed: now, lost: false, acquisition }
  markBusy(site, h, channel)
  site.held.set(slot, h)
}

/** The next waiter a free slot goes to: transactional first, bulk while under its share. */
const nextWaiter = (site: Site): Waiter | undefined => {
  const i = site.waiters.findIndex((w) => w.channel === "transactional")
  if (i >= 0) return site.waiters.splice(i, 1)[0]
  return mayUse(site, "bulk") ? site.waiters.shift() : undefined
}

/** Wakes one waiter to ask the database for another slot (there may be one to have). */
export const kick = (site: Site) => {
  if (site.held.size >= site.shaping.maxConnections) return
  const waiter = nextWaiter(site)
  if (waiter === undefined) return
  waiter.handed = null
  Deferred.unsafeDone(waiter.wake, Exit.void)
}

/** A transaction is done with `slot`: straight to the next waiter, else idle (kept, still leased). */
export const handBack = (site: Site, slot: number, now: number) => {
  const h = site.held.get(slot)
  if (h === undefined) return
  markFree(site, h)
  if (h.lost) {
    site.held.delete(slot)
    return kick(site)
  }
  h.lastUsed = now
  const waiter = nextWaiter(site)
  if (waiter === undefined) return
  markBusy(site, h, waiter.channel)
  waiter.handed = slot
  Deferred.unsafeDone(waiter.wake, Exit.void)
}

/**
 * Waits up to `ms` for a slot handed over by a finishing transaction. A slot handed to a fiber
 * interrupted meanwhile goes on to the next waiter, so none is lost.
 */
export const waitTurn = (site: Site, channel: Channel, ms: number, now: Effect.Effect<number>): Effect.Effect<number | undefined> =>
  Effect.suspend(() => {
    const waiter: Waiter = { channel, handed: undefined, wake: Deferred.unsafeMake<void>(FiberId.none) }
    site.waiters.push(waiter)
    const settle = Effect.sync(() => {
      const i = site.waiters.indexOf(waiter)
      if (i >= 0) site.waiters.splice(i, 1)
      return waiter.handed ?? undefined
    })
    return Deferred.await(waiter.wake).pipe(
      Effect.timeout(Duration.millis(Math.max(1, ms))),
      Effect.ignore,
      Effect.zipRight(settle),
      Effect.onInterrupt(() =>
        Effect.flatMap(settle, (slot) => (slot === undefined ? Effect.void : Effect.flatMap(now, (at) => Effect.sync(() => handBack(site, slot, at)))))
      )
    )
  })

/** Idle slots unused for `idleMs`: forgotten here, to be released in the database. */
export const takeIdleOut = (site: Site, now: number, idleMs: number): Array<number> => {
  const out: Array<number> = []
  for (const [slot, h] of site.held) {
    if (!h.busy && now - h.lastUsed >= idleMs) out.push(slot)
  }
  for (const slot of out) site.held.delete(slot)
  return out
}

/**
 * After a refresh: slots the database no longer lists as ours were lost to a takeover. Only slots
 * acquired before the refresh was sent (`upTo`) are judged; a newer one may not be in its answer.
 */
export const markLost = (site: Site, upTo: number, stillOurs: (slot: number) => boolean): Array<number> => {
  const lost: Array<number> = []
  for (const [slot, h] of site.held) {
    if (h.acquisition > upTo || stillOurs(slot)) continue
    lost.push(slot)
    if (h.busy) h.lost = true
    else site.held.delete(slot)
  }
  return lost
}
