/**
 * Who may act on a customer's list through the MX listener (issue #22, items 3 and 4), end to end
 * over SMTP against an appliance that really delivered the messages being reported on:
 * - a feedback report or DSN that names deliveries only through the original's Message-ID (which
 *   every recipient knows) is stored with a refusal and changes nothing unless an authenticated
 *   feedback loop sent it (DKIM for a domain of config/feedback-isps.json, its key served by the
 *   loopback DNS server); then it acts on the recipient it names, once per delivery, within the
 *   per-IP limit, and reputation counts the delivery once;
 * - the VERP path works as before;
 * - DMARC reports go only to the account that verified the domain, not to one that registered it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { arf, dmarcMail, dmarcXml, dsn, feedbackLoop, headersOf } from "../support/reports.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { sendRaw } from "../support/smtp-client.ts"

const BOUNCE_DOMAIN = "bounces.mta.herald.test"
const FBL = `fbl@${BOUNCE_DOMAIN}`

let rig: DeliveryRig

beforeAll(async () => {
  rig = await startDeliveryRig({
    // Two reports acted on per IP an hour: the third authenticated one is refused.
    HERALD_FEEDBACK_REPORTS_PER_IP_HOUR: "2",
    // Any volume counts, and a complaint on more than half the deliveries pauses: one complaint
    // of three deliveries does not, the same complaint counted twice does.
    HERALD_REPUTATION_MIN_VOLUME: "1",
    HERALD_PAUSE_COMPLAINT_RATE: "0.5"
  })
  rig.route("rcpt.test")
})
afterAll(async () => {
  await rig.stop()
})

let tag = 0

/** One message to two To recipients and a Bcc one; what the first To recipient (the outsider) received. */
const deliverToThree = async (sender: Sender) => {
  tag += 1
  const [a, b, c] = [`a${tag}@rcpt.test`, `b${tag}@rcpt.test`, `hidden${tag}@rcpt.test`]
  const before = rig.sink.received.length
  const res = await rig.app.request("POST", "/v1/mail/send", {
    token: sender.token,
    body: sendBody(sender, a, { personalizations: [{ to: [{ email: a }, { email: b }], bcc: [{ email: c }] }] })
  })
  expect(res.status).toBe(202)
  await eventually(async () => {
    const got = rig.sink.received.slice(before).flatMap((r) => r.rcptTo)
    return [a, b, c].every((r) => got.includes(r)) ? true : undefined
  }, "three deliveries", 20_000)
  const received = rig.sink.received.find((r) => r.rcptTo.includes(a))!
  return { a, b, c, received, headers: headersOf(received.raw) }
}

/** Sends `raw` to `to` and waits until the processor is done with it; returns its row. */
const report = async (to: string, raw: string | Buffer, from = "") => {
  const [counted] = await query<{ n: number }>(rig.app.databaseUrl, "SELECT count(*)::int AS n FROM inbound_messages")
  expect((await sendRaw(rig.app.smtpPort, { from, to: [to] }, raw)).code).toBe(250)
  return eventually(async () => {
    const rows = await query<{ state: string; kind: string; refusal: string | null; authenticated_as: string | null }>(
      rig.app.databaseUrl,
      "SELECT state, kind, refusal, authenticated_as FROM inbound_messages ORDER BY received_at, id OFFSET $1",
      [counted!.n]
    )
    return rows[0]?.state === "processed" ? rows[0] : undefined
  }, "the report processed", 20_000)
}

const suppressed = (sender: Sender, emails: ReadonlyArray<string>) =>
  query<{ email: string; reason: string }>(rig.app.databaseUrl,
    "SELECT email, reason FROM suppressions WHERE account_id = $1 AND email = ANY($2) ORDER BY email", [sender.accountId, emails])

const complained = (sender: Sender) =>
  query<{ payload: { email: string } }>(rig.app.databaseUrl,
    "SELECT payload FROM events WHERE account_id = $1 AND event = 'email.complained'", [sender.accountId])

const deliveryStates = (sender: Sender) =>
  query<{ recipient: string; state: string }>(rig.app.databaseUrl,
    "SELECT recipient, state FROM deliveries WHERE account_id = $1 ORDER BY recipient", [sender.accountId])

const pausedReason = async (sender: Sender) =>
  (await rig.app.request("GET", `/v1/admin/accounts/${sender.accountId}`)).json.sending_paused_reason as string | null

describe("reports that name deliveries by Message-ID", () => {
  it("a forged feedback report from an unauthenticated sender is stored with its refusal and changes nothing", async () => {
    const sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const { a, b, c, headers } = await deliverToThree(sender)
    // Naming someone who got no copy (the old fallback then took every recipient, Bcc included),
    // then naming a co-recipient outright.
    for (const named of ["nobody@elsewhere.test", b]) {
      const row = await report(FBL, arf(FBL, named, headers), "feedback@fbl.isp.test")
      expect(row.kind).toBe("complaint")
      expect(row.authenticated_as).toBeNull()
      expect(row.refusal).toMatch(named === b ? /not from an authenticated feedback loop/ : /names no recipient of message/)
    }
    expect(await suppressed(sender, [a, b, c])).toEqual([])
    expect(await complained(sender)).toEqual([])
    expect(await query(rig.app.databaseUrl, "SELECT 1 FROM inbound_complaints WHERE account_id = $1", [sender.accountId])).toEqual([])
  })

  it("an authenticated feedback loop's report suppresses exactly the recipient it names, once, however often it is sent", async () => {
    const sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const { a, b, c, headers } = await deliverToThree(sender)
    const loop = feedbackLoop(rig.dns, "yahoo.com")
    const signed = await loop.sign(arf(FBL, b, headers, loop.from))
    for (let i = 0; i < 2; i++) {
      const row = await report(FBL, signed, loop.from)
      expect(row).toMatchObject({ kind: "complaint", refusal: null, authenticated_as: "dkim yahoo.com" })
    }
    expect(await suppressed(sender, [a, b, c])).toEqual([{ email: b, reason: "complaint" }])
    expect((await complained(sender)).map((e) => e.payload.email)).toEqual([b])
    expect(await query(rig.app.databaseUrl, "SELECT email FROM inbound_complaints WHERE account_id = $1", [sender.accountId])).toEqual([{ email: b }])
    // One complaint of three deliveries (33 %, under the 50 % of this file): not paused — counted
    // twice it would be 67 %.
    expect(await pausedReason(sender)).toBeNull()
  })

  it("past the per-IP limit an authenticated report is stored with its refusal and changes nothing", async () => {
    const sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const { b, headers } = await deliverToThree(sender)
    const loop = feedbackLoop(rig.dns, "yahoo.com", "fbl2")
    const row = await report(FBL, await loop.sign(arf(FBL, b, headers, loop.from)), loop.from)
    expect(row.refusal).toMatch(/^rate limited: 2 reports from .* in the past hour/)
    expect(await suppressed(sender, [b])).toEqual([])
    expect(await complained(sender)).toEqual([])
  })

  it("a forged DSN naming a co-recipient changes nothing; one to the delivery's VERP address still bounces it", async () => {
    const sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const { a, b, c, received, headers } = await deliverToThree(sender)
    const postmaster = `postmaster@${BOUNCE_DOMAIN}`
    const forged = await report(postmaster, dsn(postmaster, b, "5.1.1", headers))
    expect(forged.kind).toBe("bounce")
    expect(forged.refusal).toMatch(/not from an authenticated feedback loop/)
    expect(await suppressed(sender, [a, b, c])).toEqual([])
    expect((await deliveryStates(sender)).map((d) => d.state)).toEqual(["sent", "sent", "sent"])
    expect(await query(rig.app.databaseUrl, "SELECT 1 FROM events WHERE account_id = $1 AND event = 'email.bounced'", [sender.accountId])).toEqual([])

    // The VERP address of the outsider's own delivery: that delivery, and only it, bounces.
    const real = await report(received.mailFrom, dsn(received.mailFrom, a, "5.1.1", headers))
    expect(real).toMatchObject({ kind: "bounce", refusal: null })
    expect(await suppressed(sender, [a, b, c])).toEqual([{ email: a, reason: "bounce" }])
    expect(await deliveryStates(sender)).toEqual([
      { recipient: a, state: "bounced" },
      { recipient: b, state: "sent" },
      { recipient: c, state: "sent" }
    ])
  })
})

describe("DMARC reports", () => {
  it("go only to the account that verified the domain, not to one that merely registered it", async () => {
    const owner = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const other = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const registered = await rig.app.request("POST", "/v1/client/domains", { token: other.token, body: { domain: owner.domain } })
    expect(registered.status).toBe(201)
    const end = Math.floor(Date.now() / 1000)
    const to = `dmarc@${BOUNCE_DOMAIN}`
    const rows = [{ ip: "203.0.113.9", count: 500, dkim: "fail" as const, spf: "fail" as const }]
    const row = await report(to, dmarcMail(to, "trust", dmarcXml(owner.domain, "trust-1", end - 86_400, end, rows)), "noreply-dmarc@receiver.test")
    expect(row.kind).toBe("dmarc")

    const mine = await rig.app.request("GET", `/v1/client/dmarc/reports?domain=${owner.domain}`, { token: owner.token })
    expect(mine.json.total).toBe(1)
    const theirs = await rig.app.request("GET", `/v1/client/dmarc/reports?domain=${owner.domain}`, { token: other.token })
    expect(theirs.status).toBe(200)
    expect(theirs.json.total).toBe(0)
    expect(await query(rig.app.databaseUrl, "SELECT 1 FROM dmarc_alerts WHERE account_id = $1", [other.accountId])).toEqual([])
    expect(await query(rig.app.databaseUrl, "SELECT 1 FROM dmarc_alerts WHERE account_id = $1", [owner.accountId])).toHaveLength(1)
  })
})
