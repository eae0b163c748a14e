/**
 * Where mail goes, through the configured resolver (HERALD_DNS_SERVERS, a DNS server on loopback):
 * MX hosts in preference order with fallback to the next when one does not answer, the domain's
 * own address when it has no MX, failure at once for a null MX or a domain that does not exist,
 * and a deferral (not a failure) when the DNS server itself does not answer. Two sinks share one
 * port on 127.0.0.1 and 127.0.0.2 so the test can tell which MX took the message; nothing listens
 * on 127.0.0.9.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts"
import { eventsOf, type OutboundRig, startOutbound, until, waitForState } from "./outbound.ts"

let first: SmtpSink
let second: SmtpSink
let rig: OutboundRig

beforeAll(async () => {
  first = await startSmtpSink()
  second = await startSmtpSink({ host: "127.0.0.2", port: first.port })
  rig = await startOutbound(first.port, {
    "mx-first.route.test": { A: ["127.0.0.1"] },
    "mx-second.route.test": { A: ["127.0.0.2"] },
    "mx-dead.route.test": { A: ["127.0.0.9"] }
  })
})
afterAll(async () => {
  await rig.stop()
  await first.close()
  await second.close()
})

const arrivals = (sink: SmtpSink, recipient: string) => sink.received.filter((m) => m.rcptTo.includes(recipient))

const deliveredTo = (recipient: string) =>
  until(`${recipient} at a sink`, async () => {
    const at = [...arrivals(first, recipient), ...arrivals(second, recipient)]
    return at.length > 0 ? at : undefined
  })

describe("routing through the configured resolver", () => {
  it("takes the most preferred MX, whatever order the DNS answer lists them in", async () => {
    rig.dns.set("low-first.example", { MX: [{ preference: 20, exchange: "mx-second.route.test" }, { preference: 10, exchange: "mx-first.route.test" }] })
    rig.dns.set("high-first.example", { MX: [{ preference: 20, exchange: "mx-first.route.test" }, { preference: 5, exchange: "mx-second.route.test" }] })
    const a = await rig.send("a@low-first.example")
    const b = await rig.send("b@high-first.example")
    await waitForState(rig.app, a.messageId, "a@low-first.example", ["sent"])
    await waitForState(rig.app, b.messageId, "b@high-first.example", ["sent"])
    expect(arrivals(first, "a@low-first.example")).toHaveLength(1)
    expect(arrivals(second, "a@low-first.example")).toHaveLength(0)
    expect(arrivals(second, "b@high-first.example")).toHaveLength(1)
    expect(arrivals(first, "b@high-first.example")).toHaveLength(0)
  })

  it("falls back to the next MX within the same attempt when the preferred one does not answer", async () => {
    rig.dns.set("fallback.example", { MX: [{ preference: 10, exchange: "mx-dead.route.test" }, { preference: 20, exchange: "mx-second.route.test" }] })
    const { messageId } = await rig.send("c@fallback.example")
    const row = await waitForState(rig.app, messageId, "c@fallback.example", ["sent", "deferred", "failed"])
    expect(row).toMatchObject({ state: "sent", attempts: 1 })
    const [arrival] = await deliveredTo("c@fallback.example")
    expect(arrival!.localAddress).toBe("127.0.0.2")
  })

  it("delivers to the domain's own address when it has no MX record (implicit MX)", async () => {
    rig.dns.set("implicit.example", { A: ["127.0.0.2"] })
    const { messageId } = await rig.send("d@implicit.example")
    await waitForState(rig.app, messageId, "d@implicit.example", ["sent"])
    expect(arrivals(second, "d@implicit.example")).toHaveLength(1)
  })

  it("fails at once with email.failed for a domain that publishes a null MX (RFC 7505)", async () => {
    rig.dns.set("null-mx.example", { MX: [{ preference: 0, exchange: "." }], A: ["127.0.0.1"] })
    const { messageId, requestId } = await rig.send("e@null-mx.example")
    const row = await waitForState(rig.app, messageId, "e@null-mx.example", ["failed", "deferred"])
    expect(row).toMatchObject({ state: "failed", attempts: 1 })
    const events = await eventsOf(rig.app, "email.failed", messageId)
    expect(events.map((e) => e.payload)).toEqual([{
      to: ["e@null-mx.example"], subject: "Hello", message_id: messageId, request_id: requestId, error: expect.stringContaining("null MX")
    }])
    expect(arrivals(first, "e@null-mx.example")).toHaveLength(0)
  })

  it("fails at once with email.failed for a domain that does not exist (NXDOMAIN)", async () => {
    const { messageId } = await rig.send("f@no-such-domain.example")
    const row = await waitForState(rig.app, messageId, "f@no-such-domain.example", ["failed", "deferred"])
    expect(row).toMatchObject({ state: "failed", attempts: 1 })
    const [event] = await eventsOf(rig.app, "email.failed", messageId)
    expect(event!.payload.error).toContain("does not exist")
  })

  it("defers, and does not fail, when the DNS server does not answer", async () => {
    rig.dns.set("silent.example", { noAnswer: true })
    const { messageId } = await rig.send("g@silent.example")
    const row = await waitForState(rig.app, messageId, "g@silent.example", ["deferred", "failed", "sent"], { timeoutMs: 45_000 })
    expect(row.state).toBe("deferred")
    expect(row.last_reply).toContain("DNS lookup of silent.example failed")
    expect(row.next_attempt_at.getTime() - Date.now()).toBeGreaterThan(4 * 60_000)
    expect(await eventsOf(rig.app, "email.failed", messageId)).toEqual([])
  })
})
