/**
 * SMTP submission's refusals, one per row of README "SMTP submission"'s table, each with the API's
 * message text: a bad key (535), MAIL before AUTH (530), AUTH without TLS from an address other
 * than loopback (538), the rate limit (451), a suspended account (550) and paused sending (451) at
 * MAIL; an invalid recipient (553), a blocked recipient domain (550) and too many recipients (452)
 * at RCPT; a missing or unverified header From (550), the quota (452), attachments too large
 * (552), an Idempotency-Key reused with another message (550) at the end of DATA; and the 250s: a
 * suppressed recipient, a sandbox message, an idempotent replay.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { newSender, type Sender, type SendingApp, startSendingApp } from "../support/sending.ts"
import { queuedId, submitRaw } from "../support/submission.ts"

let rig: SendingApp
let sender: Sender

beforeAll(async () => {
  rig = await startSendingApp({ MAX_ATTACHMENT_MB: "1", HERALD_MAX_RECIPIENTS: "3" })
  sender = rig.sender
})
afterAll(() => rig.stop())

const message = (from: string, extra = "", body = "Hello from an application\r\n") =>
  `From: App <${from}>\r\nTo: someone@example.org\r\nSubject: Hi\r\n${extra}\r\n${body}`

const submit = (options: { token?: string | null; from?: string; to?: ReadonlyArray<string>; raw?: string; localAddress?: string; who?: Sender }) => {
  const who = options.who ?? sender
  return submitRaw({
    port: rig.app.submissionPort,
    token: options.token === undefined ? who.token : options.token,
    envelope: { from: who.from, to: options.to ?? ["someone@example.org"] },
    raw: options.raw ?? message(options.from ?? who.from),
    ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress })
  })
}

describe("SMTP submission refuses", () => {
  it("a bad key with 535 5.7.8 and the API's message", async () => {
    const reply = await submit({ token: "hrld_wrong_key" })
    expect(reply.code).toBe(535)
    expect(reply.text).toContain("5.7.8 Missing or invalid API key")
  })

  it("MAIL before AUTH with 530 5.7.0", async () => {
    const reply = await submit({ token: null })
    expect(reply.code).toBe(530)
    expect(reply.text).toContain("5.7.0")
  })

  it("AUTH in clear text from an address other than loopback with 538 5.7.11, and takes it from loopback", async () => {
    const refused = await submit({ localAddress: "127.0.0.2" })
    expect(refused.code).toBe(538)
    expect(refused.text).toContain("5.7.11")
    expect((await submit({ localAddress: "127.0.0.1" })).code).toBe(250)
  })

  it("an invalid recipient address with 553 5.1.3, a blocked recipient domain with 550 5.7.1", async () => {
    const invalid = await submit({ to: ["someone@localhost"] })
    expect(invalid.code, invalid.text).toBe(553)
    expect(invalid.text).toContain(`5.1.3 to has "someone@localhost", which is not a valid email address`)
    const blocked = await rig.app.request("POST", "/v1/admin/blocked-domains", { body: { domain: "blocked.example" } })
    expect(blocked.status).toBe(201)
    const refused = await submit({ to: ["someone@blocked.example"] })
    expect(refused.code).toBe(550)
    expect(refused.text).toContain("5.7.1 recipient domain refused by policy: blocked.example")
  })

  it("past HERALD_MAX_RECIPIENTS recipients with 452 4.5.3 (the message goes to the first ones)", async () => {
    const reply = await submit({ to: ["r1@example.org", "r2@example.org", "r3@example.org", "r4@example.org"] })
    // nodemailer sends to the recipients that were taken and reports the rest as rejected.
    expect(reply.code).toBe(250)
    const rows = await query<{ recipient: string }>(rig.app.databaseUrl, `SELECT recipient FROM deliveries WHERE message_id = '${queuedId(reply)}'`)
    expect(rows.map((r) => r.recipient).sort()).toEqual(["r1@example.org", "r2@example.org", "r3@example.org"])
  })

  it("a header From missing, or with a domain not verified, with 550 5.6.0 / 550 5.7.1", async () => {
    const missing = await submit({ raw: "To: someone@example.org\r\nSubject: Hi\r\n\r\nno sender\r\n" })
    expect(missing.code).toBe(550)
    expect(missing.text).toContain("5.6.0 from is required")
    const unverified = await submit({ from: "someone@not-mine.example" })
    expect(unverified.code).toBe(550)
    expect(unverified.text).toContain("5.7.1 The sender domain not-mine.example is not registered for this account")
  })

  it("attachments over MAX_ATTACHMENT_MB with 552 5.3.4", async () => {
    const big = Buffer.alloc(1024 * 1024 + 10, 1).toString("base64").replace(/.{76}/g, "$&\r\n")
    const raw = `From: <${sender.from}>\r\nTo: someone@example.org\r\nSubject: big\r\nMIME-Version: 1.0\r\n` +
      `Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n` +
      `--b\r\nContent-Type: application/octet-stream; name="big.bin"\r\nContent-Disposition: attachment; filename="big.bin"\r\n` +
      `Content-Transfer-Encoding: base64\r\n\r\n${big}\r\n--b--\r\n`
    const reply = await submit({ raw })
    expect(reply.code).toBe(552)
    expect(reply.text).toContain("5.3.4 attachments[0] (big.bin) is 1048586 bytes; the limit is 1048576 bytes per attachment (MAX_ATTACHMENT_MB)")
  })

  it("a suspended account at MAIL with 550 5.7.1, paused sending with 451 4.7.1", async () => {
    const suspended = await newSender(rig.app, rig.dns, { packageId: "growth" })
    expect((await rig.app.request("POST", `/v1/admin/accounts/${suspended.accountId}/suspend`)).status).toBe(200)
    const refused = await submit({ who: suspended })
    expect(refused.code).toBe(550)
    expect(refused.text).toContain("5.7.1 This account is suspended")
    const paused = await newSender(rig.app, rig.dns, { packageId: "growth" })
    await query(rig.app.databaseUrl, `UPDATE accounts SET sending_paused_at = now(), sending_paused_reason = 'hard-bounce rate' WHERE id = '${paused.accountId}'`)
    const held = await submit({ who: paused })
    expect(held.code).toBe(451)
    expect(held.text).toContain("4.7.1 Sending is paused for this account: hard-bounce rate")
  })

  it("the monthly quota at the end of DATA with 452 4.3.1", async () => {
    const limited = await newSender(rig.app, rig.dns)
    expect((await rig.app.request("PATCH", `/v1/admin/accounts/${limited.accountId}/limits`, { body: { rate_per_min: 1000, monthly_quota: 1 } })).status).toBe(200)
    expect((await submit({ who: limited, to: ["q1@example.org"] })).code).toBe(250)
    const over = await submit({ who: limited, to: ["q2@example.org"] })
    expect(over.code).toBe(452)
    expect(over.text).toContain("4.3.1 Monthly quota used up: 1/1")
  })

  it("the per-minute rate limit at MAIL with 451 4.7.1", async () => {
    // Without a plan an account sends 30 requests a minute: the 31st transaction is refused.
    const slow = await newSender(rig.app, rig.dns)
    const replies = []
    for (let i = 0; i < 31; i++) replies.push(await submit({ who: slow, to: [`rate${i}@example.org`] }))
    expect(replies.slice(0, 30).every((r) => r.code === 250)).toBe(true)
    expect(replies[30]!.code).toBe(451)
    expect(replies[30]!.text).toContain("4.7.1 Too many requests: 30 sends per minute")
  })
})

describe("SMTP submission answers 250", () => {
  it("for a suppressed recipient, recorded as the API records it, nothing queued", async () => {
    expect((await rig.app.request("POST", "/v1/client/suppressions", { token: sender.token, body: { email: "gone@example.org" } })).status).toBeLessThan(300)
    const reply = await submit({ to: ["gone@example.org"] })
    expect(reply.code).toBe(250)
    const rows = await query(rig.app.databaseUrl, `SELECT 1 FROM messages WHERE id = '${queuedId(reply)}'`)
    expect(rows).toHaveLength(0)
  })

  it("for a sandbox message (X-Herald-Test), with a sandbox- id and nothing queued", async () => {
    const reply = await submit({ raw: message(sender.from, "X-Herald-Test: true\r\n") })
    expect(reply.code).toBe(250)
    expect(queuedId(reply)).toMatch(/^sandbox-msg_/)
    const rows = await query(rig.app.databaseUrl, `SELECT 1 FROM messages WHERE id = '${queuedId(reply)!.slice("sandbox-".length)}'`)
    expect(rows).toHaveLength(0)
  })

  it("for an Idempotency-Key replayed with the same message apart from Date and Message-ID, with the first id; 550 5.7.0 for another message", async () => {
    const key = `key-${Date.now()}`
    const first = await submit({ raw: message(sender.from, `Idempotency-Key: ${key}\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\nMessage-ID: <a@app>\r\n`) })
    expect(first.code).toBe(250)
    const again = await submit({ raw: message(sender.from, `Idempotency-Key: ${key}\r\nDate: Tue, 2 Jan 2024 00:00:00 +0000\r\nMessage-ID: <b@app>\r\n`) })
    expect(again.code).toBe(250)
    expect(queuedId(again)).toBe(queuedId(first))
    const count = await query<{ n: string }>(rig.app.databaseUrl, `SELECT count(*) AS n FROM messages WHERE request_id IN (SELECT request_id FROM messages WHERE id = '${queuedId(first)}')`)
    expect(Number(count[0]!.n)).toBe(1)
    const other = await submit({ raw: message(sender.from, `Idempotency-Key: ${key}\r\n`, "Another body\r\n") })
    expect(other.code).toBe(550)
    expect(other.text).toContain(`5.7.0 Idempotency-Key ${key} was used with a different body in the last 24 hours`)
  })
})
