/**
 * Size limits of POST /v1/mail/send with small configured limits (MB = 2^20 bytes): the total of
 * the attachments (MAX_TOTAL_ATTACHMENTS_MB, decoded bytes) and the raw body (MAX_JSON_MB,
 * refused before parsing). Neither leaves a row behind. And the budget of large bodies handled at
 * once (HERALD_HTTP_BODY_BUDGET_MB): sends that each take all of it wait their turn, none is lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

const MB = 1024 * 1024

let app: Appliance
let dns: DnsServer
let sender: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({
    env: { HERALD_DNS_SERVERS: dns.address, MAX_JSON_MB: "2", MAX_TOTAL_ATTACHMENTS_MB: "1", MAX_ATTACHMENT_MB: "1", HERALD_HTTP_BODY_BUDGET_MB: "2" }
  })
  sender = await newSender(app, dns, { packageId: "growth" })
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

const send = (options: { body?: unknown; rawBody?: string }) => app.request("POST", "/v1/mail/send", { token: sender.token, ...options })

const messagesTo = async (recipient: string) =>
  (await query<{ n: number }>(app.databaseUrl, "SELECT count(*)::int AS n FROM deliveries WHERE recipient = $1", [recipient]))[0]!.n

const file = (name: string, bytes: number) => ({ content: Buffer.alloc(bytes, 7).toString("base64"), filename: name })

describe("attachment and body size limits", () => {
  it("refuses attachments whose decoded total passes MAX_TOTAL_ATTACHMENTS_MB with 413 and param attachments", async () => {
    const sixTenths = Math.round(0.6 * MB)
    const res = await send({ body: sendBody(sender, "total@example.org", { attachments: [file("a.bin", sixTenths), file("b.bin", sixTenths)] }) })
    expect(res.status).toBe(413)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "payload_too_large", param: "attachments" })
    expect(res.json.error.message).toContain("MAX_TOTAL_ATTACHMENTS_MB")
    expect(await messagesTo("total@example.org")).toBe(0)
    // Each file alone is within both limits.
    const one = await send({ body: sendBody(sender, "total@example.org", { attachments: [file("a.bin", sixTenths)] }) })
    expect(one.status).toBe(202)
  })

  it("refuses a raw body over MAX_JSON_MB before parsing it, with 413 payload_too_large and no param", async () => {
    const huge = sendBody(sender, "huge@example.org", { content: [{ type: "text/plain", value: "x".repeat(2 * MB + 1) }] })
    const res = await send({ body: huge })
    expect(res.status).toBe(413)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "payload_too_large" })
    expect(res.json.error.param).toBeUndefined()
    expect(await messagesTo("huge@example.org")).toBe(0)
    // Not even JSON: refused for its size, not its syntax.
    const garbage = await send({ rawBody: "{" + " ".repeat(2 * MB + 1) })
    expect(garbage.status).toBe(413)
    expect(garbage.json.error.code).toBe("payload_too_large")
  })

  it("handles large sends that each take the whole body budget one after another, every one accepted", async () => {
    // ~1.2 MB bodies: each takes 2 MB of the 2 MB budget, so they are handled one at a time.
    for (const round of [1, 2]) {
      const recipients = [1, 2, 3, 4, 5].map((i) => `budget${round}-${i}@example.org`)
      const answers = await Promise.all(recipients.map((to) => send({ body: sendBody(sender, to, { attachments: [file("c.bin", Math.round(0.9 * MB))] }) })))
      expect(answers.map((res) => res.status)).toEqual([202, 202, 202, 202, 202])
      for (const to of recipients) expect(await messagesTo(to)).toBe(1)
    }
  })
})
