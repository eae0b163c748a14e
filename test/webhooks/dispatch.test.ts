/**
 * Webhooks end to end with a real HTTP receiver on loopback: configuration (generated secret shown
 * once, masked after), signed deliveries of the outbox's events, the burst of retries in real
 * time, rotate-secret, the queued test event, and the SSRF rules in production — at configuration
 * and again at delivery (a name rebound to a private address after it was accepted).
 */
import * as net from "node:net"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { receiverBody } from "../../src/events/schema.ts"
import { verifySignature } from "../../src/webhooks/signature.ts"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { eventually } from "../support/eventually.ts"
import { type Hit, type Receiver, startReceiver } from "./receiver.ts"

let rig: DeliveryRig
let sender: Sender
let receiver: Receiver

beforeAll(async () => {
  receiver = await startReceiver(200)
  rig = await startDeliveryRig({ HERALD_WEBHOOK_ALLOW_PRIVATE: "true" })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
})
afterAll(async () => {
  await rig.stop()
  await receiver.close()
})

const ofEvent = (eventId: string) => (h: Hit) => h.headers["x-herald-event-id"] === eventId

describe("webhooks", () => {
  let secret = ""

  it("generates a secret when a URL is set without one, shows it once, then only masked", async () => {
    const res = await rig.app.request("PATCH", `/v1/client/keys/${sender.keyId}`, { token: sender.token, body: { label: "tests", webhook_url: receiver.url() } })
    expect(res.status).toBe(200)
    secret = res.json.webhook_secret
    expect(secret).toMatch(/^whsec_/)
    const view = await rig.app.request("GET", `/v1/client/keys/${sender.keyId}/webhook`, { token: sender.token })
    expect(view.json).toEqual({ webhook_url: receiver.url(), secret_set: true, secret_masked: `whsec_••••••••${secret.slice(-4)}` })
    expect(view.text).not.toContain(secret)
  })

  it("delivers email.sent signed with the secret, with an event id receivers can deduplicate by", async () => {
    const sent = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "hooked@dest.example") })
    const [hit] = await receiver.waitFor(1, (h) => h.json?.event === "email.sent" && h.json.to?.[0] === "hooked@dest.example")
    const body = hit!.json
    expect(body).toMatchObject({ event: "email.sent", app: sender.keyId, to: ["hooked@dest.example"], message_id: sent.json.items[0].message_id, request_id: sent.json.request_id })
    expect(body.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    // What the receiver got is exactly what the documents describe (strict: no field more or less).
    expect(Schema.decodeUnknownEither(receiverBody("email.sent"))(body, { onExcessProperty: "error" })._tag).toBe("Right")
    expect(hit!.headers["content-type"]).toBe("application/json")
    expect(hit!.headers["x-herald-event-id"]).toBe(body.id)
    const ts = String(hit!.headers["x-herald-timestamp"])
    expect(verifySignature(secret, ts, hit!.body, String(hit!.headers["x-herald-signature"]), new Date())).toBe(true)
  })

  it("queues webhook.test through the outbox and delivers it like any event", async () => {
    const res = await rig.app.request("POST", `/v1/client/keys/${sender.keyId}/webhook/test`, { token: sender.token })
    expect(res.status).toBe(202)
    expect(res.json).toEqual({ event_id: expect.stringMatching(/^evt_/), delivery_id: expect.stringMatching(/^whd_/), status: "pending", webhook_url: receiver.url() })
    const [hit] = await receiver.waitFor(1, ofEvent(res.json.event_id))
    expect(hit!.json).toMatchObject({ id: res.json.event_id, event: "webhook.test", app: sender.keyId })
    expect(Schema.decodeUnknownEither(receiverBody("webhook.test"))(hit!.json, { onExcessProperty: "error" })._tag).toBe("Right")
    // The attempt is recorded by the dispatcher's batched writer, a few ms after the receiver answered.
    const detail = await eventually(async () => {
      const d = await rig.app.request("GET", `/v1/client/keys/${sender.keyId}/webhook/deliveries/${res.json.delivery_id}`, { token: sender.token })
      return d.json.status === "pending" ? undefined : d
    }, "the attempt on record")
    expect(detail.json).toMatchObject({ id: res.json.delivery_id, event_id: res.json.event_id, status: "delivered", attempts: 1, http_code: 200 })
  })

  it("retries a failing receiver in a burst about 1 s and 5 s after the first failure", async () => {
    receiver.mode = 500
    const res = await rig.app.request("POST", `/v1/client/keys/${sender.keyId}/webhook/test`, { token: sender.token })
    expect(res.status).toBe(202)
    const calls = await receiver.waitFor(3, ofEvent(res.json.event_id), 30_000)
    receiver.mode = 200
    const first = calls[0]!.at
    expect(calls[1]!.at - first).toBeGreaterThanOrEqual(900)
    expect(calls[1]!.at - first).toBeLessThan(3_500)
    expect(calls[2]!.at - first).toBeGreaterThanOrEqual(4_900)
    expect(calls[2]!.at - first).toBeLessThan(8_000)
    // A test event follows the normal ladder: after the failures it is still in its burst, not 24 h away.
    // The third attempt is on record once Herald has its answer, a moment after the receiver saw it.
    const detail = await eventually(async () => {
      const d = await rig.app.request("GET", `/v1/client/keys/${sender.keyId}/webhook/deliveries/${res.json.delivery_id}`, { token: sender.token })
      return d.json.attempt_history.length >= 3 ? d : undefined
    }, "the third attempt on record")
    expect(detail.json.attempt_history.slice(0, 3).map((a: { http_code: number }) => a.http_code)).toEqual([500, 500, 500])
    expect(detail.json.status).toBe("pending")
    // (The third retry, 25 s after the first failure, is timed on TestClock in ladder-clock.test.ts.)
  }, 60_000)

  it("signs with the new secret at once after rotate-secret", async () => {
    const rotated = await rig.app.request("POST", `/v1/client/keys/${sender.keyId}/webhook/rotate-secret`, { token: sender.token })
    expect(rotated.json.webhook_secret).not.toBe(secret)
    expect(rotated.json.secret_masked).toBe(`whsec_••••••••${rotated.json.webhook_secret.slice(-4)}`)
    const res = await rig.app.request("POST", `/v1/client/keys/${sender.keyId}/webhook/test`, { token: sender.token })
    const [hit] = await receiver.waitFor(1, ofEvent(res.json.event_id))
    const ts = String(hit!.headers["x-herald-timestamp"])
    expect(verifySignature(rotated.json.webhook_secret, ts, hit!.body, String(hit!.headers["x-herald-signature"]), new Date())).toBe(true)
    expect(verifySignature(secret, ts, hit!.body, String(hit!.headers["x-herald-signature"]), new Date())).toBe(false)
  })

  it("clears URL and secret with DELETE; a test event then has nowhere to go (409)", async () => {
    const res = await rig.app.request("DELETE", `/v1/client/keys/${sender.keyId}/webhook`, { token: sender.token })
    expect(res.json).toEqual({ webhook_url: null, secret_set: false, secret_masked: null })
    const test = await rig.app.request("POST", `/v1/client/keys/${sender.keyId}/webhook/test`, { token: sender.token })
    expect(test.status).toBe(409)
    expect(test.json.error.code).toBe("conflict")
  })
})

describe("webhook URLs in production", () => {
  // HERALD_WEBHOOK_ALLOW_PRIVATE is ignored in production.
  let app: Appliance
  let keyId = ""
  beforeAll(async () => {
    app = await startAppliance({ env: { HERALD_ENV: "production", HERALD_WEBHOOK_ALLOW_PRIVATE: "true", HERALD_DNS_SERVERS: rig.dns.address } })
    keyId = (await app.request("GET", "/v1/client/keys")).json.items[0].id
    rig.dns.set("private.example", { A: ["192.168.1.10"] })
    rig.dns.set("private6.example", { AAAA: ["fd00::5"] })
  })
  afterAll(() => app.stop())

  it.each([
    "http://hooks.example/in", "https://127.0.0.1/hook", "https://10.0.0.1/hook", "https://169.254.169.254/latest",
    "https://[::1]/hook", "https://[::127.0.0.1]/hook", "https://[::ffff:10.0.0.1]/hook", "https://[64:ff9b::a9fe:a9fe]/latest",
    "https://private.example/hook", "https://private6.example/hook"
  ])("refuses %s", async (url) => {
    const res = await app.request("PATCH", `/v1/client/keys/${keyId}`, { body: { label: "x", webhook_url: url } })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ code: "validation_failed", param: "webhook_url" })
    // Production cannot allow them: the refusal does not point at a variable that is ignored there.
    expect(res.json.error.message).not.toContain("HERALD_WEBHOOK_ALLOW_PRIVATE")
  })

  it("refuses again at delivery a name that has since moved to a private address, and connects nowhere", async () => {
    // Whatever listens on 127.0.0.1 at this port would be reached if the delivery resolved the name again.
    let connections = 0
    const trap = net.createServer((socket) => {
      connections += 1
      socket.destroy()
    })
    await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", () => resolve()))
    const port = (trap.address() as net.AddressInfo).port
    try {
      rig.dns.set("rebind.example", { A: ["93.184.216.34"] })
      const set = await app.request("PATCH", `/v1/client/keys/${keyId}`, { body: { label: "x", webhook_url: `https://rebind.example:${port}/hook` } })
      expect(set.status).toBe(200)
      rig.dns.set("rebind.example", { A: ["127.0.0.1"] })
      const test = await app.request("POST", `/v1/client/keys/${keyId}/webhook/test`)
      expect(test.status).toBe(202)
      const attempt = await eventually(async () => {
        const detail = await app.request("GET", `/v1/client/keys/${keyId}/webhook/deliveries/${test.json.delivery_id}`)
        return detail.json.attempt_history[0]
      }, "the first attempt")
      expect(attempt).toMatchObject({ http_code: null, duration_ms: 0 })
      expect(attempt.error).toMatch(/^webhook URL refused: rebind\.example → 127\.0\.0\.1/)
      expect(connections).toBe(0)
    } finally {
      trap.close()
    }
  })
})
