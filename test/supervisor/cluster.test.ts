/**
 * HERALD_PROCESSES > 1 with real processes (src/supervisor/): the supervisor and its workers as
 * `npm start` runs them, a real SMTP sink and DNS server.
 *
 * - `auto` with HERALD_MEMORY_MB=512 starts two workers (512 ÷ PER_PROCESS_MIN_MB), the embedded
 *   PostgreSQL once, prints the bootstrap key once; GET /metrics answers for the whole appliance
 *   whichever worker is reached (a send, a delivery and a bounce move their counters by exactly
 *   one on every scrape); SIGTERM exits 0 with no worker and no PostgreSQL left.
 * - kill -9 of one worker in the middle of a 1,000-message queue: every message is delivered, the
 *   supervisor starts the worker again, and `/health` answers 200 throughout.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, type ApplianceProcess, spawnAppliance } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { sleep } from "../support/net.ts"
import { newSender, queueMessages, sendBody } from "../support/sending.ts"
import { writeShapingFile } from "../support/shaping.ts"
import { type SmtpSink, startSmtpSink } from "../support/smtp-sink.ts"

const TOKEN = "metrics-token-0123456789abcdef"

let dns: DnsServer
let shapingFile: string
beforeAll(async () => {
  dns = await startDnsServer({ "mx.sink.test": { A: ["127.0.0.1"] } })
  dns.set("many.example", { MX: [{ preference: 10, exchange: "mx.sink.test" }] })
  shapingFile = writeShapingFile({ max_connections: 4, messages_per_connection: 1000, max_messages_per_minute: null })
})
afterAll(() => dns.close())

const deliveryEnv = (sink: SmtpSink) => ({
  HERALD_DNS_SERVERS: dns.address,
  HERALD_MX_PORT: String(sink.port),
  HERALD_HOSTNAME: "mta.herald.test",
  HERALD_SHAPING_FILE: shapingFile,
  HERALD_QUEUE_LEASE_SECONDS: "5",
  HERALD_MTA_ENABLED: "true",
  HERALD_METRICS_TOKEN: TOKEN
})

/** The processes `pid` started, by what they run. */
const childrenOf = (pid: number) =>
  fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((p) => p !== "").map(Number)
    .map((child) => ({ pid: child, cmdline: fs.readFileSync(`/proc/${child}/cmdline`, "utf8").replaceAll("\0", " ") }))
const workersOf = (supervisor: ApplianceProcess) => childrenOf(supervisor.child.pid!).filter((c) => c.cmdline.includes("herald.mjs")).map((c) => c.pid)
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * `/health` on a new connection each time (a kept-alive one would stay with one worker). A
 * connection reset (status 0) is asked again at once, as a load balancer would: a request in
 * flight in the worker the test kills is lost with it; the answer after that must be 200.
 */
const health = async (baseUrl: string) => {
  const first = await healthOnce(baseUrl)
  return first === 0 ? healthOnce(baseUrl) : first
}
const healthOnce = (baseUrl: string) =>
  new Promise<number>((resolve) => {
    const request = http.get(`${baseUrl}/health`, { agent: false, timeout: 5_000 }, (response) => {
      response.resume()
      resolve(response.statusCode ?? 0)
    })
    request.on("error", () => resolve(0))
    request.on("timeout", () => request.destroy())
  })

/** One scrape as series → value. */
const scrape = async (baseUrl: string) => {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}`, connection: "close" } })
  expect(response.status).toBe(200)
  const series = new Map<string, number>()
  for (const line of (await response.text()).split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const at = line.lastIndexOf(" ")
    series.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return series
}

describe("HERALD_PROCESSES: a supervisor and its workers", () => {
  it("starts auto = 2 workers, prints the key once, answers /metrics for the appliance, and stops everything on SIGTERM", async () => {
    const sink = await startSmtpSink()
    sink.replies.set("gone@many.example", "550 5.1.1 No such user")
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-cluster-"))
    const spawned = await spawnAppliance({
      databaseUrl: null,
      bootstrapKey: null,
      waitMs: 150_000,
      env: { ...deliveryEnv(sink), HERALD_DATA_DIR: dataDir, HERALD_PROCESSES: "auto", HERALD_MEMORY_MB: "512" }
    })
    try {
      // Every worker is up before the key is looked for (each logs nothing of it).
      const workers = workersOf(spawned)
      expect(workers).toHaveLength(2)
      const postgres = childrenOf(spawned.child.pid!).filter((c) => c.cmdline.includes("postgres")).map((c) => c.pid)
      expect(postgres).toHaveLength(1)
      expect(spawned.output().split("This admin API key is shown only once")).toHaveLength(2)
      const adminToken = /^ {4}(hrld_\S+)$/m.exec(spawned.output())![1]!
      const app: Appliance = { ...spawned, request: (method, route, options = {}) => spawned.request(method, route, { token: adminToken, ...options }) }

      const sender = await newSender(app, dns, { packageId: "scale" })
      const before = await scrape(app.baseUrl)
      for (const to of ["ok@many.example", "gone@many.example"]) {
        expect((await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to) })).status).toBe(202)
      }
      const moved = (after: Map<string, number>, name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0)
      const SENT = `herald_deliveries_total{result="sent",site="other"}`
      const BOUNCED = `herald_deliveries_total{result="bounced",site="other"}`
      const end = Date.now() + 30_000
      while (moved(await scrape(app.baseUrl), SENT) < 1 || moved(await scrape(app.baseUrl), BOUNCED) < 1) {
        if (Date.now() > end) throw new Error("the delivery and the bounce were not counted")
        await sleep(200)
      }
      // Whichever worker answers (connections go round), each scrape is the appliance's: one each.
      for (let i = 0; i < 4; i++) {
        const after = await scrape(app.baseUrl)
        expect({
          sends: moved(after, `herald_sends_accepted_total{channel="api",outcome="queued"}`),
          sent: moved(after, SENT),
          bounced: moved(after, BOUNCED),
          replies5xx: moved(after, `herald_smtp_replies_total{class="5xx"}`)
        }).toEqual({ sends: 2, sent: 1, bounced: 1, replies5xx: 1 })
        expect(after.get("herald_database_up")).toBe(1)
      }

      spawned.child.kill("SIGTERM")
      expect(await spawned.exited).toBe(0)
      expect([...workers, ...postgres].filter(isAlive)).toEqual([])
    } finally {
      await spawned.stop()
      await sink.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 240_000)

  it("delivers a whole 1,000-message queue when one worker is killed -9 in the middle, and starts it again", async () => {
    const sink = await startSmtpSink()
    const databaseUrl = await freshDatabase()
    const app = await spawnAppliance({ databaseUrl, waitMs: 150_000, env: { ...deliveryEnv(sink), HERALD_PROCESSES: "2" } })
    const answers: Array<number> = []
    let probing = true
    const probe = (async () => {
      while (probing) {
        answers.push(await health(app.baseUrl))
        await sleep(100)
      }
    })()
    try {
      const sender = await newSender(app, dns, { packageId: "scale" })
      await queueMessages(app, sender.token, sender.from, 1000)
      await sink.waitFor(50, 60_000)
      const [victim, survivor] = workersOf(app)
      process.kill(victim!, "SIGKILL")
      const end = Date.now() + 30_000
      while (workersOf(app).length < 2 || workersOf(app).includes(victim!)) {
        if (Date.now() > end) throw new Error("the killed worker was not started again")
        await sleep(200)
      }
      expect(workersOf(app)).toContain(survivor)
      // The killed worker's claims come back when their leases (5 s here) run out; a message it
      // had sent but not yet recorded goes twice, so count recipients, not messages.
      const distinct = () => new Set(sink.received.map((m) => m.rcptTo[0])).size
      const until = Date.now() + 180_000
      while (distinct() < 1000 && Date.now() < until) await sleep(200)
      const states = await query<{ state: string; n: number }>(databaseUrl, "SELECT state, count(*)::int AS n FROM deliveries GROUP BY state")
      expect({ distinct: distinct(), states }).toEqual({ distinct: 1000, states: [{ state: "sent", n: 1000 }] })
      probing = false
      await probe
      expect(answers.length).toBeGreaterThan(10)
      expect(answers.filter((status) => status !== 200)).toEqual([])
    } finally {
      probing = false
      await app.stop()
      await sink.close()
    }
  }, 420_000)
})
