/**
 * SMTP submission, accepted (README "SMTP submission"): nodemailer submits a message with
 * attachments and an inline image over AUTH with an API key; the recipient's MX (the sink) gets
 * it byte for byte as submitted apart from the fields Herald adds (DKIM-Signature, its
 * Message-ID, X-Herald-Message-Id, X-Herald-Channel) and the ones it removes (the client's
 * Message-ID, Bcc, X-Herald-*, Idempotency-Key); the envelope decides delivery (the Bcc recipient
 * gets it, without a Bcc header); the message appears in the API's message view like a send.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { headerFields, withoutFields } from "../../src/mta/compose/raw-headers.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender } from "../support/sending.ts"
import { compose, queuedId, submitRaw } from "../support/submission.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("inbox.example")
})
afterAll(() => rig.stop())

const receivedBy = async (recipient: string, timeoutMs = 30_000) => {
  const end = Date.now() + timeoutMs
  for (;;) {
    const found = rig.sink.received.find((m) => m.rcptTo.includes(recipient))
    if (found !== undefined) return found
    if (Date.now() > end) throw new Error(`nothing for ${recipient} after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const ADDED = new Set(["dkim-signature", "message-id", "x-herald-message-id", "x-herald-channel"])
const fieldNames = (raw: Buffer) => headerFields(raw).fields.map((f) => f.name)

/** A 1x1 PNG: the inline image. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64")

describe("SMTP submission", () => {
  it("delivers a message with attachments and an inline image byte for byte, to every envelope recipient", async () => {
    const raw = await compose({
      from: `"Shop" <${sender.from}>`,
      to: "ada@inbox.example",
      cc: "grace@inbox.example",
      bcc: "hidden@inbox.example",
      subject: "Your receipt ✓",
      text: "Thank you for your order.",
      html: "<p>Thank you <img src=\"cid:logo@shop\"></p>",
      headers: { "X-Herald-Test": "false", "X-Herald-Whatever": "dropped", "X-Kept": "kept" },
      attachments: [
        { filename: "receipt.pdf", content: Buffer.alloc(40_000, 7), contentType: "application/pdf" },
        { filename: "logo.png", content: PNG, cid: "logo@shop" }
      ]
    })
    const to = ["ada@inbox.example", "grace@inbox.example", "hidden@inbox.example"]
    const reply = await submitRaw({ port: rig.app.submissionPort, token: sender.token, envelope: { from: sender.from, to }, raw })
    expect(reply.code, reply.text).toBe(250)
    const id = queuedId(reply)!
    expect(id).toMatch(/^msg_/)

    for (const recipient of to) {
      const got = await receivedBy(recipient)
      expect(got.raw.toString("latin1")).toContain(`Message-ID: <${id}@${sender.domain}>`)
      expect(fieldNames(got.raw)).not.toContain("bcc")
      expect(fieldNames(got.raw)).not.toContain("x-herald-whatever")
      expect(fieldNames(got.raw)).not.toContain("x-herald-test")
      // Apart from what Herald adds and removes, the very bytes that were submitted.
      const theirs = withoutFields(got.raw, (name) => ADDED.has(name))
      const ours = withoutFields(raw, (name) => name === "message-id" || name === "bcc" || name.startsWith("x-herald-"))
      expect(theirs.equals(ours)).toBe(true)
    }
    // The message, as the API shows a send's.
    const view = await rig.app.request("GET", `/v1/mail/messages/${id}`, { token: sender.token })
    expect(view.status, view.text).toBe(200)
    expect(view.json.recipients.map((r: { email: string }) => r.email).sort()).toEqual(to)
  })
})
