/**
 * Opportunistic STARTTLS to recipients' MX (RFC 7435): when the MX offers STARTTLS the message
 * travels encrypted, even though the MX's certificate is self-signed and names another host
 * (certificates are not checked on this hop: unauthenticated encryption beats plaintext); an MX
 * that offers no STARTTLS still gets the message in plaintext.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { selfSignedCert, startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts"
import { type OutboundRig, startOutbound, until, waitForState } from "./outbound.ts"

let tlsSink: SmtpSink
let plainSink: SmtpSink
let rig: OutboundRig

beforeAll(async () => {
  tlsSink = await startSmtpSink({ tls: selfSignedCert("some-other-name.test") })
  // Same port on another loopback address: an MX without STARTTLS.
  plainSink = await startSmtpSink({ host: "127.0.0.2", port: tlsSink.port })
  rig = await startOutbound(tlsSink.port, {
    "mx.tls.test": { A: ["127.0.0.1"] },
    "mx.plain.test": { A: ["127.0.0.2"] },
    "encrypted.example": { MX: [{ preference: 10, exchange: "mx.tls.test" }] },
    "plain.example": { MX: [{ preference: 10, exchange: "mx.plain.test" }] }
  })
})
afterAll(async () => {
  await rig.stop()
  await tlsSink.close()
  await plainSink.close()
})

const arrival = (sink: SmtpSink, recipient: string) =>
  until(`${recipient} at the sink`, async () => sink.received.find((m) => m.rcptTo.includes(recipient)))

describe("opportunistic STARTTLS to recipients' MX", () => {
  it("upgrades the session when the MX offers STARTTLS, without requiring a valid certificate", async () => {
    const { messageId } = await rig.send("secret@encrypted.example")
    await waitForState(rig.app, messageId, "secret@encrypted.example", ["sent"])
    expect((await arrival(tlsSink, "secret@encrypted.example")).secure).toBe(true)
  })

  it("still delivers in plaintext to an MX that offers no STARTTLS", async () => {
    const { messageId } = await rig.send("open@plain.example")
    await waitForState(rig.app, messageId, "open@plain.example", ["sent"])
    expect((await arrival(plainSink, "open@plain.example")).secure).toBe(false)
  })
})
