/**
 * Webhooks end to end with a real HTTP receiver on loopback: configuration (generated secret shown
 * once, masked after), signed deliveries of the outbox's events, the burst of retries, rotate-
 * secret, the inline test and retry endpoints, the history, and the SSRF rules in production.
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifySignature } from "../../src/webhooks/signature.ts"
import { startAppliance } from "../support/appliance.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

interface Hit {
  readonly at: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

let rig: DeliveryRig
let sender: Sender
let receiver: http.Server
let receiverUrl = ""
const hits: Array<Hit> = []
let answer = 200

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      hits.push({ at: Date.now(), headers: req.headers, body })
      res.writeHead(answer).end(answer === 200 ? "thanks" : "broken")
    })
  })
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`
  rig = await startDeliveryRig({ HERALD_WEBHOOK_ALLOW_PRIVATE: "true" })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
})
afterAll(async () => {
  await rig.stop()
  receiver.closeAllConnections()
  receiver.close()
})

const waitForHits = async (n: number, timeoutMs = 15_000) => {
  const end = Date.now() + timeoutMs
  while (hits.length < n) {
    if (Date.now() > end) throw new Error(`${hits.length} of ${n} webhook calls`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe("webhooks", () => {
  let secret = ""

  it("generates a secret when a URL is set without one, shows it once, then only masked", async () => {
    const res = await rig.app.request("PATCH", `/v1/client/keys/${sender.keyId}`, { token: sender.token, body: { label: "tests", webhook_url: receiverUrl } })
    expect(res.status).toBe(200)
    secret = res.json.webhook_secret
    expect(secret).toMatch(/^whsec_/)
    const view = await rig.app.request("GET", `/v1/client/keys/${sender.keyId}/webhook`, { token: sender.token })
    expect(view.json).toEqual({ webhook_url: receiverUrl, secret_set: true, secret_masked: `whsec_••••••••${secret.slice(-4)}` })
    expect(view.text).not.toContain(secret)
  })

  it("delivers email.sent signed with the secret, with an event id receivers can deduplicate by", async () => {
    const before = hits.length
    const sent = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "hooked@dest.example") })
    await waitForHits(before + 1)
    const hit = hits.find((h, i) => i >= before && JSON.parse(h.body).event === "email.sent")!
    const body = JSON.parse(hit.body)
    expect(body).toMatchObject({ event: "email.sent", app: sender.keyId, to: ["hooked@dest.example"], message_id: sent.json.items[0].message_id, request_id: sent.json.request_id })
    expect(body.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(hit.headers["content-type"]).toBe("application/json")
    expect(hit.headers["x-herald-event-id"]).toBe(body.id)
    const ts = String(hit.headers["x-herald-timestamp"])
    expect(verifySignature(secret, ts, hit.body, String(hit.headers["x-herald-signature"]), new Date())).toBe(true)
  })

  it("retries a failing receiver in a burst about 1 s and 5 s after the first failure", async () => {
    answer = 500
    const before = hits.length
    const test = await rig.app.request("POST", `/v1/client/keys/${sender.keyId}/webhook/test`, { token: sender.token })
    expect(test.json).toMatchObject({ http_code: 500, status: "pending" })
    answer = 200
    const failing = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "burst@dest.example") })
    expect(failing.status).toBe(202)
    answer = 500
    await waitForHits(before + 3, 20_000)
    const calls = hits.slice(before + 1).filter((h) => JSON.parse(h.body).to?.[0] === "burst@dest.example")
    await waitForHits(before + 4, 20_000)
    const again = hits.slice(before + 1).filter((h) => JSON.parse(h.body).to?.[0] === "burst@dest.example")
    expect(again.length).toBeGreaterThanOrEqual(Math.max(2, calls.length))
    const gap = again[1]!.at - again[0]!.at
    expect(gap).toBeGreaterThanOrEqual(900)
    expect(gap).toBeLessThan(4_000)
    answer = 200
  }, 40_000)

  it("signs with the new secret at once after rotate-secret", async () => {
    const rotated = await rig.app.request("POST", `/v1/client/keys/${sender.keyId}/webhook/rotate-secret`, { token: sender.token })
    expect(rotated.json.webhook_secret).not.toBe(secret)
    const before = hits.length
    const res = await rig.app.request("POST", `/v1/client/keys/${sender.keyId}/webhook/test`, { token: sender.token })
    expect(res.json).toMatchObject({ status: "delivered", http_code: 200, error: null })
    const hit = hits[before]!
    const ts = String(hit.headers["x-herald-timestamp"])
    expect(verifySignature(rotated.json.webhook_secret, ts, hit.body, String(hit.headers["x-herald-signature"]), new Date())).toBe(true)
    expect(verifySignature(secret, ts, hit.body, String(hit.headers["x-herald-signature"]), new Date())).toBe(false)
    expect(JSON.parse(hit.body).event).toBe("webhook.test")
  })

  it("keeps every delivery and attempt in the history, and re-fires one on request", async () => {
    const list = await rig.app.request("GET", `/v1/client/keys/${sender.keyId}/webhook/deliveries?limit=200`, { token: sender.token })
    expect(list.json.total).toBeGreaterThan(0)
    const one = list.json.items[0]
    const detail = await rig.app.request("GET", `/v1/client/webhook-endpoints/${sender.keyId}/deliveries/${one.id}`, { token: sender.token })
    expect(detail.json.attempt_history.length).toBe(detail.json.attempts)
    expect(detail.json.payload.id).toBe(one.event_id)
    const retried = await rig.app.request("POST", `/v1/client/webhook-endpoints/${sender.keyId}/deliveries/${one.id}/retry`, { token: sender.token })
    expect(retried.json).toMatchObject({ delivery_id: one.id, status: "delivered", http_code: 200 })
    const pending = await rig.app.request("GET", `/v1/client/webhook-endpoints/${sender.keyId}/deliveries?status=pending`, { token: sender.token })
    expect(pending.status).toBe(200)
    expect((await rig.app.request("GET", `/v1/client/webhook-endpoints/${sender.keyId}/deliveries/whd_nope`, { token: sender.token })).status).toBe(404)
    const stranger = await newSender(rig.app, rig.dns)
    expect((await rig.app.request("GET", `/v1/client/webhook-endpoints/${sender.keyId}/deliveries`, { token: stranger.token })).status).toBe(403)
  })

  it("clears URL and secret with DELETE", async () => {
    const res = await rig.app.request("DELETE", `/v1/client/keys/${sender.keyId}/webhook`, { token: sender.token })
    expect(res.json).toEqual({ webhook_url: null, secret_set: false, secret_masked: null })
  })
})

describe("webhook URLs in production", () => {
  it.each(["http://hooks.example/in", "https://127.0.0.1/hook", "https://10.0.0.1/hook", "https://169.254.169.254/latest", "https://[::1]/hook", "https://private.example/hook"])(
    "refuses %s",
    async (url) => {
      const app = await startAppliance({ env: { HERALD_ENV: "production", HERALD_WEBHOOK_ALLOW_PRIVATE: "true", HERALD_DNS_SERVERS: rig.dns.address } })
      rig.dns.set("private.example", { A: ["192.168.1.10"] })
      try {
        const keys = await app.request("GET", "/v1/client/keys")
        const res = await app.request("PATCH", `/v1/client/keys/${keys.json.items[0].id}`, { body: { label: "x", webhook_url: url } })
        expect(res.status).toBe(400)
        expect(res.json.error.param).toBe("webhook_url")
      } finally {
        await app.stop()
      }
    }
  )
})
