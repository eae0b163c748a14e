/**
 * A flood of console sign-ins (issue 28: "at most 2 password checks at once, beyond → 429"): a
 * stranger keeps 20 sign-ins in flight, each a full scrypt check (unknown emails are checked
 * against the dummy hash), with the address limit out of the way. The checks beyond two are refused
 * at once, and the appliance stays fine for everyone else meanwhile: /health answers 200 within
 * 100 ms and another account's sends get 202.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signInRequest } from "../support/console.ts"
import { expectResponsive, formatHealth, probeHealthAtRest, probeHealthWhile } from "../support/health-probe.ts"
import { type SendingApp, startSendingApp } from "../support/sending.ts"

let rig: SendingApp

beforeAll(async () => {
  rig = await startSendingApp({ HERALD_CONSOLE_SIGNIN_FAILURES_PER_ADDRESS: "1000000" })
})
afterAll(() => rig?.stop())

const IN_FLIGHT = 20
const FLOOD_MS = 4_000

describe("a flood of sign-ins", () => {
  it("is answered 401 or 429 (never queued), while /health and another account's sends are served", async () => {
    const atRest = await probeHealthAtRest(rig.app, 1_000, { intervalMs: 25 })
    const statuses: Array<number> = []
    const flood = async () => {
      const until = performance.now() + FLOOD_MS
      let n = 0
      await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
        while (performance.now() < until) {
          n += 1
          statuses.push((await signInRequest(rig.app, `stranger-${n}@flood.test`, "guess guess guess")).status)
        }
      }))
    }
    const run = await probeHealthWhile(rig.app, flood, {
      intervalMs: 25,
      bystander: { sender: rig.sender, to: "someone@example.com", each: true }
    })
    const refused = statuses.filter((s) => s === 429).length
    console.log(`flood: ${statuses.length} sign-ins, ${refused} refused 429; ${formatHealth(run.health)}; at rest: median ${atRest.medianMs.toFixed(0)} ms`)
    expect(new Set(statuses)).toEqual(new Set([401, 429]))
    expect(refused).toBeGreaterThan(statuses.length / 2)
    expectResponsive(run.health)
  }, 120_000)
})
