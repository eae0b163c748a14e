/**
 * GET /v1/mail/messages/{id}/content and /content/html (issue 28, view 2) against a real appliance,
 * a real SMTP sink and the simulator: each kind of mail (transactional with attachments, a
 * template's test-send, a double opt-in confirmation, a campaign message, a sequence step) is shown
 * as the sink received it — the same Message-ID, Date, Subject, text and html — except what acts
 * for its recipient: for a real recipient a campaign's links are untracked, its pixel gone and the
 * confirm and unsubscribe tokens redacted (List-Unsubscribe too); for a simulator recipient they
 * stay live and work. Owner: another account's message and another key's bulk message are 404.
 * Viewing changes no row.
 */
import { type ParsedMail, simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody, siblingKey } from "../support/sending.ts"

const TRACK = "http://track.herald.test"
const SIM = "simulator.herald.invalid"
const PDF = Buffer.from("%PDF-1.4 a receipt of forty bytes or so.").toString("base64")
const PNG = Buffer.from("not really a png, but bytes").toString("base64")
const CAMPAIGN_HTML = `<html><body><p>Dear {{ email }}</p>
<a href="https://shop.example/sale?x=1&amp;y=2">Sale</a> <a href="mailto:help@shop.example">Write</a>
<a href="{{ unsubscribe_url }}">Unsubscribe</a></body></html>`

let rig: DeliveryRig
let sender: Sender
let other: Sender

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)
const parse = (raw: Buffer) => simpleParser(raw, { keepCidLinks: true, skipHtmlToText: true })

/** The message the sink received for `rcpt` (the newest), parsed. */
const receivedBy = async (rcpt: string): Promise<{ parsed: ParsedMail; raw: Buffer }> => {
  const m = await eventually(async () => [...rig.sink.received].reverse().find((r) => r.rcptTo.includes(rcpt)), `mail to ${rcpt}`, 30_000)
  return { parsed: await parse(m.raw), raw: m.raw }
}

/** The id of the newest message to `rcpt`. */
const messageTo = async (rcpt: string) => {
  const row = await eventually(async () =>
    (await db<{ message_id: string }>("SELECT message_id FROM deliveries WHERE recipient = $1 ORDER BY created_at DESC LIMIT 1", [rcpt]))[0], `a message to ${rcpt}`, 30_000)
  return row.message_id
}

const header = (view: { headers: Array<{ name: string; value: string }> }, name: string) =>
  view.headers.filter((h) => h.name.toLowerCase() === name.toLowerCase()).map((h) => h.value)

/** What the view and the delivered message must share. */
const expectAsDelivered = (view: Record<string, any>, parsed: ParsedMail) => {
  expect(header(view, "Message-ID")).toEqual([parsed.messageId])
  expect(header(view, "Subject")).toEqual([parsed.subject])
  expect(new Date(header(view, "Date")[0]!).getTime()).toBe(parsed.date!.getTime())
  expect(header(view, "X-Herald-Message-Id")).toEqual([parsed.headers.get("x-herald-message-id")])
  expect(header(view, "DKIM-Signature")).toEqual([])
  expect(parsed.headers.get("dkim-signature")).toBeDefined()
}

beforeAll(async () => {
  rig = await startDeliveryRig({ HERALD_TRACK_URL: TRACK })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
}, 60_000)
afterAll(async () => {
  await rig?.stop()
})

describe("transactional mail", () => {
  it("answers the headers, text, html and attachments (sizes, no bytes) as the sink received them", async () => {
    const sent = await api("POST", "/v1/mail/send", sendBody(sender, "ada@dest.example", {
      subject: "Your receipt ✓",
      content: [
        { type: "text/plain", value: "Thank you for your order." },
        { type: "text/html", value: "<p>Thank you for your order.</p><img src=\"cid:logo\">" }
      ],
      attachments: [
        { filename: "receipt.pdf", content: PDF, type: "application/pdf" },
        { filename: "logo.png", content: PNG, type: "image/png", content_id: "logo" }
      ]
    }))
    expect(sent.status).toBe(202)
    const { parsed } = await receivedBy("ada@dest.example")
    const id = sent.json.items[0].message_id as string
    const view = await api("GET", `/v1/mail/messages/${id}/content`)
    expect(view.json).not.toHaveProperty("error")
    expect(view.status).toBe(200)
    expectAsDelivered(view.json, parsed)
    expect(view.json.text).toBe(parsed.text)
    expect(view.json.html).toBe(parsed.html)
    expect(view.json.attachments).toEqual(expect.arrayContaining([
      { filename: "receipt.pdf", content_type: "application/pdf", size: Buffer.from(PDF, "base64").length, content_id: null },
      { filename: "logo.png", content_type: "image/png", size: Buffer.from(PNG, "base64").length, content_id: "logo" }
    ]))
    expect(view.json.attachments).toHaveLength(2)
    expect(view.text).not.toContain(PDF)
  })
})
