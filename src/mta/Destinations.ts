/**
 * Destination limits, kept in PostgreSQL so they hold across replicas (DESIGN: "destination
 * limits are kept in PostgreSQL"). A destination is a *site*: the MX host set of the recipient
 * domain (domains hosted together share it), or the domain itself behind a smarthost.
 *
 * - Connections: a site has slots 0 … max_connections-1 (rows of destination_slots). An SMTP
 *   transaction runs on a slot this replica leases. The lease is *sticky*: a slot is kept after
 *   the transaction, because the SMTP client keeps the connection open for reuse (nodemailer's pool
 *   closes an idle connection after 4 minutes), and released once idle for longer than that — so
 *   open connections, not only transactions in progress, stay within the cap on all replicas
 *   together. Held slots are used lowest first, like the pool's connections, so unneeded ones
 *   idle out. A heartbeat extends the leases every lease/4; a crashed replica's slots are taken
 *   over when their lease (HERALD_QUEUE_LEASE_SECONDS) runs out. No free slot: wait for one of
 *   ours (handed over in memory), ask the database again at most once a second, and when this
 *   replica holds none of the site's slots for 5 s, give the delivery back (`run` → None).
 *   Part of a site's slots is kept for transactional mail: bulk transactions use at most
 *   max_connections − max(1, 20 %) of them at once (all of a one-slot site), and a slot handed on
 *   goes to a waiting transactional transaction first (destinations/site.ts).
 * - Rate: one row per site with next_slot_at, reserved atomically (`greatest(next, now) +
 *   interval`), then a sleep until the reserved start: messages are spaced evenly across replicas.
 * - Back-off: a 421 / 4.7.x writes paused_until and backoff_ms (the site's `backoff_seconds`, a
 *   minute unless the shaping file says otherwise, doubling while the site keeps saying so, up to
 *   an hour; a burst of such replies counts once).
 * - `paused(now)` (the claim's skip list): domains of paused sites and of sites whose slots are
 *   all leased by other replicas (that work is better left to them). Also refreshes this replica's
 *   view of the pauses, so work already in hand for a paused site is given back, not sent.
 *
 * SQL per message: none in the steady state (the slot is ours already), one UPDATE of the site row
 * when it has a rate; per claim one read of the live hot rows; a slot acquisition only when this
 * replica needs one more connection. Every time comes from Clock and reaches SQL as a parameter.
 */
import { setImmediate } from "node:timers"
import { Clock, Duration, Effect, Option, Schedule } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { randomBase62 } from "../lib/ids.ts"
import * as local from "./destinations/site.ts"
import { makeDestinationStore } from "./destinations/store.ts"
import { MtaConfig } from "./MtaConfig.ts"
import type { Channel } from "./queue/StoredMessage.ts"
import { loadShapingFile, resolveShaping, type Shaping } from "./shaping.ts"
import { allowDestinationSites } from "../lib/metrics.ts"

const BACKOFF_MAX_MS = 3_600_000
/** Longer than the SMTP client keeps an idle connection open (nodemailer's pool: 4 minutes). */
const IDLE_HOLD_MS = 250_000
/** How often a fiber that needs another slot may ask the database. */
const RECHECK_MS = 1_000
/** Holding no slot of the site for this long, a delivery is given back to the queue. */
const GIVE_UP_MS = 5_000
const DOMAINS_CACHED = 10_000

export class Destinations extends Effect.Service<Destinations>()("herald/Destinations", {
  scoped: Effect.gen(function*() {
    const mta = yield* MtaConfig
    const config = yield* AppConfig
    const store = yield* makeDestinationStore
    const file = loadShapingFile(mta.shapingFile)
    const me = `${config.hostname}/${process.pid}/${randomBase62(6)}`
    const viaSmarthost = Option.isSome(mta.smarthost)
    const sites = new Map<string, local.Site>()
    const clock = yield* Effect.clock
    const domainSite = new Map<string, string>()
    /** Pauses as this replica last read them (site → until, ms), and when it read them. */
    let pausedUntil = new Map<string, number>()
    let pausesReadAt = 0
    /** Counts slot acquisitions, so the heartbeat judges only slots older than its refresh. */
    let acquisitions = 0
    const now = Clock.currentTimeMillis
    const at = (ms: number) => new Date(ms)

    const siteOf = (domain: string, mxHosts: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const key = local.siteKey(domain, mxHosts, viaSmarthost)
        let site = sites.get(key)
        if (site === undefined) {
          site = local.newSite(key, resolveShaping(file, domain, mxHosts))
          sites.set(key, site)
        }
        if (site.registered && domainSite.get(domain) === key) return site
        const s = site
        yield* s.registering.withPermits(1)(Effect.gen(function*() {
          if (!s.registered) {
            yield* store.registerSite(key, s.shaping.name, s.shaping.maxConnections)
            s.registered = true
          }
          if (domainSite.get(domain) !== key) {
            yield* store.registerDomain(domain, key)
            if (domainSite.size >= DOMAINS_CACHED) domainSite.delete(domainSite.keys().next().value!)
            domainSite.set(domain, key)
          }
        }))
        return s
      })

    /**
     * Whether the site is paused, from a view of the pauses at most a second old: refreshed by
     * the claims' skip-list reads (`paused`, at most once a second, see Mta.ts), and here when
     * claims stop (all of this replica's capacity is work in hand).
     */
    const isPaused = (site: local.Site) =>
      Effect.gen(function*() {
        const ms = yield* now
        if (ms - pausesReadAt >= RECHECK_MS) {
          pausesReadAt = ms
          const rows = yield* store.pausedSites(at(ms))
          pausedUntil = new Map(rows.map((r) => [r.site, r.paused_until.getTime()]))
        }
        return (pausedUntil.get(site.key) ?? 0) > ms
      })

    /** Asks the database for one more slot (one fiber per site at a time, at most once a RECHECK). */
    const acquire = (site: local.Site, ms: number, channel: Channel) =>
      Effect.uninterruptible(Effect.gen(function*() {
        site.askAfter = ms + RECHECK_MS
        site.acquiring = true
        const slot = yield* store.acquire(site.key, site.shaping.maxConnections, me, at(ms), at(ms + mta.leaseMs)).pipe(
          Effect.ensuring(Effect.sync(() => (site.acquiring = false)))
        )
        if (slot === undefined) return undefined
        acquisitions += 1
        local.addBusy(site, slot, ms, acquisitions, channel)
        site.askAfter = 0
        local.kick(site)
        return slot
      }))

    /** A slot of `site` for one transaction of `channel` (bulk within its share), or None: hand the delivery back. */
    const take = (site: local.Site, channel: Channel) =>
      Effect.gen(function*() {
        const start = yield* now
        for (;;) {
          const idle = local.takeIdle(site, channel)
          if (idle !== undefined) return Option.some(idle)
          const ms = yield* now
          if (site.held.size < site.shaping.maxConnections && local.mayUse(site, channel) && ms >= site.askAfter && !site.acquiring) {
            const slot = yield* acquire(site, ms, channel)
            if (slot !== undefined) return Option.some(slot)
            continue
          }
          if (site.held.size === 0 && ms - start >= GIVE_UP_MS) return Option.none<number>()
          let wait = RECHECK_MS
          if (site.held.size < site.shaping.maxConnections && !site.acquiring) wait = Math.min(wait, site.askAfter - ms)
          if (site.held.size === 0) wait = Math.min(wait, start + GIVE_UP_MS - ms)
          const handed = yield* local.waitTurn(site, channel, wait, now)
          if (handed !== undefined) return Option.some(handed)
        }
      })

    /**
     * Hands the slot on one event-loop turn later: the SMTP client's pool makes its connection
     * available in a setImmediate after the reply, and the next transaction on this slot must
     * find it free rather than open another connection.
     */
    const handOnLater = (site: local.Site, slot: number) =>
      void setImmediate(() => local.handBack(site, slot, clock.unsafeCurrentTimeMillis()))

    /** Waits for this site's next message start when it has a rate (shared by all replicas). */
    const pace = (site: local.Site) =>
      Effect.gen(function*() {
        if (site.shaping.maxMessagesPerMinute === null) return
        const ms = yield* now
        const start = yield* store.reserveStart(site.key, 60_000 / site.shaping.maxMessagesPerMinute, at(ms))
        if (start > ms) yield* Effect.sleep(Duration.millis(start - ms))
      })

    /**
     * Runs one SMTP transaction of `channel` under the site's limits (bulk within its share of the
     * connections, destinations/site.ts). None: not now (the site is paused, or its connections
     * are held elsewhere) — the caller gives the delivery back to the queue. `connectionHeldUntil`:
     * the slot goes back when that settles (the SMTP connection is free), not when `f` ends.
     */
    const run = <A, E, R>(
      domain: string,
      mxHosts: ReadonlyArray<string>,
      channel: Channel,
      f: (shaping: Shaping) => Effect.Effect<A, E, R>,
      connectionHeldUntil?: Promise<unknown>
    ) =>
      Effect.gen(function*() {
        const site = yield* siteOf(domain, mxHosts)
        if (yield* isPaused(site)) return Option.none<A>()
        // The slot is the connection's, not the transaction's: while the SMTP client holds the
        // connection (until the attempt's outcome is on record, Delivery.ts withOutcomeGate), a
        // slot handed on at once let the next transaction open a second connection beside it —
        // two replicas each at twice their slots, 4 connections to a site of 2
        // (test/mta/throttle-crash.test.ts).
        // Without a connection to wait for, the slot goes back as the transaction ends. Plain
        // callbacks, no fiber per transaction: this is every delivery's path.
        const handBack = (slot: number) =>
          Effect.sync(() => {
            const back = () => handOnLater(site, slot)
            if (connectionHeldUntil === undefined) back()
            else connectionHeldUntil.then(back, back)
          })
        return yield* Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(restore(take(site, channel)), (slot) =>
            Option.isNone(slot)
              ? Effect.succeed(Option.none<A>())
              : restore(Effect.gen(function*() {
                yield* pace(site)
                if (yield* isPaused(site)) return Option.none<A>()
                return Option.some(yield* f(site.shaping))
              })).pipe(Effect.ensuring(handBack(slot.value)))))
      })

    /** The far side asked us to slow down (421 / 4.7.x): the whole site pauses, on every replica. */
    const throttle = (domain: string) =>
      Effect.gen(function*() {
        const key = domainSite.get(domain)
        if (key === undefined) return
        const ms = yield* now
        const backoffMs = sites.get(key)?.shaping.backoffMs ?? resolveShaping(file, domain).backoffMs
        const paused = yield* store.pause(key, at(ms), backoffMs, BACKOFF_MAX_MS)
        if (paused === undefined) return // already paused by another reply
        pausedUntil.set(key, paused.paused_until.getTime())
        yield* Effect.logWarning("destination asked to slow down").pipe(
          Effect.annotateLogs({ domain, site: key, pause_ms: paused.backoff_ms })
        )
      })

    /**
     * How many connections `domain`'s site may hold for `channel` (bulk: its share): from the
     * site's limit once an attempt has found the site, before that the limit the domain alone
     * resolves to (its provider, or the default).
     */
    const connectionsFor = (domain: string, channel: Channel = "transactional"): number => {
      const key = domainSite.get(domain)
      const site = key === undefined ? undefined : sites.get(key)
      const max = site?.shaping.maxConnections ?? resolveShaping(file, domain).maxConnections
      return channel === "bulk" ? local.bulkSlots(max) : max
    }

    /** Domains to leave out of the next claim (see the header); refreshes this replica's pauses. */
    const paused = (ms: number) =>
      Effect.gen(function*() {
        const rows = yield* store.hot(me, at(ms))
        const fresh = new Map<string, number>()
        const domains = new Set<string>()
        for (const row of rows) {
          if (row.paused_until !== null) fresh.set(row.site, row.paused_until.getTime())
          if (row.domain !== null) domains.add(row.domain)
        }
        pausedUntil = fresh
        pausesReadAt = ms
        return [...domains]
      })

    /** Releases slots idle past IDLE_HOLD_MS, extends the others, notices slots taken over. */
    const heartbeat = Effect.gen(function*() {
      const ms = yield* now
      for (const site of sites.values()) yield* store.release(site.key, local.takeIdleOut(site, ms, IDLE_HOLD_MS), me)
      if (![...sites.values()].some((s) => s.held.size > 0 || s.acquiring)) return
      const upTo = acquisitions
      const rows = yield* store.refresh(me, at(ms + mta.leaseMs))
      const ours = new Set(rows.map((r) => `${r.site}\n${r.slot}`))
      for (const site of sites.values()) {
        if (site.acquiring) continue
        const lost = local.markLost(site, upTo, (slot) => ours.has(`${site.key}\n${slot}`))
        if (lost.length > 0) {
          yield* Effect.logWarning("destination slots taken over by another replica").pipe(
            Effect.annotateLogs({ site: site.key, slots: lost.join(",") })
          )
        }
      }
      // Rows leased to us that this replica does not know (a release that failed): let them go.
      for (const row of rows) {
        const site = sites.get(row.site)
        if (site === undefined || (!site.acquiring && !site.held.has(row.slot))) yield* store.release(row.site, [row.slot], me)
      }
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("destination lease refresh failed", cause)))

    yield* Effect.forkScoped(Effect.repeat(heartbeat, Schedule.spaced(Duration.millis(mta.leaseMs / 4))))
    yield* Effect.addFinalizer(() => store.releaseAll(me).pipe(Effect.ignoreLogged))

    /**
     * The shaping entry's name of `domain`, as the metrics' destination label: by the domain's
     * own name first, else by the MX hosts its site was found at (a company domain hosted by
     * Gmail is `gmail`). A site is its MX set, shaped by the first domain seen there, so the
     * domain's own entry goes first.
     */
    const shapingNameOf = (domain: string): string => {
      const own = resolveShaping(file, domain).name
      if (own !== "default") return own
      const key = domainSite.get(domain)
      return (key === undefined ? undefined : sites.get(key))?.shaping.name ?? own
    }

    /** The shaping file's provider names: the only destination labels metrics allow (src/lib/metrics.ts). */
    allowDestinationSites(file.providers.map((p) => p.name))

    return { run, throttle, paused, connectionsFor, shapingNameOf } as const
  })
}) {}
