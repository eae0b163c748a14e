/**
 * The crash window of outbound delivery: a message the destination accepted (250) whose outcome
 * was not yet on record when the process died is sent again by the next process. Each outcome is
 * on record before the next transaction on its connection (src/mta/smtp-pool.ts holds the
 * connection until its attempt is done), so a SIGKILL resends at most one message per connection
 * open at the kill: the SMTP transactions in flight, counted by the sink.
 *
 * Outcomes commit slowly here on purpose (another session holds a lock their INSERT waits for, as
 * an fsync stall or a checkpoint would slow them): before, the connections kept sending while
 * their outcomes waited, and every message accepted meanwhile was sent again after the restart.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawnAppliance } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { writeShapingFile } from "../support/shaping.ts"
import { newSender } from "../support/sending.ts"
import { startSmtpSink } from "../support/smtp-sink.ts"

let dns: DnsServer
let shapingFile: string

beforeAll(async () => {
  dns = await startDnsServer({ "mx.sink.test": { A: ["127.0.0.1"] } })
  dns.set("many.example", { MX: [{ preference: 10, exchange: "mx.sink.test" }] })
  shapingFile = writeShapingFile({ max_connections: 3, messages_per_connection: 1000, max_messages_per_minute: null })
})
afterAll(() => dns.close())

const COUNT = 300
/** How long the outcomes' commit is held up before the kill. */
const STALL_MS = 1_500

describe("the outbound crash window", () => {
  it("resends after a SIGKILL at most the SMTP transactions in flight at the kill, however slow the outcomes' commit", async () => {
    const sink = await startSmtpSink()
    const databaseUrl = await freshDatabase()
    const env = {
      HERALD_DNS_SERVERS: dns.address, HERALD_MX_PORT: String(sink.port), HERALD_HOSTNAME: "mta.herald.test",
      HERALD_SHAPING_FILE: shapingFile, HERALD_QUEUE_LEASE_SECONDS: "5"
    }
    // Queued with delivery off, so the killed process finds the whole queue due.
    const setup = await spawnAppliance({ databaseUrl, env: { ...env, HERALD_MTA_ENABLED: "false" } })
    const sender = await newSender(setup, dns, { packageId: "scale" })
    for (let start = 0; start < COUNT; start += 100) {
      const personalizations = Array.from({ length: 100 }, (_, i) => ({ to: [{ email: `r${start + i}@many.example` }] }))
      const res = await setup.request("POST", "/v1/mail/send", {
        token: sender.token,
        body: { personalizations, from: { email: sender.from }, subject: "Load", content: [{ type: "text/plain", value: "x" }] }
      })
      expect(res.status).toBe(202)
    }
    await setup.stop()

    const delivering = { ...env, HERALD_MTA_ENABLED: "true" }
    const first = await spawnAppliance({ databaseUrl, env: delivering, bootstrapKey: setup.adminToken })
    const stall = new pg.Client({ connectionString: databaseUrl })
    await stall.connect()
    let inFlight: number
    let acceptedWhileStalled: number
    try {
      await sink.waitFor(30, 60_000)
      // An outcome's INSERT INTO delivery_attempts waits for this lock: its commit is late.
      await stall.query("BEGIN")
      await stall.query("LOCK TABLE delivery_attempts IN SHARE MODE")
      const atStall = sink.received.length
      await new Promise((r) => setTimeout(r, STALL_MS))
      acceptedWhileStalled = sink.received.length - atStall
      const killedAt = Date.now()
      first.child.kill("SIGKILL")
      await first.exited
      inFlight = sink.transactionsInFlight(killedAt, Date.now())
    } finally {
      await stall.query("ROLLBACK").finally(() => stall.end())
    }

    const second = await spawnAppliance({ databaseUrl, env: delivering, bootstrapKey: setup.adminToken })
    try {
      // Every recipient at least once (the sink's count includes what was sent twice).
      const distinct = () => new Set(sink.received.map((m) => m.rcptTo[0])).size
      const end = Date.now() + 90_000
      while (distinct() < COUNT && Date.now() < end) await new Promise((r) => setTimeout(r, 100))
      await new Promise((r) => setTimeout(r, 500))
      expect(distinct()).toBe(COUNT)
      const [left] = await query<{ n: number }>(databaseUrl, "SELECT count(*)::int AS n FROM deliveries WHERE state <> 'sent'")
      expect(left!.n).toBe(0)
      const resent = sink.received.length - COUNT
      console.log(`SIGKILL: ${resent} sent twice; ${inFlight} SMTP transactions in flight; ${acceptedWhileStalled} accepted during the stall`)
      expect(inFlight).toBeGreaterThanOrEqual(1)
      expect(inFlight).toBeLessThanOrEqual(3)
      expect(resent).toBeLessThanOrEqual(inFlight)
    } finally {
      await second.stop()
      await sink.close()
    }
  }, 240_000)
})
