/**
 * The MTA's memory budget end to end (HERALD_MTA_MESSAGE_BUDGET_MB): large messages wait for room
 * rather than all loading at once, and every one of them is still delivered.
 */
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  // Room for one 800 KB message at a time; the sink holds each DATA 300 ms, so attempts that
  // were let through together would need a connection each.
  rig = await startDeliveryRig({ HERALD_MTA_MESSAGE_BUDGET_MB: "1" }, { delayMs: 300 })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("big.example")
})
afterAll(() => rig.stop())

describe("the MTA's message memory budget", () => {
  it("delivers large messages one at a time when only one fits, and delivers all of them", async () => {
    const attachment = { content: randomBytes(600 * 1024).toString("base64"), filename: "big.bin", type: "application/octet-stream" }
    const before = rig.sink.received.length
    const sends = await Promise.all([1, 2, 3, 4].map((i) =>
      rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, `r${i}@big.example`, { attachments: [attachment] }) })
    ))
    for (const res of sends) expect(res.status).toBe(202)
    await rig.sink.waitFor(before + 4, 30_000)
    expect(rig.sink.peakConnections()).toBe(1)
    const ids = sends.map((res) => res.json.items[0].message_id)
    const rows = await query<{ content_bytes: number }>(rig.app.databaseUrl, "SELECT content_bytes FROM messages WHERE id = ANY($1)", [ids])
    for (const row of rows) expect(row.content_bytes).toBeGreaterThan(800 * 1024)
    const states = await query<{ state: string }>(rig.app.databaseUrl, "SELECT state FROM deliveries WHERE message_id = ANY($1)", [ids])
    expect(states.map((s) => s.state)).toEqual(["sent", "sent", "sent", "sent"])
  })
})
