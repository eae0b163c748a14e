/**
 * What the recipient's MX receives for a transactional send (the delivery rig: a DNS server on
 * loopback and an SMTP sink): a personalization's subject wins over the message's, and the
 * appliance's `X-Herald-Channel: transactional` is the only channel header, whatever the client set.
 */
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import type { Received } from "../support/smtp-sink.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("inbox.example")
})
afterAll(() => rig.stop())

/** The messages the sink received for `recipient`, waiting (up to a deadline) for `count` of them. */
const receivedBy = async (recipient: string, count = 1, timeoutMs = 30_000): Promise<ReadonlyArray<Received>> => {
  const end = Date.now() + timeoutMs
  for (;;) {
    const mine = rig.sink.received.filter((m) => m.rcptTo.includes(recipient))
    if (mine.length >= count) return mine
    if (Date.now() > end) throw new Error(`the sink has ${mine.length} of ${count} messages for ${recipient} after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const headerLines = (raw: Buffer, name: string) =>
  raw.toString("utf8").split(/\r\n\r\n/)[0]!.split(/\r\n(?![ \t])/).filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))

describe("the delivered transactional message", () => {
  it("carries each personalization's own subject over the message-level one", async () => {
    const res = await rig.app.request("POST", "/v1/mail/send", {
      token: sender.token,
      body: sendBody(sender, "x", {
        subject: "Message subject",
        personalizations: [
          { to: [{ email: "own-subject@inbox.example" }], subject: "Personal subject" },
          { to: [{ email: "default-subject@inbox.example" }] }
        ]
      })
    })
    expect(res.status).toBe(202)
    const [own] = await receivedBy("own-subject@inbox.example")
    const [plain] = await receivedBy("default-subject@inbox.example")
    expect((await simpleParser(own!.raw)).subject).toBe("Personal subject")
    expect((await simpleParser(plain!.raw)).subject).toBe("Message subject")
    expect(headerLines(own!.raw, "subject")).toHaveLength(1)
  })

  it("drops an X-Herald-Channel given in personalization or message headers, carrying transactional once", async () => {
    const res = await rig.app.request("POST", "/v1/mail/send", {
      token: sender.token,
      body: sendBody(sender, "x", {
        headers: { "x-herald-channel": "bulk", "X-Kept": "message" },
        personalizations: [{
          to: [{ email: "channel@inbox.example" }],
          headers: { "X-Herald-Channel": "marketing", "X-Personal": "kept" }
        }]
      })
    })
    expect(res.status).toBe(202)
    const [message] = await receivedBy("channel@inbox.example")
    expect(headerLines(message!.raw, "x-herald-channel")).toEqual(["X-Herald-Channel: transactional"])
    const parsed = await simpleParser(message!.raw)
    expect(parsed.headers.get("x-personal")).toBe("kept")
    expect(parsed.headers.get("x-kept")).toBe("message")
  })
})
