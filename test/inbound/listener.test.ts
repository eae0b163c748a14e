/**
 * The MX listener end to end over SMTP on loopback, against an appliance that really delivered the
 * messages being reported on: a DSN to the real VERP address bounces and suppresses the
 * recipient, an authenticated feedback loop's ARF report (DKIM-signed for a domain of
 * config/feedback-isps.json, its key served by the loopback DNS server) emits email.complained, a zipped DMARC report appears in the API and
 * raises one dmarc.alignment_failure webhook, a relay attempt is refused and an oversized message
 * gets 552.
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { arf, dmarcMail, dmarcXml, dsn, feedbackLoop, headersOf } from "../support/reports.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { eventually } from "../support/eventually.ts"
import { sendRaw } from "../support/smtp-client.ts"

const BOUNCE_DOMAIN = "bounces.mta.herald.test"

let rig: DeliveryRig
let sender: Sender
let receiver: http.Server
const hooks: Array<{ event: string; app: string; [field: string]: unknown }> = []

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      hooks.push(JSON.parse(body))
      res.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()))
  rig = await startDeliveryRig({
    HERALD_WEBHOOK_ALLOW_PRIVATE: "true",
    HERALD_SMTP_MAX_MESSAGE_MB: "0.05"
  })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("rcpt.test")
  const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`
  const patched = await rig.app.request("PATCH", `/v1/client/keys/${sender.keyId}`, { token: sender.token, body: { label: "tests", webhook_url: url } })
  expect(patched.status).toBe(200)
})
afterAll(async () => {
  await rig.stop()
  receiver.closeAllConnections()
  receiver.close()
})

/** Sends one message to `to` through the API and returns what the recipient's MX received. */
const deliver = async (to: string) => {
  const before = rig.sink.received.length
  const res = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to) })
  expect(res.status).toBe(202)
  await rig.sink.waitFor(before + 1)
  const received = rig.sink.received.find((r) => r.rcptTo.includes(to))!
  return { messageId: res.json.items?.[0]?.message_id ?? res.json.message_id, received }
}

const eventsOf = (name: string) =>
  query<{ key_id: string; payload: Record<string, unknown> }>(rig.app.databaseUrl, "SELECT key_id, payload FROM events WHERE event = $1", [name])

const suppression = (email: string) =>
  query<{ reason: string; source: string }>(rig.app.databaseUrl, "SELECT reason, source FROM suppressions WHERE email = $1", [email])

describe("the MX listener", () => {
  it("bounces and suppresses the recipient of a DSN sent to the delivery's VERP address", async () => {
    const { messageId, received } = await deliver("gone@rcpt.test")
    expect(received.mailFrom).toMatch(new RegExp(`^b-.+@${BOUNCE_DOMAIN}$`))
    const reply = await sendRaw(rig.app.smtpPort, { from: "", to: [received.mailFrom] }, dsn(received.mailFrom, "gone@rcpt.test", "5.1.1", headersOf(received.raw)))
    expect(reply.code).toBe(250)

    const [event] = await eventually(async () => {
      const rows = (await eventsOf("email.bounced")).filter((e) => e.payload["recipient"] === "gone@rcpt.test")
      return rows.length > 0 ? rows : undefined
    }, "email.bounced", 20_000)
    expect(event!.key_id).toBe(sender.keyId)
    expect(event!.payload).toMatchObject({ recipient: "gone@rcpt.test", status: "5.1.1", category: "hard", message_id: messageId })
    expect(String(event!.payload["diagnostic"])).toContain("mailbox problem")
    expect(await suppression("gone@rcpt.test")).toEqual([{ reason: "bounce", source: "dsn 5.1.1" }])
    const [delivery] = await query<{ state: string }>(rig.app.databaseUrl, "SELECT state FROM deliveries WHERE recipient = 'gone@rcpt.test'")
    expect(delivery!.state).toBe("bounced")
    const audit = await rig.app.request("GET", "/v1/mail/audit?event=failed", { token: sender.token })
    expect(audit.json.items.map((i: { recipient: string }) => i.recipient)).toContain("gone@rcpt.test")
  })

  it("records a delay notice as a soft bounce without ending the delivery or suppressing", async () => {
    const { received } = await deliver("slow@rcpt.test")
    const reply = await sendRaw(rig.app.smtpPort, { from: "", to: [received.mailFrom] },
      dsn(received.mailFrom, "slow@rcpt.test", "4.2.2", headersOf(received.raw), "delayed"))
    expect(reply.code).toBe(250)
    const [event] = await eventually(async () => {
      const rows = (await eventsOf("email.bounced")).filter((e) => e.payload["recipient"] === "slow@rcpt.test")
      return rows.length > 0 ? rows : undefined
    }, "soft email.bounced", 20_000)
    expect(event!.payload).toMatchObject({ status: "4.2.2", category: "soft" })
    const [delivery] = await query<{ state: string }>(rig.app.databaseUrl, "SELECT state FROM deliveries WHERE recipient = 'slow@rcpt.test'")
    expect(delivery!.state).toBe("sent")
    expect(await suppression("slow@rcpt.test")).toEqual([])
  })

  it("maps an authenticated DSN that reached postmaster@ by the returned headers, and escalates repeated soft bounces", async () => {
    const { received } = await deliver("full@rcpt.test")
    const to = `postmaster@${BOUNCE_DOMAIN}`
    // Only the returned headers name the delivery: Herald acts on it because a feedback-loop
    // domain signed it (an unsigned one is refused: report-trust.test.ts).
    const loop = feedbackLoop(rig.dns, "yahoo.com", "dsn")
    for (let i = 0; i < 3; i++) {
      const reply = await sendRaw(rig.app.smtpPort, { from: "", to: [to] },
        await loop.sign(dsn(to, "full@rcpt.test", "4.2.2", headersOf(received.raw), "delayed", "MAILER-DAEMON@yahoo.com")))
      expect(reply.code).toBe(250)
    }
    const rows = await eventually(async () => {
      const found = (await eventsOf("email.bounced")).filter((e) => e.payload["recipient"] === "full@rcpt.test")
      return found.length === 3 ? found : undefined
    }, "three soft bounces", 20_000)
    expect(rows.every((e) => e.payload["category"] === "soft" && e.key_id === sender.keyId)).toBe(true)
    expect(await suppression("full@rcpt.test")).toEqual([{ reason: "bounce", source: "3 soft bounces within 7 days" }])
  })

  it("emits email.complained and suppresses on an ARF report sent to the feedback address", async () => {
    const { received } = await deliver("angry@rcpt.test")
    const loop = feedbackLoop(rig.dns, "yahoo.com")
    const reply = await sendRaw(rig.app.smtpPort, { from: loop.from, to: [`fbl@${BOUNCE_DOMAIN}`] },
      await loop.sign(arf(`fbl@${BOUNCE_DOMAIN}`, "angry@rcpt.test", headersOf(received.raw), loop.from)))
    expect(reply.code).toBe(250)
    const [event] = await eventually(async () => {
      const rows = await eventsOf("email.complained")
      return rows.length > 0 ? rows : undefined
    }, "email.complained", 20_000)
    expect(event!.key_id).toBe(sender.keyId)
    expect(event!.payload).toMatchObject({ email: "angry@rcpt.test", subject: "Hello" })
    expect(typeof event!.payload["isp"]).toBe("string")
    expect((await suppression("angry@rcpt.test"))[0]?.reason).toBe("complaint")
  })

  it("stores a zipped DMARC report for the domain's account and alerts once per window", async () => {
    const end = Math.floor(Date.now() / 1000)
    const rows = [
      { ip: "203.0.113.9", count: 150, dkim: "fail" as const, spf: "fail" as const },
      { ip: "198.51.100.7", count: 50, dkim: "pass" as const, spf: "pass" as const }
    ]
    const to = `dmarc@${BOUNCE_DOMAIN}`
    const first = dmarcMail(to, "report-one", dmarcXml(sender.domain, "r-1", end - 86_400, end, rows))
    expect((await sendRaw(rig.app.smtpPort, { from: "noreply-dmarc@receiver.test", to: [to] }, first)).code).toBe(250)
    // The same report again (receivers resend) and a second one in the same window.
    expect((await sendRaw(rig.app.smtpPort, { from: "noreply-dmarc@receiver.test", to: [to] }, first)).code).toBe(250)
    const second = dmarcMail(to, "report-two", dmarcXml(sender.domain, "r-2", end - 3_600, end - 60, rows))
    expect((await sendRaw(rig.app.smtpPort, { from: "noreply-dmarc@receiver.test", to: [to] }, second)).code).toBe(250)

    const list = await eventually(async () => {
      const res = await rig.app.request("GET", `/v1/client/dmarc/reports?domain=${sender.domain}`, { token: sender.token })
      const processed = await query(rig.app.databaseUrl, "SELECT 1 FROM inbound_messages WHERE kind = 'dmarc' AND state = 'processed'")
      return res.json.total === 2 && processed.length === 3 ? res : undefined
    }, "two DMARC reports", 20_000)
    expect(list.json).toMatchObject({ page: 1, per_page: 50, total: 2 })
    // Newest period first.
    expect(list.json.items.map((i: { report_id: string }) => i.report_id)).toEqual(["r-2", "r-1"])
    expect(list.json.items[1]).toMatchObject({ domain: sender.domain, org_name: "receiver.test", policy_p: "quarantine", date_begin: end - 86_400, date_end: end })
    const detail = await rig.app.request("GET", `/v1/client/dmarc/reports/${list.json.items[0].id}`, { token: sender.token })
    expect(detail.json.records).toHaveLength(2)
    expect(detail.json.messages).toBe(200)

    const alert = await eventually(async () => {
      const found = hooks.filter((h) => h.event === "dmarc.alignment_failure")
      return found.length > 0 ? found : undefined
    }, "dmarc.alignment_failure webhook", 20_000)
    expect(alert).toHaveLength(1)
    expect(alert[0]).toMatchObject({
      app: sender.keyId,
      domain: sender.domain,
      fail_rate: 0.75,
      volume: 200,
      policy_p: "quarantine",
      window_days: 7,
      top_failing_sources: [{ source_ip: "203.0.113.9", count: 150 }]
    })
  })

  it("refuses DMARC reports to an account whose plan lacks the feature, and another account's report", async () => {
    const free = await newSender(rig.app, rig.dns, { packageId: "free" })
    const refused = await rig.app.request("GET", "/v1/client/dmarc/reports", { token: free.token })
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe("feature_not_enabled")
    const other = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const mine = await rig.app.request("GET", "/v1/client/dmarc/reports", { token: sender.token })
    const theirs = await rig.app.request("GET", `/v1/client/dmarc/reports/${mine.json.items[0].id}`, { token: other.token })
    expect(theirs.status).toBe(404)
    expect((await rig.app.request("GET", "/v1/client/dmarc/reports", { token: other.token })).json.total).toBe(0)
  })

  it("refuses to relay for a domain that is not its own, with 550 5.7.1", async () => {
    const reply = await sendRaw(rig.app.smtpPort, { from: "spammer@evil.test", to: ["victim@elsewhere.test"] }, "Subject: hi\r\n\r\nrelay me\r\n")
    expect(reply.code).toBe(550)
    expect(reply.text).toContain("5.7.1")
  })

  it("answers 552 to a message over the size limit and keeps nothing of it", async () => {
    const before = await query(rig.app.databaseUrl, "SELECT id FROM inbound_messages")
    const big = `Subject: big\r\n\r\n${"x".repeat(76).concat("\r\n").repeat(1_000)}`
    const reply = await sendRaw(rig.app.smtpPort, { from: "", to: [`postmaster@${BOUNCE_DOMAIN}`] }, big)
    expect(reply.code).toBe(552)
    expect(await query(rig.app.databaseUrl, "SELECT id FROM inbound_messages")).toHaveLength(before.length)
  })
})
