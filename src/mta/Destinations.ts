/**
 * Destination actors' limits, per recipient domain (this replica): at most max_connections SMTP
 * transactions at once, a message rate when the shaping sets one (spaced evenly, a token bucket
 * of one), and a pause after the far side says 421 or 4.7.x (adaptive back-off: the domain is left
 * out of claims for a minute, doubling while it keeps saying so, up to an hour).
 */
import { Clock, Duration, Effect } from "effect"
import { MtaConfig } from "./MtaConfig.ts"
import { loadShapingFile, resolveShaping, type Shaping } from "./shaping.ts"

interface Destination {
  readonly shaping: Shaping
  readonly semaphore: Effect.Semaphore
  nextSlotAt: number
  backoffMs: number
  pausedUntil: number
}

const BACKOFF_START_MS = 60_000
const BACKOFF_MAX_MS = 3_600_000

export class Destinations extends Effect.Service<Destinations>()("herald/Destinations", {
  effect: Effect.gen(function*() {
    const mta = yield* MtaConfig
    const file = loadShapingFile(mta.shapingFile)
    const table = new Map<string, Destination>()

    const destination = (domain: string, mxHosts: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const existing = table.get(domain)
        if (existing !== undefined) return existing
        const shaping = resolveShaping(file, domain, mxHosts)
        const created: Destination = {
          shaping,
          semaphore: yield* Effect.makeSemaphore(shaping.maxConnections),
          nextSlotAt: 0,
          backoffMs: 0,
          pausedUntil: 0
        }
        table.set(domain, created)
        return created
      })

    /** Waits for this destination's next message slot when it has a rate. */
    const pace = (d: Destination) =>
      Effect.gen(function*() {
        if (d.shaping.maxMessagesPerMinute === null) return
        const interval = 60_000 / d.shaping.maxMessagesPerMinute
        const now = yield* Clock.currentTimeMillis
        const slot = Math.max(now, d.nextSlotAt)
        d.nextSlotAt = slot + interval
        if (slot > now) yield* Effect.sleep(Duration.millis(slot - now))
      })

    const run = <A, E, R>(domain: string, mxHosts: ReadonlyArray<string>, f: (shaping: Shaping) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(destination(domain, mxHosts), (d) => d.semaphore.withPermits(1)(Effect.zipRight(pace(d), f(d.shaping))))

    const throttle = (domain: string) =>
      Effect.gen(function*() {
        const d = table.get(domain)
        if (d === undefined) return
        const now = yield* Clock.currentTimeMillis
        d.backoffMs = Math.min(BACKOFF_MAX_MS, d.backoffMs === 0 ? BACKOFF_START_MS : d.backoffMs * 2)
        d.pausedUntil = now + d.backoffMs
        yield* Effect.logWarning("destination asked to slow down").pipe(
          Effect.annotateLogs({ domain, pause_ms: d.backoffMs })
        )
      })

    /** Domains to leave out of the next claim; a pause that ran out also eases the back-off. */
    const paused = (now: number) => {
      const out: Array<string> = []
      for (const [domain, d] of table) {
        if (d.pausedUntil > now) out.push(domain)
        else if (d.backoffMs > 0 && now > d.pausedUntil + d.backoffMs) d.backoffMs = 0
      }
      return out
    }

    return { run, throttle, paused } as const
  })
}) {}
