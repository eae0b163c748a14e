/**
 * Support tickets, the admin's account controls, and tenant isolation: one account never sees or
 * touches another's keys, usage, tickets, domains, suppressions, deliveries or scheduled sends.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
let alice: Sender
let bob: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address } })
  alice = await newSender(app, dns, { packageId: "growth" })
  bob = await newSender(app, dns, { packageId: "growth" })
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

describe("support tickets", () => {
  it("lets an account open, list, read and answer its own tickets, and an admin answer them", async () => {
    const opened = await app.request("POST", "/v1/tickets", { token: alice.token, body: { subject: "Bounces", body: "Why?", priority: "high" } })
    expect(opened.status).toBe(201)
    expect(opened.json).toMatchObject({ subject: "Bounces", status: "open", priority: "high", category: "general" })
    const id = opened.json.id
    const answered = await app.request("POST", `/v1/admin/tickets/${id}/messages`, { body: { body: "Because." } })
    expect(answered.json.status).toBe("answered")
    const read = await app.request("GET", `/v1/tickets/${id}`, { token: alice.token })
    expect(read.json.messages.map((m: { author: string }) => m.author)).toEqual(["customer", "support"])
    const replied = await app.request("POST", `/v1/tickets/${id}/messages`, { token: alice.token, body: { body: "Thanks" } })
    expect(replied.json.status).toBe("open")
    expect((await app.request("GET", "/v1/tickets", { token: alice.token })).json.items).toHaveLength(1)
    const all = await app.request("GET", "/v1/admin/tickets?status=open")
    expect(all.json.items.map((t: { id: string }) => t.id)).toContain(id)
  })

  it("refuses a ticket without subject or body", async () => {
    const res = await app.request("POST", "/v1/tickets", { token: alice.token, body: { subject: "", body: "x" } })
    expect(res.status).toBe(400)
    expect(res.json.error.param).toBe("subject")
  })
})

describe("admin controls", () => {
  it("refuses non-admin keys on every admin endpoint", async () => {
    for (const [method, path] of [
      ["GET", "/v1/admin/accounts"], ["GET", `/v1/admin/accounts/${bob.accountId}`], ["POST", `/v1/admin/accounts/${bob.accountId}/suspend`],
      ["GET", "/v1/admin/tickets"]
    ] as const) {
      expect((await app.request(method, path, { token: alice.token })).status).toBe(403)
    }
  })

  it("suspends an account (its sends are refused) and lifts the suspension", async () => {
    const carol = await newSender(app, dns)
    expect((await app.request("POST", `/v1/admin/accounts/${carol.accountId}/suspend`)).json.status).toBe("suspended")
    const refused = await app.request("POST", "/v1/mail/send", { token: carol.token, body: sendBody(carol, "x@example.org") })
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe("account_suspended")
    await app.request("POST", `/v1/admin/accounts/${carol.accountId}/unsuspend`)
    expect((await app.request("POST", "/v1/mail/send", { token: carol.token, body: sendBody(carol, "x@example.org") })).status).toBe(202)
  })

  it("assigns a plan and overrides its rate and quota", async () => {
    const dave = await newSender(app, dns)
    const assigned = await app.request("PUT", `/v1/admin/accounts/${dave.accountId}/plan`, { body: { package_id: "business" } })
    expect(assigned.json.package_id).toBe("business")
    await app.request("PATCH", `/v1/admin/accounts/${dave.accountId}/limits`, { body: { rate_per_min: 7, monthly_quota: 70 } })
    const usage = await app.request("GET", "/v1/client/usage", { token: dave.token })
    expect(usage.json.subscriptions[0]).toMatchObject({ package_id: "business", rate_per_min: 7, monthly_quota: 70 })
    const send = await app.request("POST", "/v1/mail/send", { token: dave.token, body: sendBody(dave, "x@example.org") })
    expect(send.headers.get("ratelimit-limit")).toBe("7")
  })
})

describe("tenant isolation", () => {
  it("never shows or lets Bob touch what belongs to Alice", async () => {
    const key = await app.request("POST", "/v1/client/keys", { token: alice.token, body: { label: "alice-2" } })
    const ticket = await app.request("POST", "/v1/tickets", { token: alice.token, body: { subject: "Private", body: "x" } })
    await app.request("POST", "/v1/client/suppressions", { token: alice.token, body: { email: "secret@example.org" } })
    const sent = await app.request("POST", "/v1/mail/send", { token: alice.token, body: sendBody(alice, "alice-rcpt@example.org") })
    const scheduled = await app.request("POST", "/v1/mail/send", {
      token: alice.token, body: sendBody(alice, "later@example.org", { send_at: new Date(Date.now() + 3_600_000).toISOString() })
    })
    expect(sent.status).toBe(202)

    expect((await app.request("GET", `/v1/client/keys/${key.json.id}`, { token: bob.token })).status).toBe(403)
    expect((await app.request("PATCH", `/v1/client/keys/${key.json.id}`, { token: bob.token, body: { label: "mine" } })).status).toBe(403)
    expect((await app.request("DELETE", `/v1/client/keys/${key.json.id}`, { token: bob.token })).status).toBe(403)
    expect((await app.request("GET", "/v1/client/keys", { token: bob.token })).json.items.map((k: { id: string }) => k.id)).not.toContain(key.json.id)
    expect((await app.request("GET", `/v1/tickets/${ticket.json.id}`, { token: bob.token })).status).toBe(404)
    expect((await app.request("POST", `/v1/tickets/${ticket.json.id}/messages`, { token: bob.token, body: { body: "hi" } })).status).toBe(404)
    expect((await app.request("GET", `/v1/client/domains/${alice.domain}`, { token: bob.token })).status).toBe(404)
    expect((await app.request("GET", "/v1/client/suppressions?email=secret", { token: bob.token })).json.total).toBe(0)
    expect((await app.request("DELETE", "/v1/client/suppressions/secret@example.org", { token: bob.token })).status).toBe(404)
    expect((await app.request("GET", "/v1/mail/audit?search=alice-rcpt", { token: bob.token })).json.total).toBe(0)
    expect((await app.request("GET", `/v1/mail/audit?app=${alice.keyId}`, { token: bob.token })).json.total).toBe(0)
    expect((await app.request("GET", `/v1/mail/scheduled/${scheduled.json.id}`, { token: bob.token })).status).toBe(404)
    expect((await app.request("DELETE", `/v1/mail/scheduled/${scheduled.json.id}`, { token: bob.token })).status).toBe(404)
    const usage = await app.request("GET", "/v1/client/usage", { token: bob.token })
    expect(usage.json.keys.map((k: { id: string }) => k.id)).not.toContain(alice.keyId)
    // Bob cannot send from Alice's domain either.
    expect((await app.request("POST", "/v1/mail/send", { token: bob.token, body: sendBody(alice, "x@example.org") })).status).toBe(403)
  })
})
