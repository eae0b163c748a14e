/**
 * What one key's request bodies may cost the appliance (issue #22, items 1 and 9), each attack
 * scaled down to stay fast: JSON nested without bound, an ignored field of countless `{}`, a send
 * with more recipients than a request may carry, a large body to a route that needs 1 MB at most,
 * and slow uploads from one key that used to hold the whole body budget while another account's
 * send waited. Each gets its envelope and changes nothing; the appliance keeps serving.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

const MB = 1024 * 1024
const GRACE_S = 3

let app: Appliance
let dns: DnsServer
let sender: Sender
let other: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({
    env: {
      HERALD_DNS_SERVERS: dns.address,
      MAX_JSON_MB: "2",
      HERALD_HTTP_BODY_BUDGET_MB: "4",
      HERALD_HTTP_BODY_KEY_SHARE_PERCENT: "50",
      HERALD_HTTP_UPLOAD_GRACE_S: String(GRACE_S),
      HERALD_HTTP_MIN_UPLOAD_KBPS: "64",
      HERALD_MAX_REQUEST_RECIPIENTS: "50"
    }
  })
  sender = await newSender(app, dns, { packageId: "growth" })
  other = await newSender(app, dns, { packageId: "growth" })
}, 60_000)
afterAll(async () => {
  await app.stop()
  await dns.close()
})

const send = (who: Sender, options: { body?: unknown; rawBody?: string; headers?: Record<string, string> }) =>
  app.request("POST", "/v1/mail/send", { token: who.token, ...options })

const messagesTo = async (recipient: string) =>
  (await query<{ n: number }>(app.databaseUrl, "SELECT count(*)::int AS n FROM deliveries WHERE recipient = $1", [recipient]))[0]!.n

/** A valid send body whose ignored field `extra` holds `filler` (raw JSON text). */
const sendWithFiller = (to: string, filler: string) => {
  const body = JSON.stringify(sendBody(sender, to))
  return `${body.slice(0, -1)},"extra":${filler}}`
}

describe("JSON parsed within bounds", () => {
  it("refuses 100,000 levels of nested arrays in an ignored field of a send with 400 json_too_complex", async () => {
    const res = await send(sender, { rawBody: sendWithFiller("deep@example.org", "[".repeat(100_000) + "]".repeat(100_000)) })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "json_too_complex" })
    expect(res.json.error.message).toContain("deeper than 64 levels")
    expect(await messagesTo("deep@example.org")).toBe(0)
  })

  it("refuses 300,000 empty objects in an ignored field of a send with 400 json_too_complex", async () => {
    const res = await send(sender, { rawBody: sendWithFiller("many@example.org", `[${"{},".repeat(300_000)}{}]`) })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "json_too_complex" })
    expect(res.json.error.message).toMatch(/more than \d+ JSON values/)
    expect(await messagesTo("many@example.org")).toBe(0)
  })

  it("applies the same bounds to the other routes: suppressions and tickets", async () => {
    const many = await app.request("POST", "/v1/client/suppressions", {
      token: sender.token,
      rawBody: `{"email":"bounded@example.org","extra":[${"{},".repeat(300_000)}{}]}`
    })
    expect(many.status).toBe(400)
    expect(many.json.error).toMatchObject({ type: "invalid_request_error", code: "json_too_complex" })
    const deep = await app.request("POST", "/v1/tickets", {
      token: sender.token,
      rawBody: `{"subject":"s","body":"b","extra":${"[".repeat(100_000)}${"]".repeat(100_000)}}`
    })
    expect(deep.status).toBe(400)
    expect(deep.json.error.code).toBe("json_too_complex")
    const listed = await app.request("GET", "/v1/client/suppressions?email=bounded@example.org", { token: sender.token })
    expect(listed.json.items).toEqual([])
    // A body within the bounds is served as before.
    const added = await app.request("POST", "/v1/client/suppressions", { token: sender.token, body: { email: "bounded@example.org" } })
    expect(added.status).toBe(201)
  })
})

describe("recipients per request (HERALD_MAX_REQUEST_RECIPIENTS = 50)", () => {
  const personalizations = (count: number, each: number, tag: string) =>
    Array.from({ length: count }, (_, p) => ({
      to: Array.from({ length: each }, (_, r) => ({ email: `${tag}-${p}-${r}@example.org` }))
    }))

  it.each([["a real send", {}], ["a sandbox send", { "x-herald-test": "true" }]])(
    "refuses %s whose personalizations hold 51 recipients in all with 400 validation_failed",
    async (_, headers) => {
      const body = sendBody(sender, "unused@example.org", { personalizations: [...personalizations(5, 10, "cap"), { to: [{ email: "cap-last@example.org" }] }] })
      const res = await send(sender, { body, headers })
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param: "personalizations" })
      expect(res.json.error.message).toContain("51 recipients")
      expect(await messagesTo("cap-0-0@example.org")).toBe(0)
    }
  )

  it("counts cc and bcc too, and accepts exactly 50", async () => {
    const over = sendBody(sender, "unused@example.org", {
      personalizations: [{ to: [{ email: "cc-to@example.org" }], cc: personalizations(1, 25, "cc")[0]!.to, bcc: personalizations(1, 25, "bcc")[0]!.to }]
    })
    expect((await send(sender, { body: over })).json.error).toMatchObject({ code: "validation_failed", param: "personalizations" })
    const exactly = sendBody(sender, "unused@example.org", { personalizations: personalizations(5, 10, "fifty") })
    expect((await send(sender, { body: exactly })).status).toBe(202)
  })
})

describe("body limits per route", () => {
  it("refuses a 2 MB body to POST /v1/tickets with 413 naming HERALD_HTTP_MAX_BODY_KB, while the send takes 1.5 MB", async () => {
    const res = await app.request("POST", "/v1/tickets", { token: sender.token, body: { subject: "big", body: "x".repeat(2 * MB) } })
    expect(res.status).toBe(413)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "payload_too_large" })
    expect(res.json.error.message).toContain("HERALD_HTTP_MAX_BODY_KB")
    const bigSend = await send(sender, { body: sendBody(sender, "big-send@example.org", { content: [{ type: "text/plain", value: "y".repeat(1.5 * MB) }] }) })
    expect(bigSend.status).toBe(202)
  })
})

interface SlowUpload {
  readonly answer: Promise<{ status: number; text: string; closed: boolean }>
  readonly destroy: () => void
}

/** A send announcing `bytes` whose client writes the first 1 KB and then nothing. */
const slowUpload = (token: string, bytes: number): SlowUpload => {
  const socket = net.connect(Number(new URL(app.baseUrl).port), "127.0.0.1")
  socket.write(
    `POST /v1/mail/send HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n` + "{".padEnd(1024, " ")
  )
  const answer = new Promise<{ status: number; text: string; closed: boolean }>((resolve) => {
    let text = ""
    socket.on("data", (chunk) => (text += chunk.toString()))
    socket.on("error", () => undefined)
    socket.on("close", () => resolve({ status: Number(text.split(" ")[1] ?? 0), text, closed: true }))
  })
  return { answer, destroy: () => socket.destroy() }
}

describe("slow uploads", () => {
  it("lets one key hold at most its share of the body budget, and drops uploads slower than the minimum rate", async () => {
    // Three 1.5 MB uploads from one key: each takes 1.5 MB of the 4 MB budget, but the key may hold 2 MB.
    const uploads = [1, 2, 3].map(() => slowUpload(sender.token, Math.round(1.5 * MB)))
    try {
      await new Promise((resolve) => setTimeout(resolve, 300))
      const started = Date.now()
      const res = await send(other, {
        body: sendBody(other, "not-kept-waiting@example.org", { content: [{ type: "text/plain", value: "z".repeat(1.2 * MB) }] })
      })
      const waited = Date.now() - started
      expect(res.status).toBe(202)
      // Well before the slow uploads are dropped (GRACE_S): it did not wait for them.
      expect(waited).toBeLessThan((GRACE_S - 1) * 1000)
      // The one that got its turn is dropped after the grace period, with the envelope, and its
      // connection closed; the others, waiting behind it, are dropped in turn.
      const answers = await Promise.all(uploads.map((u) => u.answer))
      for (const answer of answers) {
        expect(answer.status).toBe(408)
        expect(answer.text).toContain("\"code\":\"upload_too_slow\"")
        expect(answer.closed).toBe(true)
      }
    } finally {
      for (const upload of uploads) upload.destroy()
    }
    // The appliance still serves the slow key.
    expect((await send(sender, { body: sendBody(sender, "after-slow@example.org") })).status).toBe(202)
  }, 30_000)
})
