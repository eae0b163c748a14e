/**
 * End to end against real peers on loopback: a send through the API reaches the recipient's MX
 * (an SMTP sink found through a DNS server), DKIM-signed so that an independent verifier passes
 * it, with a VERP return path; 550, 451 and null-MX answers become the spec's outcomes.
 */
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { verifyDkimAgainstPublished } from "../support/dkim.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
})
afterAll(() => rig.stop())

const send = (body: unknown) => rig.app.request("POST", "/v1/mail/send", { token: sender.token, body })

const waitForState = async (messageId: string, recipient: string, states: ReadonlyArray<string>, timeoutMs = 20_000) => {
  const end = Date.now() + timeoutMs
  for (;;) {
    const rows = await query<{ state: string; last_reply: string | null; next_attempt_at: Date }>(rig.app.databaseUrl,
      "SELECT state, last_reply, next_attempt_at FROM deliveries WHERE message_id = $1 AND recipient = $2", [messageId, recipient])
    if (rows[0] !== undefined && states.includes(rows[0].state)) return rows[0]
    if (Date.now() > end) throw new Error(`delivery to ${recipient} still ${rows[0]?.state}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const eventsOf = (name: string, messageId: string) =>
  query<{ payload: any }>(rig.app.databaseUrl, "SELECT payload FROM events WHERE event = $1 AND payload->>'message_id' = $2", [name, messageId])

describe("delivery to the recipient's MX", () => {
  it("delivers the composed, DKIM-signed message with a VERP return path, once per recipient", async () => {
    const before = rig.sink.received.length
    const res = await send(sendBody(sender, "x", {
      personalizations: [{
        to: [{ email: "to@dest.example", name: "To Person" }],
        cc: [{ email: "cc@dest.example" }],
        bcc: [{ email: "hidden@dest.example" }],
        headers: { "X-Campaign": "p" }
      }],
      headers: { "X-Campaign": "m", "X-Other": "1" },
      html: undefined,
      content: [{ type: "text/plain", value: "plain" }, { type: "text/html", value: "<p>html <img src=\"cid:logo\"></p>" }],
      attachments: [
        { content: Buffer.from("hello file").toString("base64"), filename: "a.txt", type: "text/plain" },
        { content: Buffer.from("png-bytes").toString("base64"), filename: "logo.png", type: "image/png", content_id: "logo" }
      ]
    }))
    expect(res.status).toBe(202)
    const messageId = res.json.items[0].message_id
    await rig.sink.waitFor(before + 3)
    const mine = rig.sink.received.slice(before)
    expect(mine.map((m) => m.rcptTo[0]).sort()).toEqual(["cc@dest.example", "hidden@dest.example", "to@dest.example"])
    for (const m of mine) expect(m.mailFrom).toMatch(/^b-dlv_[A-Za-z0-9]+-[0-9a-f]{8}@bounces\.mta\.herald\.test$/)

    const raw = mine[0]!.raw
    const parsed = await simpleParser(raw)
    expect(parsed.headers.get("message-id")).toBe(`<${messageId}@${sender.domain}>`)
    expect(parsed.headers.get("x-herald-message-id")).toBe(messageId)
    expect(parsed.headers.get("x-herald-channel")).toBe("transactional")
    expect(parsed.headers.get("x-campaign")).toBe("p")
    expect(parsed.headers.get("x-other")).toBe("1")
    expect(raw.toString("utf8")).not.toMatch(/^bcc:/im)
    expect(raw.toString("utf8")).not.toContain("hidden@dest.example")
    expect(parsed.text?.trim()).toBe("plain")
    expect(parsed.attachments.map((a) => a.filename).sort()).toEqual(["a.txt", "logo.png"])
    expect(parsed.attachments.find((a) => a.filename === "logo.png")?.cid).toBe("logo")
    expect(raw.toString("utf8")).toMatch(/multipart\/related/)

    expect(await verifyDkimAgainstPublished(rig.app, sender.token, sender.domain, raw)).toMatchObject({ signingDomain: sender.domain, status: { result: "pass" } })

    await waitForState(messageId, "to@dest.example", ["sent"])
    const sent = await eventsOf("email.sent", messageId)
    expect(sent.map((e) => e.payload.to[0]).sort()).toEqual(["cc@dest.example", "hidden@dest.example", "to@dest.example"])
    expect(sent[0]!.payload).toMatchObject({ request_id: res.json.request_id, subject: "Hello", message_id: messageId })
    const audit = await rig.app.request("GET", `/v1/mail/audit?search=to@dest.example`, { token: sender.token })
    expect(audit.json.items[0]).toMatchObject({ event: "sent", smtp_code: 250 })
  })

  it("marks a 550 5.1.1 as bounced, suppresses the address, and emits email.bounced", async () => {
    rig.sink.replies.set("gone@dest.example", "550 5.1.1 No such user here")
    const res = await send(sendBody(sender, "gone@dest.example"))
    const messageId = res.json.items[0].message_id
    const row = await waitForState(messageId, "gone@dest.example", ["bounced"])
    expect(row.last_reply).toContain("5.1.1")
    const [event] = await eventsOf("email.bounced", messageId)
    expect(event!.payload).toEqual({
      recipient: "gone@dest.example", status: "5.1.1", category: "hard", diagnostic: expect.stringContaining("No such user"), message_id: messageId
    })
    const suppressed = await rig.app.request("GET", "/v1/client/suppressions?email=gone@dest.example", { token: sender.token })
    expect(suppressed.json.items[0]).toMatchObject({ email: "gone@dest.example", reason: "bounce" })
    const audit = await rig.app.request("GET", "/v1/mail/audit?search=gone@", { token: sender.token })
    expect(audit.json.items[0].event).toBe("failed")
  })

  it("defers a 451 with the reply on record and a retry minutes later, not dropped", async () => {
    rig.sink.replies.set("later@dest.example", "451 4.3.0 Try again later")
    const res = await send(sendBody(sender, "later@dest.example"))
    const messageId = res.json.items[0].message_id
    const row = await waitForState(messageId, "later@dest.example", ["deferred"])
    expect(row.last_reply).toContain("451")
    expect(row.next_attempt_at.getTime() - Date.now()).toBeGreaterThan(4 * 60_000)
    const audit = await rig.app.request("GET", "/v1/mail/audit?search=later@", { token: sender.token })
    expect(audit.json.items[0]).toMatchObject({ event: "queued", smtp_code: 451 })
  })

  it("fails at once for a domain with a null MX, with email.failed", async () => {
    rig.dns.set("nomail.example", { MX: [{ preference: 0, exchange: "." }] })
    const res = await send(sendBody(sender, "who@nomail.example"))
    const messageId = res.json.items[0].message_id
    await waitForState(messageId, "who@nomail.example", ["failed"])
    const [event] = await eventsOf("email.failed", messageId)
    expect(event!.payload.error).toContain("null MX")
  })

  it("fails at once for a domain that does not exist", async () => {
    const res = await send(sendBody(sender, "who@nowhere.example"))
    await waitForState(res.json.items[0].message_id, "who@nowhere.example", ["failed"])
  })
})
