/**
 * Every field rule of the send request, over HTTP: each bad body gets 400, names the field in
 * `param`, carries the spec's top-level `message`, and leaves no row behind.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Appliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type Sender, type SendingApp, startSendingApp } from "../support/sending.ts"

let app: Appliance
let sender: Sender
let setup: SendingApp

beforeAll(async () => {
  setup = await startSendingApp()
  ;({ app, sender } = setup)
})
afterAll(() => setup.stop())

const valid = () => ({
  personalizations: [{ to: [{ email: "rcpt@example.org", name: "R" }] }],
  from: { email: sender.from },
  subject: "Subject",
  content: [{ type: "text/plain", value: "Body" }]
})

type Mutate = (body: Record<string, any>) => void

const manyHeaders = (n: number, value: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-Custom-${i}`, value]))

const cases: ReadonlyArray<[string, Mutate, string]> = [
  ["personalizations missing", (b) => delete b.personalizations, "personalizations"],
  ["personalizations empty", (b) => (b.personalizations = []), "personalizations"],
  ["1001 personalizations", (b) => (b.personalizations = Array.from({ length: 1001 }, () => ({ to: [{ email: "a@b.org" }] }))), "personalizations"],
  ["personalization without to", (b) => delete b.personalizations[0].to, "personalizations[0].to"],
  ["personalization with empty to", (b) => (b.personalizations[0].to = []), "personalizations[0].to"],
  ["bad email in to", (b) => (b.personalizations[0].to[0].email = "not-an-address"), "personalizations[0].to[0].email"],
  ["to email missing", (b) => (b.personalizations[0].to = [{ name: "x" }]), "personalizations[0].to[0].email"],
  ["bad email in cc", (b) => (b.personalizations[0].cc = [{ email: "a@@b.org" }]), "personalizations[0].cc[0].email"],
  ["bad email in bcc", (b) => (b.personalizations[0].bcc = [{ email: "a b@c.org" }]), "personalizations[0].bcc[0].email"],
  ["empty personalization subject", (b) => (b.personalizations[0].subject = ""), "personalizations[0].subject"],
  ["personalization header with a line break", (b) => (b.personalizations[0].headers = { "X-A": "1\r\nBcc: x@y.org" }), "personalizations[0].headers.X-A"],
  ["from missing", (b) => delete b.from, "from"],
  ["bad from email", (b) => (b.from = { email: "nobody" }), "from.email"],
  ["subject missing", (b) => delete b.subject, "subject"],
  ["empty subject", (b) => (b.subject = ""), "subject"],
  ["content missing", (b) => delete b.content, "content"],
  ["content empty", (b) => (b.content = []), "content"],
  ["content type not allowed", (b) => (b.content = [{ type: "text/markdown", value: "x" }]), "content[0].type"],
  ["content value missing", (b) => (b.content = [{ type: "text/plain" }]), "content[0].value"],
  ["bad reply_to email", (b) => (b.reply_to = { email: "x" }), "reply_to.email"],
  ["reply_to without email", (b) => (b.reply_to = { name: "x" }), "reply_to.email"],
  ["header name with a colon", (b) => (b.headers = { "X:Y": "1" }), "headers"],
  ["reserved header", (b) => (b.headers = { From: "x@y.org" }), "headers"],
  ["attachment without content", (b) => (b.attachments = [{ filename: "a.txt" }]), "attachments[0].content"],
  ["attachment with empty content", (b) => (b.attachments = [{ content: "", filename: "a.txt" }]), "attachments[0].content"],
  ["attachment not base64", (b) => (b.attachments = [{ content: "!!!", filename: "a.txt" }]), "attachments[0].content"],
  ["attachment without filename", (b) => (b.attachments = [{ content: "aGk=" }]), "attachments[0].filename"],
  ["attachment with empty filename", (b) => (b.attachments = [{ content: "aGk=", filename: "" }]), "attachments[0].filename"],
  ["attachment with a bad MIME type", (b) => (b.attachments = [{ content: "aGk=", filename: "a", type: "pdf" }]), "attachments[0].type"],
  ["send_at not a date", (b) => (b.send_at = "tomorrow"), "send_at"],
  ["send_at more than 90 days ahead", (b) => (b.send_at = new Date(Date.now() + 91 * 86_400_000).toISOString()), "send_at"],
  ["send_at in the past", (b) => (b.send_at = new Date(Date.now() - 3_600_000).toISOString()), "send_at"],
  ["send_at with two personalizations", (b) => {
    b.send_at = new Date(Date.now() + 3_600_000).toISOString()
    b.personalizations.push({ to: [{ email: "other@example.org" }] })
  }, "personalizations"],
  // Issue #22: how much one send may ask of the composer.
  ["101 attachments", (b) => (b.attachments = Array.from({ length: 101 }, () => ({ content: "QQ==", filename: "a" }))), "attachments"],
  ["101 headers", (b) => (b.headers = manyHeaders(101, "1")), "headers"],
  ["101 personalization headers", (b) => (b.personalizations[0].headers = manyHeaders(101, "1")), "personalizations[0].headers"],
  ["headers over 64 KiB in total", (b) => (b.headers = manyHeaders(70, "v".repeat(998))), "headers"],
  ["a header value over 998 characters", (b) => (b.headers = { "X-Long": "v".repeat(999) }), "headers.X-Long"],
  ["a subject over 998 characters", (b) => (b.subject = "s".repeat(999)), "subject"],
  ["a personalization subject over 998 characters", (b) => (b.personalizations[0].subject = "s".repeat(999)), "personalizations[0].subject"],
  // Issue #22: NUL and lone surrogates cannot be stored (jsonb) or sent.
  ["NUL in the subject", (b) => (b.subject = "Hi\u0000there"), "subject"],
  ["a lone surrogate in the subject", (b) => (b.subject = "Hi \uD83D"), "subject"],
  ["NUL in a personalization subject", (b) => (b.personalizations[0].subject = "\u0000"), "personalizations[0].subject"],
  ["a lone surrogate in the content", (b) => (b.content[0].value = "Body \uDE00"), "content[0].value"],
  ["NUL in a recipient name", (b) => (b.personalizations[0].to[0].name = "R\u0000"), "personalizations[0].to[0].name"],
  ["a lone surrogate in the sender name", (b) => (b.from.name = "\uD800Sender"), "from.name"],
  ["NUL in a reply_to name", (b) => (b.reply_to = { email: "r@example.org", name: "\u0000" }), "reply_to.name"],
  ["NUL in a header value", (b) => (b.headers = { "X-A": "a\u0000b" }), "headers.X-A"],
  ["NUL in an attachment filename", (b) => (b.attachments = [{ content: "aGk=", filename: "a\u0000.txt" }]), "attachments[0].filename"],
  ["a lone surrogate in a content_id", (b) => (b.attachments = [{ content: "aGk=", filename: "a", content_id: "\uDC00" }]), "attachments[0].content_id"],
  // Issue #22: the SMTP client refuses < and > in an envelope address, so they never leave.
  ["a quoted local part with < in to", (b) => (b.personalizations[0].to[0].email = "\"a<b\"@example.org"), "personalizations[0].to[0].email"],
  ["a quoted local part with an escaped > in cc", (b) => (b.personalizations[0].cc = [{ email: "\"a\\>b\"@example.org" }]), "personalizations[0].cc[0].email"],
  ["a quoted local part with > in from", (b) => (b.from.email = `"x>"@${sender.from.split("@")[1]}`), "from.email"],
  // Issue #17: unknown fields are refused, as the OpenAPI's additionalProperties: false says.
  ["an unknown top-level field", (b) => (b["reply-to"] = { email: "r@example.org" }), "reply-to"],
  ["an unknown personalization field", (b) => (b.personalizations[0].too = [{ email: "x@example.org" }]), "personalizations[0].too"],
  ["an unknown address field", (b) => (b.personalizations[0].to[0].nmae = "R"), "personalizations[0].to[0].nmae"],
  ["an unknown attachment field", (b) => (b.attachments = [{ content: "aGk=", filename: "a", disposition: "inline" }]), "attachments[0].disposition"],
  ["the flat form's text beside personalizations", (b) => (b.text = "t"), "text"],
  // Issue #17: an address string must be one address.
  ["a from string without an address", (b) => (b.from = "not an email"), "from"],
  ["a from string with a bad address", (b) => (b.from = `Ada <bad@@${sender.from.split("@")[1]}>`), "from"],
  ["two addresses in one to string", (b) => (b.personalizations[0].to = ["a@example.org, b@example.org"]), "personalizations[0].to[0]"],
  ["a group in a cc string", (b) => (b.personalizations[0].cc = ["Team: a@example.org;"]), "personalizations[0].cc[0]"],
  ["NUL in a reply_to string", (b) => (b.reply_to = "R\u0000 <r@example.org>"), "reply_to"],
  ["an address that is a number", (b) => (b.personalizations[0].bcc = [42]), "personalizations[0].bcc[0]"],
  ["send_at as fractional seconds", (b) => (b.send_at = 1_800_000_000.5), "send_at"],
  ["send_at as negative seconds", (b) => (b.send_at = -1), "send_at"],
  ["send_at in seconds in the past", (b) => (b.send_at = Math.floor(Date.now() / 1000) - 3_600), "send_at"]
]

const flatCases: ReadonlyArray<[string, Record<string, unknown>, string]> = [
  ["flat form with NUL in text", { to: [{ email: "a@b.org" }], subject: "s", text: "a\u0000" }, "text"],
  ["flat form with a lone surrogate in html", { to: [{ email: "a@b.org" }], subject: "s", html: "<p>\uD83D</p>" }, "html"],
  ["flat form with 101 attachments", {
    to: [{ email: "a@b.org" }],
    subject: "s",
    text: "t",
    attachments: Array.from({ length: 101 }, () => ({ content: "QQ==", filename: "a" }))
  }, "attachments"],
  ["flat form with empty to", { to: [], subject: "s", text: "t" }, "to"],
  ["flat form with a bad to email", { to: [{ email: "x" }], subject: "s", text: "t" }, "to[0].email"],
  ["flat form without text or html", { to: [{ email: "a@b.org" }], subject: "s" }, "text"],
  ["flat form without subject", { to: [{ email: "a@b.org" }], text: "t" }, "subject"],
  ["flat form with an unknown field", { to: [{ email: "a@b.org" }], subject: "s", text: "t", body: "t" }, "body"],
  ["flat form with a misspelt cc", { to: [{ email: "a@b.org" }], subject: "s", text: "t", CC: [{ email: "c@b.org" }] }, "CC"],
  ["flat form with a to string that is no address", { to: "nobody", subject: "s", text: "t" }, "to"]
]

describe("POST /v1/mail/send field rules", () => {
  it.each(cases)("refuses %s with 400 naming the field", async (_name, mutate, param) => {
    const body: Record<string, any> = valid()
    mutate(body)
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed" })
    expect(res.json.error.param).toBe(param)
    expect(res.json.message).toBe(res.json.error.message)
    expect(res.json.message).toContain(param.split(".")[0]!.replace(/\[.*$/, ""))
  })

  it.each(flatCases)("refuses the %s with 400 naming the field", async (_name, fields, param) => {
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body: { from: { email: sender.from }, ...fields } })
    expect(res.status).toBe(400)
    expect(res.json.error.param).toBe(param)
  })

  it("refuses 300,000 one-byte attachments (12 MB of JSON) with 400 within seconds", async () => {
    const body = { ...valid(), attachments: Array.from({ length: 300_000 }, () => ({ content: "QQ==", filename: "a" })) }
    const started = Date.now()
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body })
    expect(res.status).toBe(400)
    // 900,000 JSON values: the bounded parse (src/http/bounded-json.ts) refuses it before the attachment count is read.
    expect(res.json.error).toMatchObject({ code: "json_too_complex" })
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("accepts the limits themselves: 100 attachments, 100 headers, a 998-character subject and header value", async () => {
    const body = {
      ...valid(),
      subject: "s".repeat(998),
      headers: { ...manyHeaders(99, "1"), "X-Long": "v".repeat(998) },
      attachments: Array.from({ length: 100 }, () => ({ content: "QQ==", filename: "a" })),
      personalizations: [{ to: [{ email: "rcpt@example.org", name: "Zoë 😀" }], headers: manyHeaders(100, "2") }]
    }
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body, headers: { "X-Herald-Test": "true" } })
    expect(res.status).toBe(202)
    expect(res.json.items[0].status).toBe("queued")
  })

  it("answers malformed JSON with 400 invalid_json and a top-level message", async () => {
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, rawBody: "{\"personalizations\": [" })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe("invalid_json")
    expect(typeof res.json.message).toBe("string")
  })

  it("leaves no message or delivery behind for any refused body", async () => {
    const rows = await query(app.databaseUrl, "SELECT count(*)::int AS n FROM messages WHERE account_id = $1", [sender.accountId])
    expect(rows[0]!.n).toBe(0)
  })

  it("accepts the same valid body in both forms", async () => {
    const full = await app.request("POST", "/v1/mail/send", { token: sender.token, body: valid() })
    expect(full.status).toBe(202)
    expect(full.json.items[0].status).toBe("queued")
    const flat = await app.request("POST", "/v1/mail/send", {
      token: sender.token,
      body: { from: { email: sender.from }, to: [{ email: "rcpt@example.org" }], subject: "s", text: "t", html: "<p>t</p>" }
    })
    expect(flat.status).toBe(202)
    expect(flat.json.message_id).toBe(flat.json.items[0].message_id)
  })

  it("names the unknown field and the fields allowed there", async () => {
    const body: Record<string, any> = valid()
    body.personalizations[0].too = []
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body })
    expect(res.status).toBe(400)
    expect(res.json.error.message).toContain("personalizations[0].too is not a field of this request")
    expect(res.json.error.message).toContain("\"bcc\"")
  })

  it("accepts address strings in every place, both forms, and stores what they name", async () => {
    const full = await app.request("POST", "/v1/mail/send", {
      token: sender.token,
      body: {
        ...valid(),
        from: `Herald Tests <${sender.from}>`,
        reply_to: "\"Replies, Team\" <replies@example.org>",
        personalizations: [{ to: ["Ann <ann@example.org>", "bob@example.org"], cc: ["Cy <cy@example.org>"], bcc: ["dee@example.org"] }]
      }
    })
    expect(full.status).toBe(202)
    const fullRows = await query(
      app.databaseUrl,
      "SELECT recipient, recipient_kind FROM deliveries WHERE message_id = $1 ORDER BY recipient",
      [full.json.items[0].message_id]
    )
    expect(fullRows).toEqual([
      { recipient: "ann@example.org", recipient_kind: "to" },
      { recipient: "bob@example.org", recipient_kind: "to" },
      { recipient: "cy@example.org", recipient_kind: "cc" },
      { recipient: "dee@example.org", recipient_kind: "bcc" }
    ])
    // The names live in the request's shared part, stored once (message_contents).
    const [message] = await query(app.databaseUrl,
      "SELECT m.from_email, c.content FROM messages m JOIN message_contents c ON c.id = m.content_id WHERE m.id = $1", [full.json.items[0].message_id])
    expect(message!.from_email).toBe(sender.from)
    expect(JSON.stringify(message!.content)).toContain("Replies, Team")
    expect(JSON.stringify(message!.content)).toContain("Herald Tests")

    for (const to of ["Flat <flat@example.org>", ["flat@example.org"]]) {
      const flat = await app.request("POST", "/v1/mail/send", {
        token: sender.token,
        body: { from: sender.from, to, cc: ["Cy <cy@example.org>"], reply_to: "r@example.org", subject: "s", text: "t" }
      })
      expect(flat.status).toBe(202)
      const rows = await query(app.databaseUrl, "SELECT recipient, recipient_kind FROM deliveries WHERE message_id = $1 ORDER BY recipient", [
        flat.json.message_id
      ])
      expect(rows).toEqual([{ recipient: "cy@example.org", recipient_kind: "cc" }, { recipient: "flat@example.org", recipient_kind: "to" }])
    }
  })

  it("accepts send_at as an integer of Unix seconds, scheduled at that instant", async () => {
    const at = Math.floor(Date.now() / 1000) + 7_200
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body: { ...valid(), send_at: at } })
    expect(res.status).toBe(202)
    const scheduled = await app.request("GET", `/v1/mail/scheduled/${res.json.id}`, { token: sender.token })
    expect(scheduled.status).toBe(200)
    expect(Date.parse(scheduled.json.send_at)).toBe(at * 1000)
  })

  it("accepts the OpenAPI document's send examples as they are, but for the sender's own address", async () => {
    const schemas = (await app.request("GET", "/openapi/openapi.transactional.json", { token: null })).json.components.schemas
    for (const example of [schemas.SendRequest.examples[0], schemas.FlatSendRequest.examples[0]]) {
      const res = await app.request("POST", "/v1/mail/send", {
        token: sender.token,
        body: { ...example, from: { ...example.from, email: sender.from } },
        headers: { "X-Herald-Test": "true" }
      })
      expect(res.status).toBe(202)
      expect(res.json.items[0].status).toBe("queued")
    }
  })
})
