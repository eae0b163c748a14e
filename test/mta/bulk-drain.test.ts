/**
 * A bulk backlog larger than the MTA's bulk share keeps flowing between polls: each finished bulk
 * attempt wakes the claim loop while the last bulk claim came back full. Without that, a claim
 * skipped for want of `refillAt` free places forgot the backlog, and the rest waited for the
 * one-second poll: at most the bulk share (8 of HERALD_MTA_CONCURRENCY=10) a second, so 240
 * messages took 29 s or more (bench/campaign.ts saw 80 a second at the default 100).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sendCampaignTo } from "../support/campaigns.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { writeShapingFile } from "../support/shaping.ts"
import { newSender, type Sender } from "../support/sending.ts"

const CONCURRENCY = 10
/** Bulk attempts in hand at most: HERALD_MTA_CONCURRENCY less a fifth (Mta.ts). */
const BULK_SHARE = 8
const BACKLOG = 240

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  const shapingFile = writeShapingFile({ max_connections: 10, messages_per_connection: 1000, max_messages_per_minute: null })
  rig = await startDeliveryRig({ HERALD_SHAPING_FILE: shapingFile, HERALD_MTA_CONCURRENCY: String(CONCURRENCY) })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("drain.example")
})
afterAll(() => rig.stop())

describe("bulk lane", () => {
  it("drains a backlog of 30 times its share without waiting for the poll between claims", async () => {
    await sendCampaignTo(rig.app, sender, Array.from({ length: BACKLOG }, (_, i) => `c${i}@drain.example`))
    await rig.sink.waitFor(1, 30_000)
    const first = Date.now()
    await rig.sink.waitFor(BACKLOG, 60_000)
    const seconds = (Date.now() - first) / 1000
    console.log(`${BACKLOG} bulk messages in ${seconds.toFixed(1)} s after the first`)
    // Waiting for the poll: (BACKLOG / BULK_SHARE − 1) seconds at least, 29 s. A third of that is a wide margin for a slow machine.
    expect(seconds).toBeLessThan((BACKLOG / BULK_SHARE - 1) / 3)
  }, 90_000)
})
