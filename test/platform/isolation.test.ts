/**
 * Tenant isolation: Bob tries every account-owned route of the API with Alice's ids. Keys — and
 * webhook endpoints, whose id is the key's id — of another account answer 403; every other
 * resource answers 404, as if it did not exist (docs/decisions.md). Lists never show Alice's
 * rows, and afterwards everything of Alice's is still there.
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { dmarcMail, dmarcXml } from "../support/reports.ts"
import { eventually } from "../support/eventually.ts"
import { sendRaw } from "../support/smtp-client.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
let receiver: http.Server
let alice: Sender
let bob: Sender

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => res.writeHead(200).end("ok"))
  })
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()))
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address, HERALD_WEBHOOK_ALLOW_PRIVATE: "true" } })
  alice = await newSender(app, dns, { packageId: "growth" })
  bob = await newSender(app, dns, { packageId: "growth" })
})
afterAll(async () => {
  await app.stop()
  await dns.close()
  await new Promise((r) => receiver.close(r))
})

/** Everything Alice owns, made through the API as a customer would. */
const aliceResources = async () => {
  const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`
  const key = await app.request("POST", "/v1/client/keys", { token: alice.token, body: { label: "alice-2" } })
  const hooked = await app.request("PATCH", `/v1/client/keys/${alice.keyId}`, { token: alice.token, body: { label: "tests", webhook_url: url } })
  expect(hooked.status).toBe(200)
  // A webhook delivery of Alice's (answered at once or queued), followed until it is delivered.
  const fired = await app.request("POST", `/v1/client/keys/${alice.keyId}/webhook/test`, { token: alice.token })
  expect([200, 202]).toContain(fired.status)
  const delivered = await eventually(async () => {
    const res = await app.request("GET", `/v1/client/keys/${alice.keyId}/webhook/deliveries/${fired.json.delivery_id}`, { token: alice.token })
    return res.json?.status === "delivered" ? res.json : undefined
  }, "Alice's webhook.test delivery", 20_000)
  const ticket = await app.request("POST", "/v1/tickets", { token: alice.token, body: { subject: "Private", body: "x" } })
  await app.request("POST", "/v1/client/suppressions", { token: alice.token, body: { email: "secret@example.org" } })
  const sent = await app.request("POST", "/v1/mail/send", { token: alice.token, body: sendBody(alice, "alice-rcpt@example.org") })
  expect(sent.status).toBe(202)
  const scheduled = await app.request("POST", "/v1/mail/send", {
    token: alice.token, body: sendBody(alice, "later@example.org", { send_at: new Date(Date.now() + 3_600_000).toISOString() })
  })
  const pendingDomain = `pending-${alice.domain}`
  expect((await app.request("POST", "/v1/client/domains", { token: alice.token, body: { domain: pendingDomain } })).status).toBe(201)
  // A DMARC aggregate report for Alice's domain, received by the MX listener.
  const end = Math.floor(Date.now() / 1000)
  const xml = dmarcXml(alice.domain, "iso-1", end - 86_400, end, [{ ip: "203.0.113.9", count: 5, dkim: "pass", spf: "pass" }])
  const to = "dmarc@bounces.herald.test"
  expect((await sendRaw(app.smtpPort, { from: "noreply-dmarc@receiver.test", to: [to] }, dmarcMail(to, "iso", xml))).code).toBe(250)
  const report = await eventually(async () => {
    const res = await app.request("GET", "/v1/client/dmarc/reports", { token: alice.token })
    return res.json.total === 1 ? res.json.items[0].id as string : undefined
  }, "Alice's DMARC report", 20_000)
  return { keyId: key.json.id as string, deliveryId: fired.json.delivery_id as string, delivered, ticketId: ticket.json.id as string, scheduledId: scheduled.json.id as string, pendingDomain, reportId: report }
}

describe("tenant isolation", () => {
  it("never shows or lets Bob touch what belongs to Alice", async () => {
    const a = await aliceResources()
    const webhookBefore = (await app.request("GET", `/v1/client/keys/${alice.keyId}/webhook`, { token: alice.token })).json
    const as = (method: string, route: string, body?: unknown) =>
      app.request(method, route, { token: bob.token, ...(body === undefined ? {} : { body }) }).then((r) => [method, route, r.status])

    // Alice's keys and webhook endpoints: 403.
    const keyRoutes: Array<[string, string, unknown?]> = []
    for (const id of [a.keyId, alice.keyId]) {
      keyRoutes.push(
        ["GET", `/v1/client/keys/${id}`], ["PATCH", `/v1/client/keys/${id}`, { label: "mine" }],
        ["PATCH", `/v1/client/keys/${id}`, { label: "mine", webhook_url: "http://127.0.0.1:1/steal" }],
        ["GET", `/v1/client/keys/${id}/webhook`], ["DELETE", `/v1/client/keys/${id}/webhook`],
        ["POST", `/v1/client/keys/${id}/webhook/rotate-secret`], ["POST", `/v1/client/keys/${id}/webhook/test`],
        ["GET", `/v1/client/keys/${id}/webhook/deliveries`], ["GET", `/v1/client/keys/${id}/webhook/deliveries/${a.deliveryId}`],
        ["POST", `/v1/client/keys/${id}/webhook/deliveries/${a.deliveryId}/retry`],
        ["GET", `/v1/client/webhook-endpoints/${id}/deliveries`], ["GET", `/v1/client/webhook-endpoints/${id}/deliveries/${a.deliveryId}`],
        ["POST", `/v1/client/webhook-endpoints/${id}/deliveries/${a.deliveryId}/retry`],
        ["DELETE", `/v1/client/keys/${id}`]
      )
    }
    for (const [method, route, body] of keyRoutes) expect(await as(method, route, body)).toEqual([method, route, 403])

    // Everything else of Alice's, also through Bob's own key or endpoint: 404.
    const otherRoutes: Array<[string, string, unknown?]> = [
      ["GET", `/v1/client/keys/${bob.keyId}/webhook/deliveries/${a.deliveryId}`],
      ["POST", `/v1/client/keys/${bob.keyId}/webhook/deliveries/${a.deliveryId}/retry`],
      ["GET", `/v1/client/webhook-endpoints/${bob.keyId}/deliveries/${a.deliveryId}`],
      ["POST", `/v1/client/webhook-endpoints/${bob.keyId}/deliveries/${a.deliveryId}/retry`],
      ["GET", `/v1/client/domains/${alice.domain}`], ["POST", `/v1/client/domains/${alice.domain}/verify`],
      ["POST", `/v1/domains/${alice.domain}/verify`], ["DELETE", `/v1/client/domains/${alice.domain}`],
      ["GET", `/v1/client/domains/${a.pendingDomain}`], ["POST", `/v1/client/domains/${a.pendingDomain}/verify`],
      ["DELETE", `/v1/client/domains/${a.pendingDomain}`],
      ["GET", `/v1/client/dmarc/reports/${a.reportId}`],
      ["GET", `/v1/tickets/${a.ticketId}`], ["POST", `/v1/tickets/${a.ticketId}/messages`, { body: "hi" }],
      ["DELETE", "/v1/client/suppressions/secret@example.org"],
      ["GET", `/v1/mail/scheduled/${a.scheduledId}`], ["DELETE", `/v1/mail/scheduled/${a.scheduledId}`]
    ]
    for (const [method, route, body] of otherRoutes) expect(await as(method, route, body)).toEqual([method, route, 404])

    // Lists and searches never show Alice's rows.
    const get = (route: string) => app.request("GET", route, { token: bob.token }).then((r) => r.json)
    const ids = (items: ReadonlyArray<{ id: string }>) => items.map((i) => i.id)
    const bobKeys = ids((await get("/v1/client/keys")).items)
    expect(bobKeys).not.toContain(a.keyId)
    expect(bobKeys).not.toContain(alice.keyId)
    expect(ids((await get(`/v1/client/keys/${bob.keyId}/webhook/deliveries`)).items)).not.toContain(a.deliveryId)
    expect((await get("/v1/client/domains")).items.map((d: { domain: string }) => d.domain)).not.toContain(alice.domain)
    expect((await get("/v1/client/dmarc/reports")).total).toBe(0)
    expect((await get(`/v1/client/dmarc/reports?domain=${alice.domain}`)).total).toBe(0)
    expect(ids((await get("/v1/tickets")).items)).not.toContain(a.ticketId)
    expect((await get("/v1/client/suppressions?email=secret")).total).toBe(0)
    expect((await get("/v1/mail/audit?search=alice-rcpt")).total).toBe(0)
    expect((await get(`/v1/mail/audit?app=${alice.keyId}`)).total).toBe(0)
    expect((await app.request("GET", `/v1/mail/audit?client_id=${alice.accountId}`, { token: bob.token })).status).toBe(403)
    expect(ids((await get("/v1/client/usage")).keys)).not.toContain(alice.keyId)
    // Bob cannot send from Alice's domain either.
    expect((await app.request("POST", "/v1/mail/send", { token: bob.token, body: sendBody(alice, "x@example.org") })).status).toBe(403)

    // Nothing of Alice's changed.
    const mine = (route: string) => app.request("GET", route, { token: alice.token })
    expect((await mine(`/v1/client/keys/${a.keyId}`)).json.label).toBe("alice-2")
    expect((await mine(`/v1/client/keys/${alice.keyId}/webhook`)).json).toEqual(webhookBefore)
    expect(webhookBefore).toMatchObject({ webhook_url: expect.stringContaining("/hook"), secret_set: true })
    expect((await mine(`/v1/client/keys/${alice.keyId}/webhook/deliveries/${a.deliveryId}`)).json).toEqual(a.delivered)
    expect((await mine(`/v1/client/domains/${alice.domain}`)).status).toBe(200)
    expect((await mine(`/v1/client/domains/${a.pendingDomain}`)).status).toBe(200)
    expect((await mine(`/v1/tickets/${a.ticketId}`)).json.messages).toHaveLength(1)
    expect((await mine("/v1/client/suppressions?email=secret")).json.total).toBe(1)
    expect((await mine(`/v1/mail/scheduled/${a.scheduledId}`)).json.status).toBe("scheduled")
  }, 60_000)
})
