/**
 * What POST /v1/mail/send does with a valid body: rows committed with the 202, every item status
 * reachable, suppressions of each kind, the sender-domain rule and sandbox mode (Idempotency-Key:
 * idempotency.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
let sender: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address, HERALD_MAX_RECIPIENTS: "3" } })
  sender = await newSender(app, dns, { packageId: "growth" })
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

const send = (body: unknown, headers: Record<string, string> = {}, token = sender.token) =>
  app.request("POST", "/v1/mail/send", { token, body, headers })

const countRows = async (table: "messages" | "deliveries", accountId = sender.accountId) =>
  (await query<{ n: number }>(app.databaseUrl, `SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`, [accountId]))[0]!.n

describe("accepting a send", () => {
  it("has the message and one delivery per recipient committed when the 202 arrives", async () => {
    const res = await send(sendBody(sender, "one@example.org", {
      personalizations: [{ to: [{ email: "one@example.org" }], cc: [{ email: "two@example.org" }], bcc: [{ email: "three@example.org" }] }]
    }))
    expect(res.status).toBe(202)
    expect(res.json).toMatchObject({ message: "accepted", app: sender.keyId, sandbox: false })
    expect(res.json.request_id).toBe(res.headers.get("x-request-id"))
    const id = res.json.items[0].message_id
    const deliveries = await query(app.databaseUrl, "SELECT recipient, recipient_kind, state FROM deliveries WHERE message_id = $1 ORDER BY recipient", [id])
    expect(deliveries).toEqual([
      { recipient: "one@example.org", recipient_kind: "to", state: "queued" },
      { recipient: "three@example.org", recipient_kind: "bcc", state: "queued" },
      { recipient: "two@example.org", recipient_kind: "cc", state: "queued" }
    ])
  })

  it("ignores a client's X-Herald-Channel header", async () => {
    const res = await send(sendBody(sender, "chan@example.org", { headers: { "X-Herald-Channel": "bulk", "X-Custom": "1" } }))
    expect(res.status).toBe(202)
    const [row] = await query<{ content: any; channel: string }>(app.databaseUrl,
      "SELECT c.content, m.channel FROM messages m JOIN message_contents c ON c.id = m.content_id WHERE m.id = $1", [res.json.items[0].message_id])
    expect(row!.content.headers).toEqual({ "X-Custom": "1" })
    expect(row!.channel).toBe("transactional")
  })

  it("marks a personalization whose recipients were all addressed earlier as skipped", async () => {
    const res = await send(sendBody(sender, "x", {
      personalizations: [{ to: [{ email: "dup@example.org" }] }, { to: [{ email: "DUP@example.org" }] }]
    }))
    expect(res.json.items.map((i: { status: string }) => i.status)).toEqual(["queued", "skipped"])
    expect(res.json.items[1].error).toContain("already addressed")
  })

  it("marks a personalization with more recipients than one message may carry as failed", async () => {
    const res = await send(sendBody(sender, ["a1@example.org", "a2@example.org", "a3@example.org", "a4@example.org"]))
    expect(res.status).toBe(202)
    expect(res.json.items[0]).toMatchObject({ status: "failed" })
    expect(res.json.items[0].error).toContain("at most 3")
  })

  it("marks a personalization to a blocked recipient domain as rejected", async () => {
    await query(app.databaseUrl, "INSERT INTO blocked_domains (domain, reason, created_at) VALUES ('blocked.example', 'abuse', now())")
    const res = await send(sendBody(sender, "x", {
      personalizations: [{ to: [{ email: "who@blocked.example" }] }, { to: [{ email: "ok@example.org" }, { email: "also@blocked.example" }] }]
    }))
    expect(res.json.items.map((i: { status: string }) => i.status)).toEqual(["rejected", "queued"])
    expect(res.json.items[0].error).toContain("blocked.example")
    const rows = await query(app.databaseUrl, "SELECT recipient FROM deliveries WHERE message_id = $1", [res.json.items[1].message_id])
    expect(rows).toEqual([{ recipient: "ok@example.org" }])
  })

  it.each(["bounce", "complaint", "unsubscribe", "manual"])("does not mail an address suppressed for %s", async (reason) => {
    const email = `supp-${reason}@example.org`
    const added = await app.request("POST", "/v1/client/suppressions", { token: sender.token, body: { email, reason } })
    expect(added.status).toBe(201)
    const all = await send(sendBody(sender, email))
    expect(all.json.items[0].status).toBe("suppressed")
    expect(all.json.items[0].error).toContain(reason)
    const some = await send(sendBody(sender, [email, `fine-${reason}@example.org`]))
    expect(some.json.items[0].status).toBe("queued")
    const rows = await query(app.databaseUrl, "SELECT recipient FROM deliveries WHERE message_id = $1", [some.json.items[0].message_id])
    expect(rows).toEqual([{ recipient: `fine-${reason}@example.org` }])
  })

  it("honours the platform-level suppression list for every account", async () => {
    await query(app.databaseUrl, "INSERT INTO suppressions (account_id, email, reason, source, created_at) VALUES (NULL, 'platform@example.org', 'complaint', 'operator', now())")
    const res = await send(sendBody(sender, "platform@example.org"))
    expect(res.json.items[0].status).toBe("suppressed")
  })

  it("refuses a sender domain that is not registered, or not verified, with 403 domain_not_verified", async () => {
    const foreign = await send(sendBody({ ...sender, from: "me@not-mine.example" }, "x@example.org"))
    expect(foreign.status).toBe(403)
    expect(foreign.json.error).toMatchObject({ type: "invalid_request_error", code: "domain_not_verified" })
    expect(foreign.json.error.message).toContain("not-mine.example")
    const created = await app.request("POST", "/v1/client/domains", { token: sender.token, body: { domain: "pending.example" } })
    expect(created.status).toBe(201)
    const pending = await send(sendBody({ ...sender, from: "me@pending.example" }, "x@example.org"))
    expect(pending.status).toBe(403)
    expect(pending.json.error).toMatchObject({ type: "invalid_request_error", code: "domain_not_verified" })
    expect(pending.json.error.message).toContain("not verified")
  })

  it("answers 413 payload_too_large with param attachments when attachments exceed the limits", async () => {
    const big = Buffer.alloc(10 * 1024 * 1024 + 1).toString("base64")
    const res = await send(sendBody(sender, "att@example.org", { attachments: [{ content: big, filename: "big.bin" }] }))
    expect(res.status).toBe(413)
    expect(res.json.error).toMatchObject({ code: "payload_too_large", param: "attachments" })
    const exact = Buffer.alloc(10 * 1024 * 1024).toString("base64")
    const ok = await send(sendBody(sender, "att@example.org", { attachments: [{ content: exact, filename: "exact.bin" }] }))
    expect(ok.status).toBe(202)
  })
})

describe("sandbox mode", () => {
  it.each(["true", "1", "yes", "ON"])("with X-Herald-Test: %s validates everything and sends nothing", async (value) => {
    const before = await countRows("deliveries")
    const res = await send(sendBody(sender, "sandbox@example.org"), { "X-Herald-Test": value })
    expect(res.status).toBe(202)
    expect(res.json.sandbox).toBe(true)
    expect(res.json.items[0]).toMatchObject({ status: "queued", sandbox: true })
    expect(res.json.items[0].message_id).toMatch(/^sandbox-/)
    expect(await countRows("deliveries")).toBe(before)
  })

  it("leaves usage, messages, deliveries and events exactly as they were", async () => {
    // A real send first, so that the usage rows exist and a change to them would show.
    expect((await send(sendBody(sender, "before-sandbox@example.org"))).status).toBe(202)
    const snapshot = async () => ({
      accountUsage: await query(app.databaseUrl, "SELECT period_start, sent, overage FROM account_usage WHERE account_id = $1 ORDER BY period_start", [sender.accountId]),
      keyUsage: await query(app.databaseUrl, "SELECT period_start, sent FROM key_usage WHERE key_id = $1 ORDER BY period_start", [sender.keyId]),
      messages: await countRows("messages"),
      deliveries: await countRows("deliveries"),
      events: (await query<{ n: number }>(app.databaseUrl, "SELECT count(*)::int AS n FROM events WHERE account_id = $1", [sender.accountId]))[0]!.n
    })
    const before = await snapshot()
    expect(before.accountUsage.length).toBeGreaterThan(0)
    expect(before.keyUsage.length).toBeGreaterThan(0)
    const res = await send(sendBody(sender, "quiet@example.org", {
      personalizations: [{ to: [{ email: "quiet@example.org" }], cc: [{ email: "quiet-cc@example.org" }] }, { to: [{ email: "quiet2@example.org" }] }]
    }), { "X-Herald-Test": "true" })
    expect(res.status).toBe(202)
    expect(res.json.items.map((i: { status: string }) => i.status)).toEqual(["queued", "queued"])
    expect(await snapshot()).toEqual(before)
  })

  it("still refuses what a real send would refuse", async () => {
    const res = await send(sendBody({ ...sender, from: "me@not-mine.example" }, "x@example.org"), { "X-Herald-Test": "true" })
    expect(res.status).toBe(403)
  })

  it("sends for real with any other value", async () => {
    const res = await send(sendBody(sender, "real@example.org"), { "X-Herald-Test": "false" })
    expect(res.json.sandbox).toBe(false)
  })
})

describe("the suppression list API", () => {
  const suppressions = (params: string, token = sender.token) => app.request("GET", `/v1/client/suppressions?${params}`, { token })

  it("lets an account delete its own entry, after which the address is queued again", async () => {
    const email = "comeback@example.org"
    expect((await app.request("POST", "/v1/client/suppressions", { token: sender.token, body: { email, reason: "unsubscribe" } })).status).toBe(201)
    expect((await send(sendBody(sender, email))).json.items[0].status).toBe("suppressed")
    const stranger = await newSender(app, dns)
    const foreign = await app.request("DELETE", `/v1/client/suppressions/${encodeURIComponent(email)}`, { token: stranger.token })
    expect(foreign.status).toBe(404)
    const removed = await app.request("DELETE", `/v1/client/suppressions/${encodeURIComponent(email)}`, { token: sender.token })
    expect(removed.status).toBe(200)
    expect(removed.json).toEqual({ email, deleted: true })
    expect((await suppressions(`email=${email}`)).json.total).toBe(0)
    const again = await send(sendBody(sender, email))
    expect(again.json.items[0].status).toBe("queued")
    expect((await app.request("DELETE", `/v1/client/suppressions/${encodeURIComponent(email)}`, { token: sender.token })).status).toBe(404)
  })

  it("filters by reason and pages with limit and offset", async () => {
    const owner = await newSender(app, dns)
    const add = (email: string, reason: string) =>
      app.request("POST", "/v1/client/suppressions", { token: owner.token, body: { email, reason } })
    for (const i of [1, 2, 3]) expect((await add(`paged${i}@example.org`, "complaint")).status).toBe(201)
    expect((await add("other-reason@example.org", "manual")).status).toBe(201)

    const complaints = await suppressions("reason=complaint", owner.token)
    expect(complaints.json.total).toBe(3)
    expect(complaints.json.items.map((s: { reason: string }) => s.reason)).toEqual(["complaint", "complaint", "complaint"])
    const manual = await suppressions("reason=manual", owner.token)
    expect(manual.json.items.map((s: { email: string }) => s.email)).toEqual(["other-reason@example.org"])

    const first = await suppressions("limit=3&offset=0", owner.token)
    const second = await suppressions("limit=3&offset=3", owner.token)
    expect(first.json).toMatchObject({ total: 4, limit: 3, offset: 0 })
    expect(first.json.items).toHaveLength(3)
    expect(second.json).toMatchObject({ total: 4, limit: 3, offset: 3 })
    expect(second.json.items).toHaveLength(1)
    const emails = [...first.json.items, ...second.json.items].map((s: { email: string }) => s.email).sort()
    expect(emails).toEqual(["other-reason@example.org", "paged1@example.org", "paged2@example.org", "paged3@example.org"])

    expect((await suppressions("reason=spam", owner.token)).status).toBe(400)
    expect((await suppressions("limit=0", owner.token)).status).toBe(400)
  })
})
