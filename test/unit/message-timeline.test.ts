/** The pure parts of a message lookup: a recipient's state, its timeline, and a late DSN's reply code. */
import { describe, expect, it } from "vitest"
import { diagnosticReplyCode } from "../../src/mta/queue/late-bounce.ts"
import { type DeliveryFact, messageHistory } from "../../src/transactional/messages/timeline.ts"

const t = (seconds: number) => new Date(Date.UTC(2026, 0, 6, 12, 0, seconds))

const delivery = (over: Partial<DeliveryFact> = {}): DeliveryFact => ({
  id: "dlv_a",
  recipient: "ada@example.net",
  state: "sent",
  created_at: t(0),
  updated_at: t(5),
  last_status: "2.0.0",
  last_reply: "250 OK",
  ...over
})

const none = { attempts: [], bounces: [], complaints: [] }

describe("messageHistory", () => {
  it.each([
    ["a sent delivery", delivery(), [], "sent"],
    ["a complaint about a sent delivery", delivery(), [{ delivery_id: "dlv_a", at: t(9) }], "complained"],
    ["a delivery refused because its recipient was suppressed after acceptance",
      delivery({ state: "failed", last_status: "5.7.1", last_reply: "recipient suppressed (bounce) since acceptance" }), [], "suppressed"],
    ["a delivery failed for another reason", delivery({ state: "failed", last_reply: "gave up after 9 attempts" }), [], "failed"],
    ["a deferred delivery", delivery({ state: "deferred" }), [], "deferred"]
  ])("gives %s its state", (_, d, complaints, state) => {
    expect(messageHistory({ ...none, deliveries: [d], complaints }).recipients).toEqual([{ email: "ada@example.net", state }])
  })

  it("writes an attempt only where an SMTP reply decided, and the reason on an outcome none decided", () => {
    const { timeline } = messageHistory({
      ...none,
      deliveries: [delivery({ state: "failed" })],
      attempts: [
        { delivery_id: "dlv_a", at: t(1), host: "mx.example.net", code: 451, status: "4.3.0", reply: "451 4.3.0 later", outcome: "deferred" },
        { delivery_id: "dlv_a", at: t(2), host: null, code: null, status: "4.4.3", reply: "no MX", outcome: "deferred" },
        { delivery_id: "dlv_a", at: t(3), host: null, code: null, status: "5.7.1", reply: "account suspended", outcome: "failed" }
      ]
    })
    expect(timeline.map((e) => [e.type, e.host, e.reply, e.status])).toEqual([
      ["queued", undefined, undefined, undefined],
      ["attempt", "mx.example.net", "451 4.3.0 later", undefined],
      ["deferred", undefined, undefined, "4.3.0"],
      ["deferred", undefined, "no MX", "4.4.3"],
      ["failed", undefined, "account suspended", "5.7.1"]
    ])
  })

  it("merges the recipients oldest first and shows a delay notice as deferred and a final DSN as bounced", () => {
    const { timeline } = messageHistory({
      deliveries: [delivery(), delivery({ id: "dlv_b", recipient: "bob@example.net", created_at: t(0) })],
      attempts: [
        { delivery_id: "dlv_b", at: t(1), host: "mx.example.net", code: 250, status: "2.0.0", reply: "250 OK", outcome: "sent" },
        { delivery_id: "dlv_a", at: t(2), host: "mx.example.net", code: 250, status: "2.0.0", reply: "250 OK", outcome: "sent" }
      ],
      bounces: [
        { delivery_id: "dlv_a", at: t(4), status: "4.2.2", action: "delayed", diagnostic: "smtp; 452 4.2.2 full" },
        { delivery_id: "dlv_a", at: t(6), status: "5.2.2", action: "failed", diagnostic: "smtp; 552 5.2.2 full" }
      ],
      complaints: []
    })
    expect(timeline.map((e) => `${e.recipient.slice(0, 3)} ${e.type} ${e.status ?? ""}`.trim())).toEqual([
      "ada queued", "bob queued", "bob attempt", "bob sent 2.0.0", "ada attempt", "ada sent 2.0.0", "ada deferred 4.2.2", "ada bounced 5.2.2"
    ])
  })

  it("shows the last outcome of a delivery finished before attempts were recorded", () => {
    const { timeline } = messageHistory({ ...none, deliveries: [delivery({ state: "bounced", last_status: "5.1.1", last_reply: "550 5.1.1 no" })] })
    expect(timeline.map((e) => [e.type, e.at, e.status, e.reply])).toEqual([
      ["queued", t(0).toISOString(), undefined, undefined],
      ["bounced", t(5).toISOString(), "5.1.1", "550 5.1.1 no"]
    ])
  })
})

describe("diagnosticReplyCode", () => {
  it.each([
    ["smtp; 550 5.1.1 <ada@example.net>: user unknown", 550],
    ["SMTP;452 4.2.2 mailbox full", 452],
    ["550-5.1.1 The email account does not exist", 550],
    ["X-Postfix; host unreachable", null],
    ["smtp; 5501 odd", null],
    [null, null]
  ])("reads %j as %j", (diagnostic, code) => {
    expect(diagnosticReplyCode(diagnostic)).toBe(code)
  })
})
