/**
 * The rule every reproduction test of issue 26 ends with (`expectResponsive`, test/support/
 * health-probe.ts) must fail for what those attacks did before their fixes: an event loop frozen
 * for seconds, a `/health` slow throughout, 503s, another account's send refused. Shown against a
 * real HTTP server on loopback whose answers each case shapes; the appliance's side is in the tests
 * that use the probe.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import type { ApiResponse } from "../support/appliance.ts"
import { expectResponsive, probeHealthWhile } from "../support/health-probe.ts"
import { sleep } from "../support/net.ts"
import type { Sender } from "../support/sending.ts"

/** How the server answers: `/health`'s status and delay, the send's status, and which question freezes it. */
interface Behaviour {
  healthStatus: number
  healthDelayMs: number
  sendStatus: number
  /** The nth `/health` question holds the event loop for FREEZE_MS before its answer (0: none). */
  freezeAt: number
}

/** Past the ceiling, as one render on the main thread held the appliance for 5.7 s. */
const FREEZE_MS = 1_200

let server: http.Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = undefined
})

const serve = async (behaviour: Behaviour) => {
  let asked = 0
  server = http.createServer((req, res) => {
    req.resume()
    if (req.url !== "/health") return void res.writeHead(behaviour.sendStatus).end("{}")
    if (++asked === behaviour.freezeAt) {
      const until = performance.now() + FREEZE_MS
      while (performance.now() < until) {
        // Busy: nothing else in the process runs.
      }
    }
    setTimeout(() => res.writeHead(behaviour.healthStatus).end("{}"), behaviour.healthDelayMs)
  })
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve))
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const request = async (method: string, route: string): Promise<ApiResponse> => {
    const res = await fetch(`${baseUrl}${route}`, { method, body: method === "GET" ? null : "{}" })
    return { status: res.status, headers: res.headers, text: await res.text(), json: undefined }
  }
  return { baseUrl, request }
}

const bystander: Sender = { accountId: "acc_other", token: "t", keyId: "key_other", domain: "other.test", from: "news@other.test" }
const quiet = (): Behaviour => ({ healthStatus: 200, healthDelayMs: 0, sendStatus: 202, freezeAt: 0 })

describe("expectResponsive", () => {
  it("passes while the server answers at once and accepts the other account's sends", async () => {
    const app = await serve(quiet())
    const { health } = await probeHealthWhile(app, sleep(400), { bystander: { sender: bystander, to: "a@b.test", each: true } })
    expectResponsive(health)
    expect(health.sends!.length).toBe(health.answers.length)
  })

  it("fails for one freeze of the event loop past the ceiling, however quick the other answers", async () => {
    const app = await serve({ ...quiet(), freezeAt: 3 })
    const { health } = await probeHealthWhile(app, sleep(2_000))
    expect(health.medianMs).toBeLessThan(100)
    expect(health.slowestMs).toBeGreaterThanOrEqual(FREEZE_MS)
    expect(() => expectResponsive(health)).toThrow(/to be less than 1000\b/)
  })

  it("fails when the typical answer is over 100 ms", async () => {
    const app = await serve({ ...quiet(), healthDelayMs: 150 })
    const { health } = await probeHealthWhile(app, sleep(700))
    expect(() => expectResponsive(health)).toThrow(/to be less than 100\b/)
  })

  it("fails for an answer that is not 200", async () => {
    const app = await serve({ ...quiet(), healthStatus: 503 })
    const { health } = await probeHealthWhile(app, sleep(200))
    expect(() => expectResponsive(health)).toThrow(/\[503\]/)
  })

  it("fails for another account's send refused, and for none made", async () => {
    const app = await serve({ ...quiet(), sendStatus: 429 })
    const { health } = await probeHealthWhile(app, sleep(500), { bystander: { sender: bystander, to: "a@b.test" } })
    expect(health.sends!.map((s) => s.status)).toEqual([429])
    expect(() => expectResponsive(health)).toThrow(/\[ 429 \] to deeply equal \[ 202 \]/)
    expect(() => expectResponsive({ ...health, sends: [] })).toThrow(/to be greater than 0/)
  })
})
