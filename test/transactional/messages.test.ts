/**
 * GET /v1/mail/messages/{message_id} end to end: an appliance delivering to a real SMTP sink on
 * loopback (MX records from a loopback DNS server), its MX listener taking DSNs and ARF reports at
 * the VERP address. Each recipient's state and the ordered timeline (queued, each attempt with the
 * host and its reply, deferrals, the outcome, a late DSN's status, a complaint); other accounts' and
 * sandbox ids answer 404; the audit log's message_id filter; the audit row of a late DSN.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { arf, dsn, headersOf } from "../support/reports.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { sendRaw } from "../support/smtp-client.ts"
import { makeDue, waitForState } from "../mta/outbound.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("rcpt.test")
})
afterAll(async () => {
  await rig.stop()
})

interface Entry {
  readonly at: string
  readonly type: string
  readonly recipient: string
  readonly host?: string
  readonly reply?: string
  readonly status?: string
}

const send = async (to: string | ReadonlyArray<string>, headers: Record<string, string> = {}) => {
  const res = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to), headers })
  expect(res.status).toBe(202)
  return res.json.items[0].message_id as string
}

const lookup = (messageId: string, token = sender.token) => rig.app.request("GET", `/v1/mail/messages/${messageId}`, { token })

/** The message's timeline for one recipient, as [type, ...] and the entries themselves. */
const entriesOf = (timeline: ReadonlyArray<Entry>, recipient: string) => timeline.filter((e) => e.recipient === recipient)

/** Sends to `to`, waits until the sink has it; answers the message id and what the sink received. */
const deliver = async (to: string) => {
  const messageId = await send(to)
  await waitForState(rig.app, messageId, to, ["sent"])
  const received = rig.sink.received.find((r) => r.rcptTo.includes(to))!
  return { messageId, received }
}

describe("GET /v1/mail/messages/{message_id}", () => {
  it("shows each recipient's state and the ordered timeline: a deferral then sent, and an SMTP bounce", async () => {
    const later = "later@rcpt.test"
    const gone = "gone@rcpt.test"
    rig.sink.replies.set(later, "451 4.3.0 Try again later")
    rig.sink.replies.set(gone, "550 5.1.1 No such user here")
    const messageId = await send([later, gone])
    const deferred = await waitForState(rig.app, messageId, later, ["deferred"], { attempts: 1 })
    await waitForState(rig.app, messageId, gone, ["bounced"])
    rig.sink.replies.delete(later)
    await makeDue(rig.app, deferred.id)
    await waitForState(rig.app, messageId, later, ["sent"])

    const res = await lookup(messageId)
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({
      id: messageId,
      from: { email: sender.from, name: "Herald Tests" },
      subject: "Hello",
      channel: "transactional"
    })
    expect(Date.parse(res.json.created_at)).not.toBeNaN()
    expect(res.json.recipients).toEqual([{ email: gone, state: "bounced" }, { email: later, state: "sent" }])

    const timeline: ReadonlyArray<Entry> = res.json.timeline
    const times = timeline.map((e) => Date.parse(e.at))
    expect(times).toEqual([...times].sort((a, b) => a - b))

    const laterEntries = entriesOf(timeline, later)
    expect(laterEntries.map((e) => e.type)).toEqual(["queued", "attempt", "deferred", "attempt", "sent"])
    expect(laterEntries[1]).toMatchObject({ host: "mx.sink.test" })
    expect(laterEntries[1]!.reply).toContain("451 4.3.0 Try again later")
    expect(laterEntries[2]).toMatchObject({ status: "4.3.0" })
    expect(laterEntries[3]).toMatchObject({ host: "mx.sink.test" })
    expect(laterEntries[3]!.reply).toMatch(/^250/)
    expect(laterEntries[4]).toMatchObject({ status: "2.0.0" })

    const goneEntries = entriesOf(timeline, gone)
    expect(goneEntries.map((e) => e.type)).toEqual(["queued", "attempt", "bounced"])
    expect(goneEntries[1]).toMatchObject({ host: "mx.sink.test" })
    expect(goneEntries[1]!.reply).toContain("550 5.1.1 No such user here")
    expect(goneEntries[2]).toMatchObject({ status: "5.1.1" })
  })

  it("turns a sent recipient bounced on a late DSN to its VERP address, with the DSN's status, and the audit row shows the DSN", async () => {
    const to = "late@rcpt.test"
    const { messageId, received } = await deliver(to)
    const reply = await sendRaw(rig.app.smtpPort, { from: "", to: [received.mailFrom] }, dsn(received.mailFrom, to, "5.1.1", headersOf(received.raw)))
    expect(reply.code).toBe(250)

    const res = await eventually(async () => {
      const r = await lookup(messageId)
      return r.json.recipients?.[0]?.state === "bounced" ? r : undefined
    }, "the late bounce in the lookup")
    const entries: ReadonlyArray<Entry> = res.json.timeline
    expect(entries.map((e) => e.type)).toEqual(["queued", "attempt", "sent", "bounced"])
    expect(entries[3]).toMatchObject({ recipient: to, status: "5.1.1" })
    expect(entries[3]!.reply).toContain("mailbox problem")

    const audit = await rig.app.request("GET", `/v1/mail/audit?message_id=${messageId}`, { token: sender.token })
    expect(audit.status).toBe(200)
    expect(audit.json.items).toHaveLength(1)
    const [row] = audit.json.items
    expect(row).toMatchObject({ event: "failed", recipient: to, smtp_status: "5.1.1", smtp_code: 550 })
    expect(row.smtp_reply).toContain("mailbox problem")
  })

  it("shows a recipient complained about through an ARF report to its VERP address", async () => {
    const to = "angry@rcpt.test"
    const { messageId, received } = await deliver(to)
    const reply = await sendRaw(rig.app.smtpPort, { from: "feedback@fbl.isp.test", to: [received.mailFrom] },
      arf(received.mailFrom, to, headersOf(received.raw)))
    expect(reply.code).toBe(250)

    const res = await eventually(async () => {
      const r = await lookup(messageId)
      return r.json.recipients?.[0]?.state === "complained" ? r : undefined
    }, "the complaint in the lookup")
    expect(res.json.recipients).toEqual([{ email: to, state: "complained" }])
    expect(res.json.timeline.map((e: Entry) => e.type)).toEqual(["queued", "attempt", "sent", "complained"])
  })

  it("shows a recipient suppressed after acceptance as suppressed, with the refusal in its timeline", async () => {
    const to = "quiet@rcpt.test"
    rig.sink.replies.set(to, "451 4.3.0 Try again later")
    const messageId = await send(to)
    const deferred = await waitForState(rig.app, messageId, to, ["deferred"], { attempts: 1 })
    const added = await rig.app.request("POST", "/v1/client/suppressions", { token: sender.token, body: { email: to } })
    expect(added.status).toBe(201)
    await makeDue(rig.app, deferred.id)
    await waitForState(rig.app, messageId, to, ["failed"])

    const res = await lookup(messageId)
    expect(res.json.recipients).toEqual([{ email: to, state: "suppressed" }])
    const entries: ReadonlyArray<Entry> = res.json.timeline
    expect(entries.map((e) => e.type)).toEqual(["queued", "attempt", "deferred", "failed"])
    expect(entries[3]!.host).toBeUndefined()
    expect(entries[3]!.reply).toContain("recipient suppressed")
  })

  it("answers 404 for another account's message, an unknown id and a sandbox send's id", async () => {
    const messageId = await send("someone@rcpt.test")
    const other = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const foreign = await lookup(messageId, other.token)
    expect(foreign.status).toBe(404)
    expect(foreign.json).toEqual({ error: { type: "invalid_request_error", code: "not_found", message: `No message ${messageId}` } })
    expect((await lookup("msg_doesnotexist")).status).toBe(404)
    // A NUL cannot be a PostgreSQL text parameter: refused as bad input, not a 500.
    const nul = await lookup("msg_%00")
    expect(nul.status).toBe(400)
    expect(nul.json.error).toMatchObject({ code: "validation_failed", param: "message_id" })

    const sandboxId = await send("sandboxed@rcpt.test", { "X-Herald-Test": "true" })
    expect(sandboxId).toMatch(/^sandbox-/)
    const sandboxed = await lookup(sandboxId)
    expect(sandboxed.status).toBe(404)
    expect(sandboxed.json.error.code).toBe("not_found")
  })
})

describe("the audit log's message_id filter", () => {
  it("returns only that message's deliveries", async () => {
    const first = await send(["one@rcpt.test", "two@rcpt.test"])
    const second = await send("three@rcpt.test")
    const all = await rig.app.request("GET", "/v1/mail/audit?limit=1000", { token: sender.token })
    expect(all.json.items.map((i: { message_id: string }) => i.message_id)).toEqual(expect.arrayContaining([first, second]))

    const filtered = await rig.app.request("GET", `/v1/mail/audit?message_id=${first}`, { token: sender.token })
    expect(filtered.status).toBe(200)
    expect(filtered.json.total).toBe(2)
    expect(filtered.json.items.map((i: { message_id: string; recipient: string }) => [i.message_id, i.recipient]).sort())
      .toEqual([[first, "one@rcpt.test"], [first, "two@rcpt.test"]])

    const csv = await rig.app.request("GET", `/v1/mail/audit?message_id=${second}&format=csv`, { token: sender.token })
    expect(csv.text.trim().split("\n")).toHaveLength(2)
    expect(csv.text).toContain("three@rcpt.test")
    const none = await rig.app.request("GET", "/v1/mail/audit?message_id=msg_nothing", { token: sender.token })
    expect(none.json).toMatchObject({ total: 0, items: [] })
    const nul = await rig.app.request("GET", "/v1/mail/audit?message_id=msg_%00", { token: sender.token })
    expect(nul.status).toBe(400)
    expect(nul.json.error).toMatchObject({ code: "validation_failed", param: "message_id" })
  })

  it("records every attempt of a delivery with its host, in the outcome's statement", async () => {
    const messageId = await deliver("recorded@rcpt.test").then((d) => d.messageId)
    const rows = await query<{ host: string | null; code: number | null; outcome: string }>(rig.app.databaseUrl,
      `SELECT a.host, a.code, a.outcome FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.message_id = $1`, [messageId])
    expect(rows).toEqual([{ host: "mx.sink.test", code: 250, outcome: "sent" }])
  })
})
