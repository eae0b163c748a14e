/**
 * Channels and lanes, shown by order, not by time: 5,000 bulk messages queued for one destination
 * (a loopback SMTP sink, shaped to 2 connections), then one transactional send to the same
 * destination through the API. The transactional message reaches the sink before more than
 * (connection slots + 10) further bulk messages do. Until the campaigns issue exists, the bulk
 * rows are written through the queue writer with channel `bulk`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newId } from "../../src/lib/ids.ts"
import { structuredMessages } from "../../src/mta/queue/StoredMessage.ts"
import { writeQueue } from "../../src/transactional/queue-writer.ts"
import { servicesOn } from "../support/appliance.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

const SLOTS = 2
const BULK = 5_000

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  const shapingFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "herald-lanes-")), "shaping.json")
  fs.writeFileSync(shapingFile, JSON.stringify({
    default: { max_connections: SLOTS, messages_per_connection: 1000, max_messages_per_minute: null },
    providers: []
  }))
  rig = await startDeliveryRig({ HERALD_SHAPING_FILE: shapingFile })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("lane.example")
})
afterAll(() => rig.stop())

/** 5,000 bulk messages, one recipient each, sharing one stored body: written as the campaigns issue will. */
const queueBulk = () => {
  const request = {
    from: { email: sender.from },
    subject: "Newsletter",
    content: [{ type: "text/plain" as const, value: "Bulk body" }],
    personalizations: Array.from({ length: BULK }, (_, i) => ({ to: [{ email: `bulk${i}@lane.example` }] }))
  }
  const stored = structuredMessages(request)
  const messages = request.personalizations.map((p, i) => ({
    messageId: newId("msg"),
    personalizationIndex: i,
    subject: request.subject,
    stored: { ...stored(i), channel: "bulk" as const },
    recipients: [{ email: p.to[0]!.email, kind: "to" as const }]
  }))
  const context = { accountId: sender.accountId, keyId: sender.keyId, requestId: "req_bulk", fromEmail: sender.from, now: new Date() }
  return Effect.runPromise(Effect.scoped(writeQueue(context, messages).pipe(Effect.provide(servicesOn(rig.app.databaseUrl)))))
}

describe("lanes", () => {
  it("a transactional send overtakes a backlog of 5,000 bulk messages to the same destination", async () => {
    await queueBulk()
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
