/**
 * HERALD_SMARTHOST relays every message through one server, whatever the recipient's domain: with
 * AUTH, over STARTTLS. The relay receives our credentials, so its certificate is verified (a
 * self-signed relay needs HERALD_SMARTHOST_TLS_VERIFY=false), and credentials on an smtp:// URL
 * require STARTTLS: a relay that does not offer it gets neither credentials nor mail, and the
 * delivery is deferred — a relay that cannot be used says nothing about the recipient.
 */
import { describe, expect, it } from "vitest"
import { selfSignedCert, type SinkOptions, startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts"
import { eventsOf, type OutboundRig, startOutbound, until, waitForState } from "./outbound.ts"

const credentials = { user: "relay-user", pass: "s3cret pass" }
const cert = selfSignedCert("relay.herald.test")

/** A relay sink and an appliance sending through it (HERALD_MX_PORT points nowhere useful). */
const withRelay = async (sinkOptions: SinkOptions, env: Record<string, string>, test: (rig: OutboundRig, sink: SmtpSink) => Promise<void>) => {
  const sink = await startSmtpSink(sinkOptions)
  const url = `smtp://${credentials.user}:${encodeURIComponent(credentials.pass)}@127.0.0.1:${sink.port}`
  const rig = await startOutbound(9, {}, { HERALD_SMARTHOST: url, ...env })
  try {
    await test(rig, sink)
  } finally {
    await rig.stop()
    await sink.close()
  }
}

// Each test starts its own appliance (the relay settings are start-up configuration).
describe("relaying through a smarthost", { timeout: 120_000 }, () => {
  it("relays every message, whatever the recipient's domain, after AUTH over STARTTLS", async () => {
    await withRelay({ tls: cert, auth: credentials }, { HERALD_SMARTHOST_TLS_VERIFY: "false" }, async (rig, sink) => {
      // Neither domain is in DNS: the relay, not the MX records, decides where mail goes.
      const { messageId } = await rig.send(["one@first.example", "two@second.example"])
      await waitForState(rig.app, messageId, "one@first.example", ["sent"])
      await waitForState(rig.app, messageId, "two@second.example", ["sent"])
      expect(sink.received.map((m) => m.rcptTo[0]).sort()).toEqual(["one@first.example", "two@second.example"])
      for (const m of sink.received) expect(m).toMatchObject({ secure: true, user: credentials.user })
      expect(sink.authAttempts.length).toBeGreaterThan(0)
      expect(sink.authAttempts.every((a) => a.secure && a.accepted)).toBe(true)
      expect(await eventsOf(rig.app, "email.sent", messageId)).toHaveLength(2)
    })
  })

  it("refuses a relay whose certificate does not verify, unless told to accept it, and defers the delivery", async () => {
    await withRelay({ tls: cert, auth: credentials }, {}, async (rig, sink) => {
      const { messageId } = await rig.send("three@third.example")
      const row = await waitForState(rig.app, messageId, "three@third.example", ["deferred", "bounced", "failed", "sent"])
      expect(row).toMatchObject({ state: "deferred", last_code: null })
      expect(row.last_reply).toMatch(/certificate/i)
      expect(sink.authAttempts).toEqual([])
      expect(sink.received).toEqual([])
    })
  })

  it("never sends credentials in plaintext: a relay without STARTTLS gets no AUTH and no mail, and the delivery is deferred", async () => {
    await withRelay({ auth: credentials }, { HERALD_SMARTHOST_TLS_VERIFY: "false" }, async (rig, sink) => {
      const { messageId } = await rig.send("four@fourth.example")
      const row = await waitForState(rig.app, messageId, "four@fourth.example", ["deferred", "bounced", "failed", "sent"])
      expect(row).toMatchObject({ state: "deferred", last_code: null })
      expect(row.last_reply).toContain("STARTTLS")
      await until("the appliance's connection to the relay", async () => (sink.connections.length > 0 ? true : undefined))
      expect(sink.authAttempts).toEqual([])
      expect(sink.received).toEqual([])
      expect(await eventsOf(rig.app, "email.bounced", messageId)).toEqual([])
    })
  })
})
