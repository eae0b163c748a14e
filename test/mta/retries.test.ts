/**
 * What the far side's answer does to a delivery, end to end (API → queue → SMTP sink): a 4xx or a
 * network error defers it with the reply on record and a retry on the growing schedule (5 min,
 * then 10 min, …) until it is accepted; a delivery past HERALD_QUEUE_MAX_AGE_HOURS fails with
 * email.failed instead of being dropped; a 5xx bounces it with email.bounced. Retries are made due
 * by moving the row's next_attempt_at (the MTA polls the queue every second), age by moving its
 * created_at.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts"
import { deliveryOf, eventsOf, makeDue, type OutboundRig, startOutbound, waitForState } from "./outbound.ts"

const MINUTE = 60_000
const HOUR = 60 * MINUTE

let sink: SmtpSink
let rig: OutboundRig

beforeAll(async () => {
  sink = await startSmtpSink()
  rig = await startOutbound(sink.port, {
    "mx.sink.test": { A: ["127.0.0.1"] },
    "mx-dead.retry.test": { A: ["127.0.0.9"] },
    "retry.example": { MX: [{ preference: 10, exchange: "mx.sink.test" }] },
    "unreachable.example": { MX: [{ preference: 10, exchange: "mx-dead.retry.test" }] }
  }, { HERALD_QUEUE_MAX_AGE_HOURS: "2" })
})
afterAll(async () => {
  await rig.stop()
  await sink.close()
})

const copiesAt = (recipient: string) => sink.received.filter((m) => m.rcptTo.includes(recipient)).length

/** How far in the future the row's next attempt is, from now. */
const waitOf = (row: { next_attempt_at: Date }) => row.next_attempt_at.getTime() - Date.now()

describe("replies and retries", () => {
  it("defers a 4xx at RCPT with the reply on record, retries on the growing schedule, and sends once accepted", async () => {
    const to = "busy@retry.example"
    sink.replies.set(to, "450 4.2.1 Mailbox busy")
    const { messageId, requestId } = await rig.send(to)

    const first = await waitForState(rig.app, messageId, to, ["deferred"], { attempts: 1 })
    expect(first).toMatchObject({ attempts: 1, last_code: 450, last_status: "4.2.1" })
    expect(first.last_reply).toContain("Mailbox busy")
    expect(waitOf(first)).toBeGreaterThan(4 * MINUTE)
    expect(waitOf(first)).toBeLessThanOrEqual(5 * MINUTE)

    await makeDue(rig.app, first.id)
    const second = await waitForState(rig.app, messageId, to, ["deferred"], { attempts: 2 })
    expect(waitOf(second)).toBeGreaterThan(9 * MINUTE)
    expect(waitOf(second)).toBeLessThanOrEqual(10 * MINUTE)

    sink.replies.delete(to)
    await makeDue(rig.app, first.id)
    const sent = await waitForState(rig.app, messageId, to, ["sent"])
    expect(sent).toMatchObject({ attempts: 3, last_code: 250 })
    expect(copiesAt(to)).toBe(1)
    const events = await eventsOf(rig.app, "email.sent", messageId)
    expect(events.map((e) => e.payload)).toEqual([{ to: [to], subject: "Hello", message_id: messageId, request_id: requestId }])
  })

  it("defers when nothing answers at the MX address, with the network error on record", async () => {
    const to = "someone@unreachable.example"
    const { messageId } = await rig.send(to)
    const row = await waitForState(rig.app, messageId, to, ["deferred", "failed", "bounced"])
    expect(row).toMatchObject({ state: "deferred", attempts: 1, last_code: null, last_status: "4.4.1" })
    expect(row.last_reply).toContain("ECONNREFUSED")
    expect(waitOf(row)).toBeGreaterThan(4 * MINUTE)
    expect(await eventsOf(rig.app, "email.failed", messageId)).toEqual([])
  })

  it("fails a deferred delivery older than HERALD_QUEUE_MAX_AGE_HOURS with email.failed, and retries a younger one", async () => {
    const old = "old@retry.example"
    const young = "young@retry.example"
    sink.replies.set(old, "451 4.3.0 Temporary local problem")
    sink.replies.set(young, "451 4.3.0 Temporary local problem")
    const { messageId, requestId } = await rig.send([old, young])
    const oldRow = await waitForState(rig.app, messageId, old, ["deferred"], { attempts: 1 })
    const youngRow = await waitForState(rig.app, messageId, young, ["deferred"], { attempts: 1 })

    await makeDue(rig.app, oldRow.id, new Date(Date.now() - 3 * HOUR))
    await makeDue(rig.app, youngRow.id, new Date(Date.now() - 1 * HOUR))
    const failed = await waitForState(rig.app, messageId, old, ["failed", "deferred"], { attempts: 2 })
    expect(failed.state).toBe("failed")
    const retried = await waitForState(rig.app, messageId, young, ["failed", "deferred"], { attempts: 2 })
    expect(retried.state).toBe("deferred")

    const events = await eventsOf(rig.app, "email.failed", messageId)
    expect(events.map((e) => e.payload)).toEqual([{
      to: [old],
      subject: "Hello",
      message_id: messageId,
      request_id: requestId,
      error: expect.stringMatching(/gave up after 2 attempts: 451 .*Temporary local problem/)
    }])
    const audit = await rig.app.request("GET", `/v1/mail/audit?search=${old}`, { token: rig.sender.token })
    expect(audit.json.items[0].event).toBe("failed")
  })

  it("bounces a 5xx with email.bounced carrying the enhanced status, category and diagnostic", async () => {
    const to = "full@retry.example"
    sink.replies.set(to, "552 5.2.2 Mailbox full")
    const { messageId } = await rig.send(to)
    const row = await waitForState(rig.app, messageId, to, ["bounced", "deferred", "failed"])
    expect(row).toMatchObject({ state: "bounced", attempts: 1, last_code: 552, last_status: "5.2.2" })
    const events = await eventsOf(rig.app, "email.bounced", messageId)
    expect(events.map((e) => e.payload)).toEqual([{
      recipient: to, status: "5.2.2", category: "hard", diagnostic: expect.stringContaining("Mailbox full"), message_id: messageId
    }])
    // 5.2.2 (mailbox full) is a hard bounce that does not suppress the address.
    const suppressed = await rig.app.request("GET", `/v1/client/suppressions?email=${to}`, { token: rig.sender.token })
    expect(suppressed.json.items).toEqual([])
    expect((await deliveryOf(rig.app, messageId, to))!.state).toBe("bounced")
  })
})
