/**
 * In production the MTA connects only to public MX addresses (issue #22): the recipient domain is
 * the sender's choice, and an MX on 127.0.0.1 would make the appliance an SMTP client inside its
 * own network. Such a delivery fails at once like a null MX, with the reason on record. Tests and
 * staging, which point HERALD_MX_PORT at a server on loopback, and development keep delivering there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type SmtpSink, startSmtpSink } from "../support/smtp-sink.ts"
import { eventsOf, type OutboundRig, startOutbound, waitForState } from "./outbound.ts"

const records = {
  "mx.loopback.test": { A: ["127.0.0.1"] },
  "loopback.example": { MX: [{ preference: 10, exchange: "mx.loopback.test" }] },
  // No MX: the implicit MX is the domain's own address (RFC 5321 §5.1), checked the same way.
  "implicit.example": { A: ["10.1.2.3"] }
}
const STATES = ["failed", "sent", "deferred", "bounced"]

let sink: SmtpSink

beforeAll(async () => {
  sink = await startSmtpSink()
})
afterAll(() => sink.close())

/** An appliance with delivery on; `mxPort` undefined: HERALD_MX_PORT at its default, 25 (real MX servers). */
const withRig = async (env: Record<string, string>, mxPort: number | undefined, test: (rig: OutboundRig) => Promise<void>) => {
  const rig = await startOutbound(mxPort ?? 25, records, env)
  try {
    await test(rig)
  } finally {
    await rig.stop()
  }
}

describe("MX hosts on private addresses", () => {
  it("are refused in production: the delivery fails at once with email.failed naming the address", async () => {
    await withRig({ HERALD_ENV: "production" }, undefined, async (rig) => {
      const to = "someone@loopback.example"
      const { messageId, requestId } = await rig.send(to)
      const row = await waitForState(rig.app, messageId, to, STATES)
      expect(row).toMatchObject({ state: "failed", attempts: 1, last_code: null, last_status: "5.4.4" })
      expect(row.last_reply).toBe(
        "the MX hosts of loopback.example are not on public addresses (mx.loopback.test → 127.0.0.1 is a private or reserved address); refused in production"
      )
      const events = await eventsOf(rig.app, "email.failed", messageId)
      expect(events.map((e) => e.payload)).toEqual([{
        to: [to], subject: "Hello", message_id: messageId, request_id: requestId, error: row.last_reply
      }])

      const implicit = "someone@implicit.example"
      const sent = await rig.send(implicit)
      const implicitRow = await waitForState(rig.app, sent.messageId, implicit, STATES)
      expect(implicitRow).toMatchObject({ state: "failed", last_status: "5.4.4" })
      expect(implicitRow.last_reply).toMatch(/implicit\.example → 10\.1\.2\.3 is a private or reserved address/)
    })
  })

  it("are delivered to when HERALD_MX_PORT points at a test server, even in production", async () => {
    await withRig({ HERALD_ENV: "production" }, sink.port, async (rig) => {
      const to = "someone@loopback.example"
      const { messageId } = await rig.send(to)
      expect((await waitForState(rig.app, messageId, to, STATES)).state).toBe("sent")
      expect(sink.received.some((m) => m.rcptTo.includes(to))).toBe(true)
    })
  })

  it("are tried in development, on port 25 as well", async () => {
    await withRig({}, undefined, async (rig) => {
      const to = "dev@loopback.example"
      const { messageId } = await rig.send(to)
      const row = await waitForState(rig.app, messageId, to, STATES)
      expect(row.last_reply ?? "").not.toMatch(/refused in production/)
      expect(["deferred", "sent"]).toContain(row.state)
    })
  })
})
