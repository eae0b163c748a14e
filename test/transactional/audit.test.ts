/** GET /v1/mail/audit: one item per recipient delivery, filters, ordering, CSV, and who sees what. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { seedDeliveries, seededRecipient, seededReply, seededState, seededSubject } from "../support/audit-seed.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
let sender: Sender
let other: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address } })
  sender = await newSender(app, dns, { packageId: "growth" })
  other = await newSender(app, dns, { packageId: "growth" })
  for (const [to, subject] of [["alpha@example.org", "Invoice 1"], ["beta@example.org", "Welcome"], ["gamma@example.org", "Invoice 2"]]) {
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to!, { subject }) })
    expect(res.status).toBe(202)
  }
  await app.request("POST", "/v1/mail/send", { token: other.token, body: sendBody(other, "other@example.org") })
  // Outcomes as the MTA writes them: one sent, one failed (bounced); the third stays queued.
  await query(app.databaseUrl, "UPDATE deliveries SET state = 'sent', last_code = 250, last_reply = '250 2.0.0 OK' WHERE recipient = 'alpha@example.org'")
  await query(app.databaseUrl, "UPDATE deliveries SET state = 'bounced', last_code = 550, last_status = '5.1.1', last_reply = '550 5.1.1 no such user' WHERE recipient = 'beta@example.org'")
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

const audit = (params: string, token = sender.token) => app.request("GET", `/v1/mail/audit${params}`, { token })

describe("GET /v1/mail/audit", () => {
  it("lists the account's deliveries newest first with the spec's event vocabulary", async () => {
    const res = await audit("")
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ total: 3, limit: 100, offset: 0 })
    expect(res.json.items.map((i: { recipient: string }) => i.recipient)).toEqual(["gamma@example.org", "beta@example.org", "alpha@example.org"])
    const beta = res.json.items[1]
    expect(beta).toMatchObject({ event: "failed", subject: "Welcome", smtp_code: 550, smtp_reply: "550 5.1.1 no such user", app: sender.keyId })
    expect(beta.message_id).toMatch(/^msg_/)
    expect(beta.request_id).toMatch(/^req_/)
  })

  it("filters by one event or a comma-separated list, and refuses unknown events", async () => {
    expect((await audit("?event=sent")).json.items.map((i: { recipient: string }) => i.recipient)).toEqual(["alpha@example.org"])
    expect((await audit("?event=queued,failed")).json.total).toBe(2)
    const bad = await audit("?event=sent,opened")
    expect(bad.status).toBe(400)
    expect(bad.json.error.param).toBe("event")
  })

  it("searches recipient or subject without regard to case", async () => {
    expect((await audit("?search=INVOICE")).json.total).toBe(2)
    expect((await audit("?search=BETA@")).json.items[0].recipient).toBe("beta@example.org")
  })

  it("pages with limit and offset and sorts ascending on request", async () => {
    const page = await audit("?limit=1&offset=1&sort_by=ts&sort_dir=asc")
    expect(page.json).toMatchObject({ total: 3, limit: 1, offset: 1 })
    expect(page.json.items.map((i: { recipient: string }) => i.recipient)).toEqual(["beta@example.org"])
  })

  it("takes from and to as inclusive bounds", async () => {
    const all = (await audit("?sort_dir=asc")).json.items
    const first = all[0].ts
    const res = await audit(`?from=${encodeURIComponent(first)}&to=${encodeURIComponent(first)}`)
    expect(res.json.items.map((i: { ts: string }) => i.ts)).toContain(first)
    expect((await audit(`?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).json.total).toBe(0)
  })

  it.each([
    ["from", "yesterday"],
    ["from", "2026-13-45T00:00:00Z"],
    ["to", "not a date"],
    ["from", "+275760-09-13T00:00:00.000Z"],
    ["to", "-000001-01-01T00:00:00Z"]
  ])("refuses %s=%s with 400 naming the parameter", async (param, value) => {
    const res = await audit(`?${param}=${encodeURIComponent(value)}`)
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param })
  })

  it.each([
    ["search", "a\u0000b"],
    ["client_id", "acct\u0000"],
    ["app", "key\u0000"]
  ])("refuses NUL in %s with 400 naming it, as JSON and as CSV", async (param, value) => {
    for (const format of ["json", "csv"]) {
      const res = await app.request("GET", `/v1/mail/audit?format=${format}&${param}=${encodeURIComponent(value)}`)
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ code: "validation_failed", param })
    }
  })

  it("exports every filtered row as text/csv, ignoring limit and offset", async () => {
    const res = await audit("?format=csv&limit=1&event=sent,failed")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/csv")
    const lines = res.text.trim().split("\r\n")
    expect(lines[0]).toContain("recipient")
    expect(lines).toHaveLength(3)
  })

  it("narrows to one key with app, and never shows another account's deliveries", async () => {
    expect((await audit(`?app=${sender.keyId}`)).json.total).toBe(3)
    expect((await audit(`?app=${other.keyId}`)).json.total).toBe(0)
    expect((await audit("", other.token)).json.items.map((i: { recipient: string }) => i.recipient)).toEqual(["other@example.org"])
  })

  it("allows client_id to admins only, expanding it to that client's keys", async () => {
    const refused = await audit(`?client_id=${other.accountId}`)
    expect(refused.status).toBe(403)
    const admin = await app.request("GET", `/v1/mail/audit?client_id=${other.accountId}`)
    expect(admin.json.total).toBe(1)
  })
})

describe("GET /v1/mail/audit?format=csv", () => {
  const COUNT = 2_500
  const BASE = new Date("2024-01-01T00:00:00.000Z")
  const TAG = "bulk"
  let bulk: Sender
  const at = (i: number) => new Date(BASE.getTime() + i * 1000).toISOString()
  const eventOf = (i: number) => ({ queued: "queued", deferred: "queued", sent: "sent", bounced: "failed", failed: "failed" })[seededState(i)]
  /** Row i's CSV line as the export must write it (columns and quoting of the spec's CSV). */
  const line = (i: number) => {
    const reply = seededReply(i)
    return [
      at(i), eventOf(i), seededRecipient(i), seededSubject(i), "hello@seed.example", `msg_${TAG}${i}`, `req_${TAG}${i}`,
      bulk.keyId, i % 5 === 0 ? "0" : "1", reply === null ? "" : "550", reply === null ? "" : "5.1.1",
      reply === null ? "" : `"'${reply.replaceAll("\"", "\"\"")}"`, at(i)
    ].join(",")
  }
  const csv = async (params: string) => {
    const res = await audit(`?format=csv${params}`, bulk.token)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/csv")
    expect(res.text.endsWith("\r\n")).toBe(true)
    const [header, ...rows] = res.text.slice(0, -2).split("\r\n")
    expect(header).toBe("ts,event,recipient,subject,from,message_id,request_id,app,attempts,smtp_code,smtp_status,smtp_reply,updated_at")
    return { res, rows }
  }

  beforeAll(async () => {
    bulk = await newSender(app, dns, { packageId: "growth" })
    await seedDeliveries(app.databaseUrl, { accountId: bulk.accountId, keyId: bulk.keyId, count: COUNT, tag: TAG, base: BASE })
  })

  it("streams every row of a large account in order, across many cursor batches", async () => {
    const { res, rows } = await csv("")
    // Streamed (chunked), not one string built and sized up front.
    expect(res.headers.get("content-length")).toBeNull()
    expect(rows).toHaveLength(COUNT)
    expect(rows).toEqual(Array.from({ length: COUNT }, (_, k) => line(COUNT - 1 - k)))
  })

  it("applies every filter and the sort, ignoring limit and offset", async () => {
    const params = `&event=sent,failed&search=INVOICE&from=${at(100)}&to=${at(2_399)}` +
      "&sort_by=recipient&sort_dir=asc&limit=1&offset=5"
    const { rows } = await csv(params)
    const expected = Array.from({ length: COUNT }, (_, i) => i)
      .filter((i) => i >= 100 && i <= 2_399 && i % 2 === 0 && ["sent", "bounced", "failed"].includes(seededState(i)))
    expect(expected.length).toBeGreaterThan(600)
    expect(rows).toEqual(expected.map(line))
    const json = await audit(`?${params.slice(1)}`, bulk.token)
    expect(json.json.total).toBe(expected.length)
  })

  it("writes a planted formula (diagnostic or subject) as text, prefixed with a quote", async () => {
    const { rows } = await csv("&event=failed&sort_dir=asc")
    const bounced = rows.find((r) => r.includes(seededRecipient(3)))
    expect(bounced).toContain(`"'=HYPERLINK(""http://evil.test/3"")"`)
    const planter = await newSender(app, dns, { packageId: "growth" })
    const subject = "=cmd|' /C calc'!A0"
    const sent = await app.request("POST", "/v1/mail/send", { token: planter.token, body: sendBody(planter, "victim@example.org", { subject }) })
    expect(sent.status).toBe(202)
    const res = await audit("?format=csv", planter.token)
    const [, row] = res.text.split("\r\n")
    expect(row!.split(",")[3]).toBe(`'${subject}`)
  })
})
