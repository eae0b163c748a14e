/**
 * What POST /v1/mail/send does with a valid body: rows committed with the 202, every item status
 * reachable, suppressions of each kind, the sender-domain rule, sandbox and Idempotency-Key.
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
    const [row] = await query<{ content: any }>(app.databaseUrl, "SELECT content FROM messages WHERE id = $1", [res.json.items[0].message_id])
    expect(row!.content.headers).toEqual({ "X-Custom": "1" })
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
    expect(foreign.json.error).toMatchObject({ type: "permission_error", code: "domain_not_verified" })
    const created = await app.request("POST", "/v1/client/domains", { token: sender.token, body: { domain: "pending.example" } })
    expect(created.status).toBe(201)
    const pending = await send(sendBody({ ...sender, from: "me@pending.example" }, "x@example.org"))
    expect(pending.status).toBe(403)
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

  it("still refuses what a real send would refuse", async () => {
    const res = await send(sendBody({ ...sender, from: "me@not-mine.example" }, "x@example.org"), { "X-Herald-Test": "true" })
    expect(res.status).toBe(403)
  })

  it("sends for real with any other value", async () => {
    const res = await send(sendBody(sender, "real@example.org"), { "X-Herald-Test": "false" })
    expect(res.json.sandbox).toBe(false)
  })
})

describe("Idempotency-Key", () => {
  it("replays the stored response for the same key and body, sending nothing twice", async () => {
    const body = sendBody(sender, "idem@example.org")
    const first = await send(body, { "Idempotency-Key": "k-1" })
    const again = await send(body, { "Idempotency-Key": "k-1" })
    expect(again.status).toBe(202)
    expect(again.json).toEqual(first.json)
    const rows = await query(app.databaseUrl, "SELECT count(*)::int AS n FROM deliveries WHERE recipient = 'idem@example.org'")
    expect(rows[0]!.n).toBe(1)
  })

  it("answers 409 idempotency_key_reused for the same key with another body", async () => {
    await send(sendBody(sender, "idem2@example.org"), { "Idempotency-Key": "k-2" })
    const other = await send(sendBody(sender, "other@example.org"), { "Idempotency-Key": "k-2" })
    expect(other.status).toBe(409)
    expect(other.json.error).toMatchObject({ type: "idempotency_error", code: "idempotency_key_reused" })
  })

  it("is neither stored nor read by sandbox requests", async () => {
    const body = sendBody(sender, "idem3@example.org")
    const sandbox = await send(body, { "Idempotency-Key": "k-3", "X-Herald-Test": "1" })
    expect(sandbox.json.sandbox).toBe(true)
    const real = await send(body, { "Idempotency-Key": "k-3" })
    expect(real.json.sandbox).toBe(false)
    const sandboxAgain = await send(body, { "Idempotency-Key": "k-3", "X-Herald-Test": "1" })
    expect(sandboxAgain.json.sandbox).toBe(true)
    expect(sandboxAgain.json.items[0].message_id).not.toBe(real.json.items[0].message_id)
  })
})
