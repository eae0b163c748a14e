/**
 * The operator's platform lists over HTTP: /v1/admin/suppressions (the platform list and each
 * account's own) and /v1/admin/blocked-domains — listing with the REST conventions' paging,
 * adding (409 for what exists), deleting (404 for what does not), validation, admin-only access,
 * and what an entry does to a send through the API of the running appliance.
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
  alice = await newSender(app, dns)
  bob = await newSender(app, dns)
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

/** The status of the single item of a send from `sender` to `to`. */
const sendStatus = async (sender: Sender, to: string): Promise<string> => {
  const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to) })
  expect(res.status, res.text).toBe(202)
  return res.json.items[0].status
}

const expectRefusal = (res: { status: number; json: { error: { code: string; param?: string } } }, status: number, code: string, param?: string) => {
  expect(res.status, JSON.stringify(res.json)).toBe(status)
  expect(res.json.error.code).toBe(code)
  if (param !== undefined) expect(res.json.error.param).toBe(param)
}

describe("admin suppressions over HTTP", () => {
  it("a platform suppression makes every account's send to the address suppressed, until it is deleted", async () => {
    expect(await sendStatus(alice, "shared@example.org")).toBe("queued")

    const added = await app.request("POST", "/v1/admin/suppressions", {
      body: { email: "Shared@Example.org", scope: "platform", reason: "complaint" }
    })
    expect(added.status, added.text).toBe(201)
    expect(added.json).toEqual({
      email: "shared@example.org",
      scope: "platform",
      account_id: null,
      reason: "complaint",
      source: expect.stringMatching(/^admin:/),
      created_at: expect.any(String)
    })
    expect(await sendStatus(alice, "shared@example.org")).toBe("suppressed")
    expect(await sendStatus(bob, "SHARED@example.org")).toBe("suppressed")

    const listed = await app.request("GET", "/v1/admin/suppressions?scope=platform&email=shared@")
    expect(listed.status).toBe(200)
    expect(listed.json).toEqual({ total: 1, limit: 50, offset: 0, items: [added.json] })

    const removed = await app.request("DELETE", "/v1/admin/suppressions/Shared%40Example.org?scope=platform")
    expect(removed.status, removed.text).toBe(200)
    expect(removed.json).toEqual({ email: "shared@example.org", deleted: true })
    expect(await sendStatus(alice, "shared@example.org")).toBe("queued")
    expectRefusal(await app.request("DELETE", "/v1/admin/suppressions/shared@example.org?scope=platform"), 404, "not_found")
  })

  it("an account suppression lands on that account's own list and suppresses only its sends", async () => {
    const added = await app.request("POST", "/v1/admin/suppressions", {
      body: { email: "only-alice@example.org", scope: "account", account_id: alice.accountId }
    })
    expect(added.status, added.text).toBe(201)
    expect(added.json).toMatchObject({ email: "only-alice@example.org", scope: "account", account_id: alice.accountId, reason: "manual" })
    expect(await sendStatus(alice, "only-alice@example.org")).toBe("suppressed")
    expect(await sendStatus(bob, "only-alice@example.org")).toBe("queued")

    // The same list the account sees, and not the platform's or another account's.
    const own = await app.request("GET", "/v1/client/suppressions", { token: alice.token })
    expect(own.json.items).toEqual([expect.objectContaining({ email: "only-alice@example.org", reason: "manual" })])
    const listed = await app.request("GET", `/v1/admin/suppressions?scope=account&account_id=${alice.accountId}`)
    expect(listed.json).toMatchObject({ total: 1, items: [added.json] })
    expect((await app.request("GET", `/v1/admin/suppressions?scope=account&account_id=${bob.accountId}`)).json.total).toBe(0)
    expect((await app.request("GET", "/v1/admin/suppressions?scope=platform&email=only-alice")).json.total).toBe(0)

    // Deleting names the list: the platform's has no such entry.
    expectRefusal(await app.request("DELETE", "/v1/admin/suppressions/only-alice@example.org?scope=platform"), 404, "not_found")
    const removed = await app.request("DELETE", `/v1/admin/suppressions/only-alice@example.org?scope=account&account_id=${alice.accountId}`)
    expect(removed.json).toEqual({ email: "only-alice@example.org", deleted: true })
    expect(await sendStatus(alice, "only-alice@example.org")).toBe("queued")
  })

  it("refuses to add an address already on that list (409), keeping the first entry", async () => {
    const body = { email: "twice@example.org", scope: "platform", reason: "bounce" }
    expect((await app.request("POST", "/v1/admin/suppressions", { body })).status).toBe(201)
    expectRefusal(await app.request("POST", "/v1/admin/suppressions", { body: { ...body, email: "TWICE@example.org", reason: "manual" } }), 409, "conflict")
    const listed = await app.request("GET", "/v1/admin/suppressions?scope=platform&email=twice@")
    expect(listed.json.items).toEqual([expect.objectContaining({ email: "twice@example.org", reason: "bounce" })])
    // Another list may hold the same address.
    const forBob = await app.request("POST", "/v1/admin/suppressions", { body: { ...body, scope: "account", account_id: bob.accountId } })
    expect(forBob.status).toBe(201)
  })

  it("pages a list newest first with its total", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await app.request("POST", "/v1/admin/suppressions", { body: { email: `paged-${i}@example.net`, scope: "platform" } })
      expect(res.status).toBe(201)
    }
    const first = await app.request("GET", "/v1/admin/suppressions?scope=platform&email=paged-&limit=2")
    expect(first.json).toMatchObject({ total: 5, limit: 2, offset: 0 })
    expect(first.json.items.map((s: { email: string }) => s.email)).toEqual(["paged-4@example.net", "paged-3@example.net"])
    const last = await app.request("GET", "/v1/admin/suppressions?scope=platform&email=paged-&limit=2&offset=4")
    expect(last.json).toMatchObject({ total: 5, limit: 2, offset: 4 })
    expect(last.json.items.map((s: { email: string }) => s.email)).toEqual(["paged-0@example.net"])
  })

  it("refuses bad parameters with validation_failed naming them", async () => {
    const list = (query: string) => app.request("GET", `/v1/admin/suppressions?${query}`)
    expectRefusal(await list("scope=platform&limit=0"), 400, "validation_failed", "limit")
    expectRefusal(await list("scope=platform&limit=201"), 400, "validation_failed", "limit")
    expectRefusal(await list("scope=platform&offset=-1"), 400, "validation_failed", "offset")
    expectRefusal(await list(""), 400, "validation_failed", "scope")
    expectRefusal(await list("scope=everyone"), 400, "validation_failed", "scope")
    expectRefusal(await list("scope=account"), 400, "validation_failed", "account_id")
    expectRefusal(await list(`scope=platform&account_id=${alice.accountId}`), 400, "validation_failed", "account_id")

    const add = (body: unknown) => app.request("POST", "/v1/admin/suppressions", { body })
    expectRefusal(await add({ email: "not-an-address", scope: "platform" }), 400, "validation_failed", "email")
    expectRefusal(await add({ email: "x@example.org", scope: "platform", reason: "because" }), 400, "validation_failed", "reason")
    expectRefusal(await add({ email: "x@example.org" }), 400, "validation_failed", "scope")
    expectRefusal(await add({ email: "x@example.org", scope: "account" }), 400, "validation_failed", "account_id")
    expectRefusal(await app.request("DELETE", "/v1/admin/suppressions/x@example.org?scope=account"), 400, "validation_failed", "account_id")
    expect((await app.request("GET", "/v1/admin/suppressions?scope=platform&email=x@example.org")).json.total).toBe(0)
  })

  it("answers 404 naming an unknown account", async () => {
    const answers = [
      await app.request("GET", "/v1/admin/suppressions?scope=account&account_id=acc_missing"),
      await app.request("POST", "/v1/admin/suppressions", { body: { email: "x@example.org", scope: "account", account_id: "acc_missing" } }),
      await app.request("DELETE", "/v1/admin/suppressions/x@example.org?scope=account&account_id=acc_missing")
    ]
    for (const res of answers) {
      expectRefusal(res, 404, "not_found")
      expect(res.json.error.message).toContain("acc_missing")
    }
  })

  it("takes an address with a percent sign in the path as it is, on the admin and the client side", async () => {
    // `%` is a valid character of a local part: the path segment is decoded once, by the router.
    const email = "100%real@example.org"
    expect((await app.request("POST", "/v1/admin/suppressions", { body: { email, scope: "platform" } })).status).toBe(201)
    const removed = await app.request("DELETE", `/v1/admin/suppressions/${encodeURIComponent(email)}?scope=platform`)
    expect(removed.json).toEqual({ email, deleted: true })

    expect((await app.request("POST", "/v1/client/suppressions", { token: alice.token, body: { email } })).status).toBe(201)
    const own = await app.request("DELETE", `/v1/client/suppressions/${encodeURIComponent(email)}`, { token: alice.token })
    expect(own.status, own.text).toBe(200)
    expect(own.json).toEqual({ email, deleted: true })
  })
})

describe("admin blocked domains over HTTP", () => {
  it("a blocked domain makes sends to it rejected, until it is deleted", async () => {
    expect(await sendStatus(alice, "someone@shunned.example")).toBe("queued")

    const added = await app.request("POST", "/v1/admin/blocked-domains", { body: { domain: "Shunned.Example.", reason: "abuse reports" } })
    expect(added.status, added.text).toBe(201)
    expect(added.json).toEqual({ domain: "shunned.example", reason: "abuse reports", created_at: expect.any(String) })
    expect(await sendStatus(alice, "someone@shunned.example")).toBe("rejected")
    expect(await sendStatus(bob, "other@SHUNNED.example")).toBe("rejected")
    expect(await sendStatus(alice, "someone@mail.shunned.example")).toBe("queued")

    const listed = await app.request("GET", "/v1/admin/blocked-domains?domain=shunned")
    expect(listed.json).toEqual({ total: 1, limit: 50, offset: 0, items: [added.json] })

    const removed = await app.request("DELETE", "/v1/admin/blocked-domains/Shunned.Example")
    expect(removed.status, removed.text).toBe(200)
    expect(removed.json).toEqual({ domain: "shunned.example", deleted: true })
    expect(await sendStatus(alice, "someone@shunned.example")).toBe("queued")
    expectRefusal(await app.request("DELETE", "/v1/admin/blocked-domains/shunned.example"), 404, "not_found")
  })

  it("refuses a domain already blocked (409) and records the default reason", async () => {
    const added = await app.request("POST", "/v1/admin/blocked-domains", { body: { domain: "again.example" } })
    expect(added.json).toMatchObject({ domain: "again.example", reason: "blocked by the operator" })
    expectRefusal(await app.request("POST", "/v1/admin/blocked-domains", { body: { domain: "AGAIN.example", reason: "other" } }), 409, "conflict")
    expect((await app.request("GET", "/v1/admin/blocked-domains?domain=again")).json.items).toEqual([added.json])
  })

  it("pages the list in name order with its total", async () => {
    for (const name of ["c", "a", "e", "b", "d"]) {
      expect((await app.request("POST", "/v1/admin/blocked-domains", { body: { domain: `${name}.paged.example` } })).status).toBe(201)
    }
    const page = await app.request("GET", "/v1/admin/blocked-domains?domain=.paged.&limit=2&offset=1")
    expect(page.json).toMatchObject({ total: 5, limit: 2, offset: 1 })
    expect(page.json.items.map((d: { domain: string }) => d.domain)).toEqual(["b.paged.example", "c.paged.example"])
    const all = await app.request("GET", "/v1/admin/blocked-domains")
    expect(all.json.total).toBeGreaterThanOrEqual(6)
    expect(all.json.items.length).toBe(all.json.total)
  })

  it("refuses bad parameters with validation_failed naming them", async () => {
    expectRefusal(await app.request("GET", "/v1/admin/blocked-domains?limit=500"), 400, "validation_failed", "limit")
    expectRefusal(await app.request("GET", "/v1/admin/blocked-domains?offset=x"), 400, "validation_failed", "offset")
    const add = (body: unknown) => app.request("POST", "/v1/admin/blocked-domains", { body })
    expectRefusal(await add({ domain: "not a domain" }), 400, "validation_failed", "domain")
    expectRefusal(await add({ domain: "localhost" }), 400, "validation_failed", "domain")
    expectRefusal(await add({ domain: "ok.example", reason: "" }), 400, "validation_failed", "reason")
    expect((await app.request("GET", "/v1/admin/blocked-domains?domain=ok.example")).json.total).toBe(0)
  })
})

describe("admin only", () => {
  it("answers 403 to an account's own key on every route, before reading the body", async () => {
    const asAlice = (method: string, route: string, body?: unknown) =>
      app.request(method, route, { token: alice.token, ...(body === undefined ? {} : { body }) })
    const calls = [
      await asAlice("GET", "/v1/admin/suppressions?scope=platform"),
      await asAlice("POST", "/v1/admin/suppressions", { email: "mine@example.org", scope: "platform" }),
      await asAlice("POST", "/v1/admin/suppressions", { email: "not-an-address" }),
      await asAlice("DELETE", "/v1/admin/suppressions/mine@example.org?scope=platform"),
      await asAlice("GET", "/v1/admin/blocked-domains"),
      await asAlice("POST", "/v1/admin/blocked-domains", { domain: "theirs.example" }),
      await asAlice("DELETE", "/v1/admin/blocked-domains/theirs.example")
    ]
    for (const res of calls) expectRefusal(res, 403, "forbidden")
    expect((await app.request("GET", "/v1/admin/suppressions?scope=platform&email=mine@")).json.total).toBe(0)
    expect((await app.request("GET", "/v1/admin/blocked-domains?domain=theirs")).json.total).toBe(0)
    expect((await app.request("GET", "/v1/admin/blocked-domains", { token: null })).status).toBe(401)
  })
})
