/**
 * Support tickets (the account's side and the operator's) and the admin's account controls:
 * listing and reading accounts, suspension, plan assignment (on record as a plan change) and
 * PATCH-style overrides of rate and quota. Tenant isolation is in isolation.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
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

  it("lets an admin list every account's tickets, read one and answer it with a status", async () => {
    const mine = await app.request("POST", "/v1/tickets", { token: alice.token, body: { subject: "DKIM", body: "Help", category: "dns" } })
    const theirs = await app.request("POST", "/v1/tickets", { token: bob.token, body: { subject: "Quota", body: "More", priority: "urgent" } })
    const all = await app.request("GET", "/v1/admin/tickets")
    expect(all.status).toBe(200)
    const listed = all.json.items.filter((t: { id: string }) => t.id === mine.json.id || t.id === theirs.json.id)
    expect(listed).toEqual(expect.arrayContaining([
      expect.objectContaining({ id: mine.json.id, account_id: alice.accountId, subject: "DKIM", category: "dns", status: "open" }),
      expect.objectContaining({ id: theirs.json.id, account_id: bob.accountId, priority: "urgent", status: "open" })
    ]))
    expect(listed).toHaveLength(2)

    const read = await app.request("GET", `/v1/admin/tickets/${theirs.json.id}`)
    expect(read.status).toBe(200)
    expect(read.json).toMatchObject({ id: theirs.json.id, account_id: bob.accountId, subject: "Quota" })
    expect(read.json.messages).toEqual([expect.objectContaining({ author: "customer", body: "More" })])

    const closed = await app.request("POST", `/v1/admin/tickets/${theirs.json.id}/messages`, { body: { body: "Raised.", status: "closed" } })
    expect(closed.status).toBe(201)
    expect(closed.json.status).toBe("closed")
    expect(closed.json.messages.map((m: { author: string; body: string }) => [m.author, m.body])).toEqual([["customer", "More"], ["support", "Raised."]])
    // Bob sees the answer; the status filter of the admin list follows it.
    expect((await app.request("GET", `/v1/tickets/${theirs.json.id}`, { token: bob.token })).json.status).toBe("closed")
    const closedOnes = (await app.request("GET", "/v1/admin/tickets?status=closed")).json.items.map((t: { id: string }) => t.id)
    expect(closedOnes).toContain(theirs.json.id)
    expect(closedOnes).not.toContain(mine.json.id)

    expect((await app.request("GET", "/v1/admin/tickets/tkt_missing")).status).toBe(404)
    expect((await app.request("POST", "/v1/admin/tickets/tkt_missing/messages", { body: { body: "x" } })).status).toBe(404)
  })

  it("refuses a ticket without subject or body", async () => {
    const res = await app.request("POST", "/v1/tickets", { token: alice.token, body: { subject: "", body: "x" } })
    expect(res.status).toBe(400)
    expect(res.json.error.param).toBe("subject")
  })

  it.each([
    ["NUL in the subject", { subject: "Help\u0000", body: "x" }, "subject"],
    ["a lone surrogate in the subject", { subject: "Help \uD83D", body: "x" }, "subject"],
    ["NUL in the body", { subject: "Help", body: "a\u0000b" }, "body"],
    ["a lone surrogate in the body", { subject: "Help", body: "\uDC00" }, "body"],
    ["NUL in the category", { subject: "Help", body: "x", category: "dns\u0000" }, "category"]
  ])("refuses a ticket with %s with 400 naming the field, storing nothing", async (_, body, param) => {
    const before = await query(app.databaseUrl, "SELECT count(*)::int AS n FROM tickets")
    const res = await app.request("POST", "/v1/tickets", { token: alice.token, body })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param })
    expect(await query(app.databaseUrl, "SELECT count(*)::int AS n FROM tickets")).toEqual(before)
  })

  it("refuses NUL or a lone surrogate in a reply, the customer's or the admin's", async () => {
    const opened = await app.request("POST", "/v1/tickets", { token: alice.token, body: { subject: "Replies", body: "x" } })
    const id = opened.json.id
    const mine = await app.request("POST", `/v1/tickets/${id}/messages`, { token: alice.token, body: { body: "a\u0000" } })
    const admin = await app.request("POST", `/v1/admin/tickets/${id}/messages`, { body: { body: "\uD800b" } })
    for (const res of [mine, admin]) {
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ code: "validation_failed", param: "body" })
    }
    const read = await app.request("GET", `/v1/tickets/${id}`, { token: alice.token })
    expect(read.json.messages).toHaveLength(1)
  })
})

describe("admin controls", () => {
  it("refuses non-admin keys on every admin endpoint", async () => {
    const ticket = await app.request("POST", "/v1/tickets", { token: bob.token, body: { subject: "Mine", body: "x" } })
    const a = `/v1/admin/accounts/${bob.accountId}`
    for (const [method, path, body] of [
      ["POST", "/v1/admin/accounts", { name: "X", email: "x@example.org", password: "long enough pw" }],
      ["GET", "/v1/admin/accounts"], ["GET", a], ["POST", `${a}/keys`, { label: "x" }],
      ["POST", `${a}/suspend`], ["POST", `${a}/unsuspend`], ["POST", `${a}/unpause`],
      ["PUT", `${a}/plan`, { package_id: "scale" }], ["PATCH", `${a}/limits`, { rate_per_min: 1 }],
      ["GET", "/v1/admin/tickets"], ["GET", `/v1/admin/tickets/${ticket.json.id}`],
      ["POST", `/v1/admin/tickets/${ticket.json.id}/messages`, { body: "x" }]
    ] as const) {
      const res = await app.request(method, path, { token: alice.token, ...(body === undefined ? {} : { body }) })
      expect([method, path, res.status]).toEqual([method, path, 403])
    }
    expect((await app.request("GET", a)).json).toMatchObject({ status: "active", package_id: "growth", rate_per_min_override: null })
  })

  it("refuses a non-admin key with 403 before looking at its body, and an unknown key with 401", async () => {
    const a = `/v1/admin/accounts/${bob.accountId}`
    for (const [method, path] of [["POST", "/v1/admin/accounts"], ["POST", `${a}/keys`], ["PUT", `${a}/plan`], ["PATCH", `${a}/limits`]] as const) {
      const res = await app.request(method, path, { token: alice.token, body: { nonsense: true, rate_per_min: "many" } })
      expect([path, res.status, res.json.error.type]).toEqual([path, 403, "permission_error"])
    }
    const unknown = await app.request("GET", "/v1/admin/accounts", { token: "hrld_not_a_key_0123456789abcdef" })
    expect(unknown.status).toBe(401)
    expect(unknown.json.error.code).toBe("unauthorized")
  })

  it("lists and reads accounts", async () => {
    const list = await app.request("GET", "/v1/admin/accounts")
    expect(list.status).toBe(200)
    const byId = new Map(list.json.items.map((a: { id: string }) => [a.id, a]))
    expect(byId.get(alice.accountId)).toMatchObject({ is_admin: false, status: "active", package_id: "growth", sending_paused_reason: null })
    expect(byId.get(bob.accountId)).toBeDefined()
    expect(list.json.items.some((a: { is_admin: boolean }) => a.is_admin)).toBe(true)
    const read = await app.request("GET", `/v1/admin/accounts/${alice.accountId}`)
    expect(read.status).toBe(200)
    expect(read.json).toEqual(byId.get(alice.accountId))
    expect(read.json).toMatchObject({
      id: alice.accountId, email: expect.stringContaining("@customers.test"), rate_per_min_override: null, monthly_quota_override: null
    })
    expect(Date.parse(read.json.created_at)).not.toBeNaN()
    const missing = await app.request("GET", "/v1/admin/accounts/acc_missing")
    expect(missing.status).toBe(404)
  })

  it("pages the accounts on the server: oldest first, limit and offset, total counting them all", async () => {
    const all = await app.request("GET", "/v1/admin/accounts?limit=200")
    expect(all.status).toBe(200)
    expect(all.json).toMatchObject({ limit: 200, offset: 0, total: all.json.items.length })
    expect(all.json.total).toBeGreaterThanOrEqual(3) // the admin, alice and bob
    const second = await app.request("GET", "/v1/admin/accounts?limit=1&offset=1")
    expect(second.json).toMatchObject({ total: all.json.total, limit: 1, offset: 1 })
    expect(second.json.items.map((a: { id: string }) => a.id)).toEqual([all.json.items[1].id])
    expect((await app.request("GET", "/v1/admin/accounts")).json.limit).toBe(50)
    for (const query of ["limit=0", "limit=201", "offset=-1", "limit=x"]) {
      const refused = await app.request("GET", `/v1/admin/accounts?${query}`)
      expect([query, refused.status]).toEqual([query, 400])
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

  it("assigns a plan and records the assignment as a plan change by the admin", async () => {
    const dave = await newSender(app, dns, { packageId: "starter" })
    const assigned = await app.request("PUT", `/v1/admin/accounts/${dave.accountId}/plan`, { body: { package_id: "business" } })
    expect(assigned.status).toBe(200)
    expect(assigned.json.package_id).toBe("business")
    const [admin] = await query<{ id: string }>(app.databaseUrl,
      "SELECT k.id FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE a.is_admin ORDER BY k.created_at LIMIT 1")
    const changes = await query(app.databaseUrl, `
      SELECT c.from_package_id, c.to_package_id, c.type, c.amount_usd_cents, c.actor, c.applied_at IS NOT NULL AS applied,
        c.subscription_id = s.id AS on_new_subscription
      FROM plan_changes c JOIN subscriptions s ON s.account_id = c.account_id AND s.status = 'active'
      WHERE c.account_id = $1`, [dave.accountId])
    expect(changes).toEqual([{
      from_package_id: "starter", to_package_id: "business", type: "assignment", amount_usd_cents: 0,
      actor: `admin:${admin!.id}`, applied: true, on_new_subscription: true
    }])
    const usage = await app.request("GET", "/v1/client/usage", { token: dave.token })
    expect(usage.json.subscriptions[0]).toMatchObject({ package_id: "business" })
    // An account without a plan: "from" is null. An unknown package changes nothing.
    const erin = await newSender(app, dns)
    await app.request("PUT", `/v1/admin/accounts/${erin.accountId}/plan`, { body: { package_id: "free" } })
    const unknown = await app.request("PUT", `/v1/admin/accounts/${erin.accountId}/plan`, { body: { package_id: "platinum" } })
    expect(unknown.status).toBe(400)
    expect(await query(app.databaseUrl, "SELECT from_package_id, to_package_id FROM plan_changes WHERE account_id = $1", [erin.accountId]))
      .toEqual([{ from_package_id: null, to_package_id: "free" }])
    expect((await app.request("PUT", "/v1/admin/accounts/acc_missing/plan", { body: { package_id: "free" } })).status).toBe(404)
  })

  it("overrides rate and quota PATCH-style: a field left out is kept, null clears it", async () => {
    const dave = await newSender(app, dns, { packageId: "business" })
    const limits = (body: Record<string, unknown>) => app.request("PATCH", `/v1/admin/accounts/${dave.accountId}/limits`, { body })
    const usage = async () => (await app.request("GET", "/v1/client/usage", { token: dave.token })).json.subscriptions[0]
    const plan = await usage()

    expect((await limits({ rate_per_min: 7, monthly_quota: 70 })).json).toMatchObject({ rate_per_min_override: 7, monthly_quota_override: 70 })
    expect(await usage()).toMatchObject({ package_id: "business", rate_per_min: 7, monthly_quota: 70 })
    const send = await app.request("POST", "/v1/mail/send", { token: dave.token, body: sendBody(dave, "x@example.org") })
    expect(send.headers.get("ratelimit-limit")).toBe("7")

    expect((await limits({ rate_per_min: 9 })).json).toMatchObject({ rate_per_min_override: 9, monthly_quota_override: 70 })
    expect((await limits({})).json).toMatchObject({ rate_per_min_override: 9, monthly_quota_override: 70 })
    expect((await limits({ monthly_quota: null })).json).toMatchObject({ rate_per_min_override: 9, monthly_quota_override: null })
    expect(await usage()).toMatchObject({ rate_per_min: 9, monthly_quota: plan.monthly_quota })
    expect((await limits({ rate_per_min: null })).json).toMatchObject({ rate_per_min_override: null, monthly_quota_override: null })
    expect(await usage()).toMatchObject({ rate_per_min: plan.rate_per_min, monthly_quota: plan.monthly_quota })

    expect((await limits({ rate_per_min: 0 })).status).toBe(400)
    expect((await limits({ monthly_quota: -1 })).status).toBe(400)
    expect((await app.request("PATCH", "/v1/admin/accounts/acc_missing/limits", { body: { rate_per_min: 5 } })).status).toBe(404)
  })
})
