/**
 * Issue 26 finding 3: CSV downloads that are opened and never read. Each export reads through a
 * cursor; a client that stops reading holds the cursor's connection under back-pressure. Before
 * the fix they came from the main pool, with no write timeout: more stalled downloads than the
 * pool has connections and `/health` answered 503, every other account's sends failed.
 *
 * Real sockets: each stalled client sends its request and never reads (a paused net.Socket, whose
 * small receive window fills at once), against exports of tens of thousands of rows.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { seedDeliveries } from "../support/audit-seed.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { expectResponsive, formatHealth, probeHealthWhile } from "../support/health-probe.ts"
import { sleep } from "../support/net.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

const MAIN_POOL = 4
const EXPORT_POOL = 2
/** The least HERALD_EXPORT_WRITE_TIMEOUT_S takes: the stalled downloads are ended one after the other, each after this. */
const WRITE_TIMEOUT_S = 1
/**
 * Loopback sockets buffer about 4 MB of an answer nobody reads (measured here): each export must
 * be larger to stall. Long recipients make 24,000 rows about 6.6 MB of analytics CSV, 11 MB of audit.
 */
const ROWS = 24_000

let app: Appliance
let dns: DnsServer
let attacker: Sender
let victim: Sender
let campaignId: string

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({
    env: {
      HERALD_DNS_SERVERS: dns.address,
      HERALD_DB_POOL_MAX: String(MAIN_POOL),
      HERALD_EXPORT_POOL_MAX: String(EXPORT_POOL),
      HERALD_EXPORT_WRITE_TIMEOUT_S: String(WRITE_TIMEOUT_S)
    }
  })
  attacker = await newSender(app, dns, { packageId: "growth" })
  victim = await newSender(app, dns, { packageId: "growth" })
  await seedDeliveries(app.databaseUrl, { accountId: attacker.accountId, keyId: attacker.keyId, count: ROWS, tag: "big", base: new Date("2024-01-01T00:00:00Z") })
  await query(app.databaseUrl, "UPDATE deliveries SET recipient = repeat('r', 240) || recipient WHERE key_id = $1", [attacker.keyId])
  await seedDeliveries(app.databaseUrl, { accountId: victim.accountId, keyId: victim.keyId, count: 50, tag: "small", base: new Date("2024-01-01T00:00:00Z") })
  // The campaign analytics CSV reads the same deliveries, as one campaign's recipients.
  const campaign = await app.request("POST", "/v1/bulk/campaigns", { token: attacker.token, body: { name: "Big" } })
  expect(campaign.status).toBe(201)
  campaignId = campaign.json.id
  await query(app.databaseUrl, "UPDATE messages SET campaign_id = $1 WHERE key_id = $2", [campaignId, attacker.keyId])
}, 180_000)
afterAll(async () => {
  await app.stop()
  await dns.close()
})

interface Stalled {
  readonly socket: net.Socket
  readonly closed: Promise<void>
  /** Reads what arrives from now on until the server closes the connection. */
  readonly drain: () => Promise<string>
}

/** Sends `GET route` and never reads the answer. */
const stalledDownload = (route: string, token: string): Promise<Stalled> =>
  new Promise((resolve, reject) => {
    const port = Number(new URL(app.baseUrl).port)
    const socket = net.connect({ port, host: "127.0.0.1" }, () => {
      socket.write(`GET ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`)
      resolve({
        socket,
        closed,
        drain: () => {
          const chunks: Array<Buffer> = []
          socket.on("data", (chunk: Buffer) => chunks.push(chunk))
          socket.resume()
          return closed.then(() => Buffer.concat(chunks).toString("latin1"))
        }
      })
    })
    const closed = new Promise<void>((done) => socket.once("close", () => done()))
    socket.pause()
    socket.once("error", reject)
  })

/** The appliance's backends (either pool) now reading one of the two exports. */
const exportBackends = () =>
  query<{ application_name: string; state: string }>(app.databaseUrl, `SELECT application_name, state FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid()
      AND (query LIKE '%FROM deliveries d JOIN messages m%' OR query LIKE '%FROM messages m JOIN deliveries d%')
      AND state <> 'idle'`)

describe("stalled CSV downloads", () => {
  it("never take the main pool: /health and other accounts' sends and exports go on, and the write timeout ends them", async () => {
    const audit = "/v1/mail/audit?format=csv"
    const analytics = `/v1/bulk/campaigns/${campaignId}/analytics?format=csv`
    const stalled: Array<Stalled> = []
    for (let i = 0; i < MAIN_POOL + 2; i++) stalled.push(await stalledDownload(i % 2 === 0 ? audit : analytics, attacker.token))
    await sleep(1_000)

    // While the downloads stall, another account sends and then reads its own export (its 50 rows,
    // the send's and the header), and /health stays quick (before the fix its answers were 503s).
    const victimGoesOn = async () => {
      const sent = await app.request("POST", "/v1/mail/send", { token: victim.token, body: sendBody(victim, "friend@example.org") })
      return { sent, theirs: await app.request("GET", "/v1/mail/audit?format=csv", { token: victim.token }) }
    }
    const { result: { sent, theirs }, health } = await probeHealthWhile(app, victimGoesOn, { minMs: 1_000 })
    console.log(`${MAIN_POOL + 2} stalled downloads: ${formatHealth(health)}`)
    expectResponsive(health)
    expect(sent.status).toBe(202)
    expect(theirs.status).toBe(200)
    expect(theirs.text.trim().split("\r\n")).toHaveLength(52)

    // One export of the account at a time, on the exports' own pool.
    const busy = await exportBackends()
    expect(busy.length).toBeLessThanOrEqual(1)
    expect(busy.every((b) => b.application_name === "herald-export")).toBe(true)

    // Each stalled download is ended after the write timeout, one after the other; then no backend
    // reads an export any more, and the attacker's next export works.
    // The next waiting export starts within milliseconds of the previous one's end: quiet for 1.5 s
    // means none is left.
    const deadline = Date.now() + (MAIN_POOL + 2) * (WRITE_TIMEOUT_S + 5) * 1000
    let quietSince = Date.now()
    while (Date.now() - quietSince < 1_500 && Date.now() < deadline) {
      if ((await exportBackends()).length > 0) quietSince = Date.now()
      await sleep(100)
    }
    expect(await exportBackends()).toEqual([])
    for (const s of stalled) {
      const received = await s.drain()
      expect(received.startsWith("HTTP/1.1 200")).toBe(true)
      // Cut off: the chunked body never got its last chunk.
      expect(received.endsWith("\r\n0\r\n\r\n")).toBe(false)
    }
    const again = await app.request("GET", "/v1/mail/audit?format=csv&event=sent", { token: attacker.token })
    expect(again.status).toBe(200)
    expect(again.text.trim().split("\r\n")).toHaveLength(ROWS / 5 + 1)
  }, 120_000)
})
