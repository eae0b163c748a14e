/**
 * Destination limits shared through PostgreSQL: two Destinations services on one database are two
 * replicas. The connection cap and the message rate hold across both, a 421 on one pauses the
 * site for the other, connections held elsewhere send the work back to the queue, and a dead
 * replica's slots are taken over when their lease runs out.
 */
import { ConfigProvider, Context, Effect, Exit, Layer, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BaseLive, DatabaseReadyLive } from "../../src/appliance.ts"
import { Destinations } from "../../src/mta/Destinations.ts"
import { MtaConfigLive } from "../../src/mta/MtaConfig.ts"
import { freshDatabase, query } from "../support/database.ts"
import { writeShapingFile } from "../support/shaping.ts"
import { sleep } from "../support/net.ts"

interface Replica {
  readonly destinations: Destinations
  readonly stop: () => Promise<void>
}

let databaseUrl: string
let shapingFile: string
let a: Replica
let b: Replica

const startReplica = async (): Promise<Replica> => {
  const provider = ConfigProvider.fromMap(new Map([
    ["DATABASE_URL", databaseUrl],
    ["HERALD_LOG_LEVEL", "error"],
    ["HERALD_HOSTNAME", "limits.herald.test"],
    ["HERALD_SHAPING_FILE", shapingFile],
    ["HERALD_QUEUE_LEASE_SECONDS", "5"]
  ]))
  const layer = Destinations.Default.pipe(
    Layer.provide(MtaConfigLive),
    Layer.provide(DatabaseReadyLive),
    Layer.provide(BaseLive),
    Layer.provide(Layer.setConfigProvider(provider))
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return { destinations: Context.get(context, Destinations), stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

beforeAll(async () => {
  databaseUrl = await freshDatabase()
  shapingFile = writeShapingFile({ max_connections: 2, messages_per_connection: 100, max_messages_per_minute: null }, [{
    name: "paced",
    domains: ["rate.example"],
    mx_suffixes: [],
    max_connections: 10,
    messages_per_connection: 100,
    max_messages_per_minute: 600
  }])
  a = await startReplica()
  b = await startReplica()
})
afterAll(async () => {
  await a?.stop()
  await b?.stop()
})


/** One "SMTP transaction" on `replica`: counts how many run at once, returns when it started. */
const transaction = (replica: Replica, domain: string, mx: string, counter: { open: number; peak: number }, ms = 100) =>
  Effect.runPromise(replica.destinations.run(domain, [mx], "transactional", () =>
    Effect.promise(async () => {
      counter.open += 1
      counter.peak = Math.max(counter.peak, counter.open)
      const startedAt = Date.now()
      await sleep(ms)
      counter.open -= 1
      return startedAt
    })))

describe("destination limits across replicas", () => {
  it("keeps a site's connections within its cap on both replicas together", async () => {
    const counter = { open: 0, peak: 0 }
    const runs = await Promise.all([
      ...Array.from({ length: 8 }, () => transaction(a, "cap.example", "mx.cap.test", counter)),
      ...Array.from({ length: 8 }, () => transaction(b, "cap.example", "mx.cap.test", counter))
    ])
    expect(counter.peak).toBeLessThanOrEqual(2)
    expect(counter.peak).toBeGreaterThanOrEqual(1)
    // A replica without a slot gives its work back (None) rather than opening a third connection.
    expect(runs.filter(Option.isSome).length).toBeGreaterThanOrEqual(8)
    const [held] = await query<{ n: number }>(databaseUrl,
      "SELECT count(*)::int AS n FROM destination_slots WHERE site = 'mx:mx.cap.test' AND owner IS NOT NULL AND lease_until > now()")
    expect(held!.n).toBeLessThanOrEqual(2)
  }, 30_000)

  it("sends work back, and leaves the domain out of claims, where another replica holds every connection", async () => {
    const counter = { open: 0, peak: 0 }
    // A opens both connections of the site (and keeps them for reuse).
    await Promise.all([transaction(a, "held.example", "mx.held.test", counter, 300), transaction(a, "held.example", "mx.held.test", counter, 300)])
    expect(counter.peak).toBe(2)
    const started = Date.now()
    const onB = await transaction(b, "held.example", "mx.held.test", counter)
    expect(Option.isNone(onB)).toBe(true)
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_000)
    expect(await Effect.runPromise(b.destinations.paused(Date.now()))).toContain("held.example")
    expect(await Effect.runPromise(a.destinations.paused(Date.now()))).not.toContain("held.example")
    // A reuses its own slots at once.
    expect(Option.isSome(await transaction(a, "held.example", "mx.held.test", counter))).toBe(true)
  }, 30_000)

  it("spaces messages by the site's rate across both replicas", async () => {
    const counter = { open: 0, peak: 0 }
    const runs = await Promise.all([
      ...Array.from({ length: 5 }, () => transaction(a, "rate.example", "mx.rate.test", counter, 10)),
      ...Array.from({ length: 5 }, () => transaction(b, "rate.example", "mx.rate.test", counter, 10))
    ])
    const starts = runs.map((r) => Option.getOrThrow(r)).sort((x, y) => x - y)
    // 600 a minute is one every 100 ms: ten reserved starts span 900 ms, less the first one's
    // round trip to the database; with a rate per replica five each would span 400 ms.
    expect(starts[starts.length - 1]! - starts[0]!).toBeGreaterThanOrEqual(700)
  }, 30_000)

  it("pauses the whole site for every replica after a 421, once per burst", async () => {
    const counter = { open: 0, peak: 0 }
    await transaction(a, "slow.example", "mx.slow.test", counter, 1)
    await Effect.runPromise(a.destinations.throttle("slow.example"))
    await Effect.runPromise(a.destinations.throttle("slow.example"))
    const [site] = await query<{ backoff_ms: number; ms: number }>(databaseUrl,
      "SELECT backoff_ms, extract(epoch FROM paused_until - now()) * 1000 AS ms FROM destination_sites WHERE site = 'mx:mx.slow.test'")
    expect(site!.backoff_ms).toBe(60_000)
    expect(Number(site!.ms)).toBeGreaterThan(50_000)
    expect(await Effect.runPromise(b.destinations.paused(Date.now()))).toContain("slow.example")
    // B never saw the 421; a domain hosted at the same MX is paused with it.
    expect(Option.isNone(await transaction(b, "slow.example", "mx.slow.test", counter, 1))).toBe(true)
    expect(Option.isNone(await transaction(b, "also-slow.example", "mx.slow.test", counter, 1))).toBe(true)
    expect(await Effect.runPromise(b.destinations.paused(Date.now()))).toContain("also-slow.example")
  }, 30_000)

  it("takes over the slots of a replica that died when their lease runs out", async () => {
    await query(databaseUrl, "INSERT INTO destination_sites (site, name, max_connections) VALUES ('mx:mx.dead.test', 'default', 2)")
    await query(databaseUrl, `INSERT INTO destination_slots (site, slot, owner, lease_until)
      VALUES ('mx:mx.dead.test', 0, 'dead/1', now() + interval '1.5 seconds'), ('mx:mx.dead.test', 1, 'dead/1', now() + interval '1.5 seconds')`)
    const counter = { open: 0, peak: 0 }
    const started = Date.now()
    const run = await transaction(b, "dead.example", "mx.dead.test", counter, 1)
    expect(Option.isSome(run)).toBe(true)
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000)
  }, 30_000)
})
