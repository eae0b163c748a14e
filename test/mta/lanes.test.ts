/**
 * Channels and lanes, shown by order, not by time: 5,000 bulk messages queued for one destination
 * (a loopback SMTP sink, shaped to 2 connections), then one transactional send to the same
 * destination through the API. The transactional message reaches the sink before more than
 * (connection slots + 10) further bulk messages do. The backlog is a real campaign of 5,000
 * contacts (its fan-out writes the bulk rows).
 */
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { writeShapingFile } from "../support/shaping.ts"
import { sendCampaignTo } from "../support/campaigns.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

const SLOTS = 2
const BULK = 5_000

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  const shapingFile = writeShapingFile({ max_connections: SLOTS, messages_per_connection: 1000, max_messages_per_minute: null })
  rig = await startDeliveryRig({ HERALD_SHAPING_FILE: shapingFile })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("lane.example")
})
afterAll(() => rig.stop())

describe("lanes", () => {
  it("a transactional send overtakes a backlog of 5,000 bulk messages to the same destination", async () => {
    await sendCampaignTo(rig.app, sender, Array.from({ length: BULK }, (_, i) => `bulk${i}@lane.example`))
    // The bulk lane is under way before the transactional send is made.
    await rig.sink.waitFor(20, 20_000)
    const res = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "urgent@lane.example") })
    expect(res.status).toBe(202)
    const bulkBefore = rig.sink.received.length
    const end = Date.now() + 20_000
    let at = -1
    while (at < 0 && Date.now() < end) {
      at = rig.sink.received.findIndex((m) => m.rcptTo.includes("urgent@lane.example"))
      if (at < 0) await new Promise((r) => setTimeout(r, 20))
    }
    expect(at).toBeGreaterThanOrEqual(0)
    const bulkOvertaking = at - bulkBefore
    console.log(`bulk messages that reached the sink after the send and before it: ${bulkOvertaking}`)
    expect(bulkOvertaking).toBeLessThanOrEqual(SLOTS + 10)
    // Not every bulk message was out of the way already: the backlog was still there.
    expect(rig.sink.received.length).toBeLessThan(BULK)

    const bulk = await simpleParser(rig.sink.received[0]!.raw)
    expect(bulk.headers.get("x-herald-channel")).toBe("bulk")
    const urgent = await simpleParser(rig.sink.received[at]!.raw)
    expect(urgent.headers.get("x-herald-channel")).toBe("transactional")
  }, 60_000)
})
