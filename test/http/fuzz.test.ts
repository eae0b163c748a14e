/**
 * Property-based fuzzing of every route (issue #26): hostile paths, queries and bodies
 * (test/support/fuzz.ts) against an appliance in its own process, capped at the heap `npm start`
 * gives it, resolving through a loopback DNS server and relaying through a loopback sink, so
 * nothing it is tricked into sending leaves the machine.
 *
 * Asserted for every request: an answer (within REQUEST_TIMEOUT_MS) that is not a 5xx; and after the
 * run: the process is alive, `/health` answers 200 at once, and another account can still send.
 *
 * `npm test` runs a fixed seed and a small budget (FUZZ_RUNS_PER_ROUTE, default 3 requests a
 * route); `npm run fuzz` runs a larger one, and FUZZ_SEED picks another seed. A failure names the
 * route, the request and the seed, so it can be replayed.
 */
import * as fs from "node:fs"
import { FastCheck as fc } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApplianceProcess, spawnAppliance } from "../support/appliance.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { type HostileRequest, hostileRequest, type Operation, operationsOf } from "../support/fuzz.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts"

const RUNS_PER_ROUTE = Number(process.env["FUZZ_RUNS_PER_ROUTE"] ?? 3)
const SEED = Number(process.env["FUZZ_SEED"] ?? 26)
const REQUEST_TIMEOUT_MS = 20_000
const HEAP_CAP_MB = 512
const DOCUMENTS = ["transactional", "bulk", "platform"]

/** The public pages are not in the OpenAPI documents; strangers reach them with no key. */
const publicOperations: Array<Operation> = ["/confirm/{token}", "/u/{token}", "/o/{token}", "/c/{token}"]
  .flatMap((path) => ["GET", "POST"].map((method) => ({
    method,
    path,
    pathParams: ["token"],
    queryParams: [],
    bodyProperties: [],
    acceptsCsv: false
  })))

let dns: DnsServer
let sink: SmtpSink
let app: ApplianceProcess
let sender: Sender
let operations: Array<Operation> = []

beforeAll(async () => {
  dns = await startDnsServer()
  sink = await startSmtpSink()
  app = await spawnAppliance({
    env: {
      NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MB}`,
      HERALD_DNS_SERVERS: dns.address,
      HERALD_SMARTHOST: `smtp://127.0.0.1:${sink.port}`,
      HERALD_MTA_ENABLED: "true"
    }
  })
  sender = await newSender(app, dns, { packageId: "growth" })
  for (const area of DOCUMENTS) {
    const res = await app.request("GET", `/openapi/openapi.${area}.json`)
    expect(res.status).toBe(200)
    operations.push(...operationsOf(res.json))
  }
  operations = [...operations, ...publicOperations]
}, 180_000)

afterAll(async () => {
  await app?.stop()
  await sink?.close()
  await dns?.close()
})

/** Admin routes with the admin key, the rest with an ordinary customer's key. */
const tokenFor = (operation: Operation) => (operation.path.startsWith("/v1/admin") ? app.adminToken : sender.token)

const send = async (operation: Operation, request: HostileRequest): Promise<number> => {
  const headers: Record<string, string> = { authorization: `Bearer ${tokenFor(operation)}` }
  if (request.contentType !== undefined) headers["content-type"] = request.contentType
  const response = await fetch(`${app.baseUrl}${request.path}`, {
    method: operation.method,
    headers,
    ...(request.body === undefined ? {} : { body: request.body }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
  })
  await response.arrayBuffer()
  return response.status
}

const clip = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}… (${text.length} chars)` : text)

const describeRequest = (operation: Operation, request: HostileRequest) =>
  `${operation.method} ${clip(request.path)} ${request.contentType ?? ""} ${clip(request.body ?? "")}`

const rssMb = (pid: number): number => {
  const line = fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) / 1024
}

describe("hostile requests to every route", () => {
  it("finds the routes in the served documents", () => {
    expect(operations.length).toBeGreaterThan(100)
    expect(operations.some((o) => o.method === "POST" && o.path === "/v1/bulk/contacts/import")).toBe(true)
  })

  it("answers every one without a 5xx, a hang or a crash", async () => {
    const failures: Array<string> = []
    for (const [index, operation] of operations.entries()) {
      let problem = ""
      try {
        await fc.assert(
          fc.asyncProperty(hostileRequest(operation), async (request) => {
            let status: number
            try {
              status = await send(operation, request)
            } catch (error) {
              problem = `no answer (${String(error)}) to ${describeRequest(operation, request)}`
              throw new Error(problem)
            }
            if (status >= 500) {
              problem = `${status} for ${describeRequest(operation, request)}`
              throw new Error(problem)
            }
          }),
          { numRuns: RUNS_PER_ROUTE, seed: SEED + index, endOnFailure: true }
        )
      } catch (error) {
        failures.push(`${operation.method} ${operation.path} (seed ${SEED + index}): ${problem || String(error).slice(0, 1_000)}`)
      }
      // A crash ends the run at once: every later answer would only repeat it.
      if (app.child.exitCode !== null) break
    }
    expect(app.child.exitCode, app.output().slice(-3_000)).toBeNull()
    expect(failures).toEqual([])
  }, 900_000)

  it("leaves the appliance serving everyone, within its heap cap", async () => {
    const started = performance.now()
    const health = await fetch(`${app.baseUrl}/health`)
    expect(health.status).toBe(200)
    expect(performance.now() - started).toBeLessThan(1_000)
    const other = await newSender(app, dns, { packageId: "growth" })
    const sent = await app.request("POST", "/v1/mail/send", { token: other.token, body: sendBody(other, "someone@example.com") })
    expect(sent.status).toBe(202)
    // The V8 heap cannot pass HEAP_CAP_MB without ending the process (checked above); the
    // process as a whole (heap, buffers, workers) stays within a few times that.
    expect(rssMb(app.child.pid!)).toBeLessThan(HEAP_CAP_MB * 3)
  })
})
