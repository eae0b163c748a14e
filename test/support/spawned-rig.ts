/**
 * Spawned appliances (real processes, to be SIGKILLed) on one DNS server, every one stopped when
 * the file ends: the crash tests' rig. Call it at a test file's top level: it registers the hooks.
 */
import pg from "pg"
import { afterAll, beforeAll } from "vitest"
import { type ApplianceProcess, spawnAppliance } from "./appliance.ts"
import { freshDatabase, query } from "./database.ts"
import { type DnsServer, startDnsServer } from "./dns-server.ts"
import { eventually } from "./eventually.ts"
import { newSender } from "./sending.ts"

export const spawnedRig = (env: Record<string, string>) => {
  let dns: DnsServer | undefined
  const started: Array<ApplianceProcess> = []
  beforeAll(async () => {
    dns = await startDnsServer()
  })
  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop()))
    await dns?.close()
  })
  const dnsServer = () => {
    if (dns === undefined) throw new Error("spawnedRig: the DNS server starts in beforeAll")
    return dns
  }
  /** An appliance on `databaseUrl`; a second one on the same database takes the first's bootstrap key. */
  const spawn = async (databaseUrl: string, bootstrapKey?: string) => {
    const p = await spawnAppliance({ databaseUrl, env: { HERALD_DNS_SERVERS: dnsServer().address, ...env }, ...(bootstrapKey === undefined ? {} : { bootstrapKey }) })
    started.push(p)
    return p
  }
  /**
   * Where each campaign crash test begins: a fresh database with one appliance on it, a sender on
   * the growth plan (bulk allowed), its API, and one list named `listName`.
   */
  const begin = async (listName: string) => {
    const databaseUrl = await freshDatabase()
    const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(databaseUrl, text, params)
    const first = await spawn(databaseUrl)
    const sender = await newSender(first, dnsServer(), { packageId: "growth" })
    const api = (method: string, route: string, body?: unknown) => first.request(method, route, { token: sender.token, ...(body === undefined ? {} : { body }) })
    const list = await api("POST", "/v1/bulk/lists", { name: listName })
    return { databaseUrl, db, first, sender, api, list } as const
  }
  return { dns: dnsServer, spawn, begin } as const
}

/**
 * SIGKILLs `p` in the middle of a fan-out batch: a `messages` lock taken from outside holds the
 * batch's INSERT inside its transaction (its quota already charged), the process is killed there,
 * and this resolves once PostgreSQL has rolled the killed transaction back.
 */
export const killInsideMessagesBatch = async (p: ApplianceProcess, databaseUrl: string) => {
  const db = (text: string) => query(databaseUrl, text)
  const blocker = new pg.Client({ connectionString: databaseUrl })
  await blocker.connect()
  try {
    await blocker.query("BEGIN")
    await blocker.query("LOCK TABLE messages IN SHARE MODE")
    await eventually(async () => {
      const waiting = await db("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%INSERT INTO messages%'")
      return waiting.length > 0 ? true : undefined
    }, "a batch blocked in the middle of its transaction", 10_000)
    p.child.kill("SIGKILL")
    await p.exited
  } finally {
    await blocker.query("ROLLBACK").catch(() => undefined)
    await blocker.end()
  }
  await eventually(async () => {
    const busy = await db("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
    return busy.length === 0 ? true : undefined
  }, "the killed process's transaction rolled back")
}
