/**
 * Campaign analytics against a running appliance, the MTA and an SMTP sink: a real campaign sent
 * to simulator recipients (delivered, a bounce, a complaint) and to one address delivered to the
 * sink, opens and clicks through the /o/ and /c/ endpoints with the real deliveries' tokens,
 * unsubscribes through the one-click POST and the mailto address with tokens naming the campaign.
 * Every field and rate of the analytics, the per-recipient CSV (formula prefix included), the
 * rates endpoint over its windows (event time, on TestClock) and its 400, another key's 404, and
 * the counts unchanged after the 90-day detail prune.
 */
import { Effect, TestClock, TestContext } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Analytics } from "../../src/bulk/analytics/Analytics.ts"
import { timelineOf } from "../../src/bulk/analytics/figures.ts"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { unsubscribeToken } from "../../src/bulk/public/unsubscribe-link.ts"
import { rewriteForTracking } from "../../src/bulk/tracking/rewrite.ts"
import { pruneTrackingDetail, recordCampaignLinks } from "../../src/bulk/tracking/store.ts"
import { recipientTokens } from "../../src/bulk/tracking/tokens.ts"
import { withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { arf, feedbackLoop, headersOf } from "../support/reports.ts"
import { sendRaw } from "../support/smtp-client.ts"
import { newSender, type Sender, siblingKey } from "../support/sending.ts"

const SIM = "simulator.herald.invalid"
const HUMAN_UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)"
const HTML = `<html><body><p>Hi {{ email }}</p><a href="https://shop.example/a">A</a> <a href="https://shop.example/b">B</a>
<a href="{{ unsubscribe_url }}">leave</a></body></html>`
const ADA = `delivered+ada@${SIM}`
const BOB = `delivered+bob@${SIM}`
const CY = `delivered+cy@${SIM}`
const DEE = `delivered+dee@${SIM}`
const BOUNCER = `bounce+x@${SIM}`
const COMPLAINER = `complaint+y@${SIM}`
/** Delivered to the sink; its address begins with `=`, as a formula would. */
const FORMULA = "=sum@dest.example"

let rig: DeliveryRig
let sender: Sender
let tokens: ReturnType<typeof makeTokens>
let campaignId: string
let startedAt: Date
/** Address → its delivery's open URL and click URLs. */
const urls = new Map<string, { open: string; clicks: ReadonlyArray<string> }>()

const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)
const api = (method: string, route: string, token = sender.token) => rig.app.request(method, route, { token })
const get = (url: string, userAgent = HUMAN_UA) => fetch(url, { redirect: "manual", headers: { "user-agent": userAgent } })
const oneClick = (email: string) =>
  fetch(`${rig.app.baseUrl}/u/${unsubscribeToken(tokens, { accountId: sender.accountId, email, source: campaignId })}`, {
    method: "POST",
    body: "List-Unsubscribe=One-Click",
    headers: { "content-type": "application/x-www-form-urlencoded" }
  })

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
  const [secret] = await db<{ value: string }>("SELECT value FROM appliance_settings WHERE name = 'public_token_secret'")
  tokens = makeTokens(secret!.value)

  const list = await rig.app.request("POST", "/v1/bulk/lists", { token: sender.token, body: { name: "readers" } })
  expect(list.status).toBe(201)
  const added = await rig.app.request("POST", `/v1/bulk/lists/${list.json.id}/contacts`, {
    token: sender.token,
    body: { contacts: [ADA, BOB, CY, DEE, BOUNCER, COMPLAINER, FORMULA] }
  })
  expect(added.status).toBe(200)
  const created = await rig.app.request("POST", "/v1/bulk/campaigns", {
    token: sender.token,
    body: { name: "Numbers", from_email: sender.from, subject: "Hi", html: HTML, list_ids: [list.json.id] }
  })
  expect(created.status).toBe(201)
  campaignId = created.json.id
  const sent = await api("POST", `/v1/bulk/campaigns/${campaignId}/send`)
  expect(sent.json).toMatchObject({ status: "sending", total_contacts: 7 })
  const done = await eventually(async () => {
    const c = (await api("GET", `/v1/bulk/campaigns/${campaignId}`)).json
    return c.status === "completed" ? c : undefined
  }, "the campaign completed", 30_000)
  expect(done).toMatchObject({ sent_count: 6, failed_count: 1 })
  startedAt = new Date(done.started_at)

  // The campaign's tracked links as its frozen content holds them (recorded here in case the
  // freeze does not record them itself; a second recording keeps the first).
  const rewritten = rewriteForTracking(HTML, { trackUrl: rig.app.baseUrl, baseUrl: rig.app.baseUrl })
  expect(rewritten.links).toEqual(["https://shop.example/a", "https://shop.example/b"])
  await withServices(rig.app, recordCampaignLinks(campaignId, rewritten.links))
  const deliveries = await db<{ id: string; recipient: string }>(
    "SELECT d.id, d.recipient FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1", [campaignId])
  expect(deliveries).toHaveLength(7)
  for (const d of deliveries) {
    const t = recipientTokens(tokens, { deliveryId: d.id, campaignId })
    urls.set(d.recipient.toLowerCase(), {
      open: `${rig.app.baseUrl}/o/${t.open}`,
      clicks: rewritten.links.map((_, i) => `${rig.app.baseUrl}/c/${t.click(i)}`)
    })
  }
  const of = (email: string) => urls.get(email.toLowerCase())!

  // Opens: Ada twice (within the repeat window: one open), Bob once, Cy only through a prefetching proxy (opens_total, not unique).
  for (const [email, ua] of [[ADA, HUMAN_UA], [ADA, HUMAN_UA], [BOB, HUMAN_UA], [CY, "Mozilla/5.0"]] as const) {
    expect((await get(of(email).open, ua)).status).toBe(200)
  }
  // Clicks: Ada on A twice (one click: the window) and on B once, Bob on B once (a click is not an open).
  for (const [email, link] of [[ADA, 0], [ADA, 0], [ADA, 1], [BOB, 1]] as const) {
    expect((await get(of(email).clicks[link]!)).status).toBe(302)
  }
  // The endpoints answer once the hits are logged; the aggregator counts them shortly after.
  await eventually(async () => (await db<{ n: number }>("SELECT count(*)::int AS n FROM tracking_ingest"))[0]!.n === 0 ? true : undefined,
    "the hits counted")
  // Unsubscribes naming the campaign: Dee by one-click (twice: counted once), Cy by mail.
  expect((await oneClick(DEE)).status).toBe(200)
  expect((await oneClick(DEE)).status).toBe(200)
  const to = "unsubscribe@bounces.mta.herald.test"
  const subject = unsubscribeToken(tokens, { accountId: sender.accountId, email: CY, source: campaignId })
  const mail = [`From: <${CY}>`, `To: <${to}>`, `Subject: ${subject}`, "Message-ID: <u1@rcpt.test>", "", "Unsubscribe me.", ""].join("\r\n")
  expect((await sendRaw(rig.app.smtpPort, { from: CY, to: [to] }, mail)).code).toBe(250)
  await eventually(async () => {
    const rows = await db("SELECT 1 FROM contact_engagement WHERE type = 'unsubscribed' AND email = $1", [CY.toLowerCase()])
    return rows.length > 0 ? rows : undefined
  }, "the mailto unsubscribe processed")
}, 90_000)
afterAll(() => rig?.stop())

const EXPECTED = {
  delivered: 6, // Ada, Bob, Cy, Dee, the complainer (accepted, then complained) and the sink's
  opens_unique: 2,
  opens_total: 3,
  clicks_unique: 2,
  clicks_total: 3,
  bounces: 1,
  complaints: 1,
  unsubs: 2,
  rates: { open: 0.3333, ctr: 0.3333, ctor: 1, bounce: 0.1429, complaint: 0.1667, unsub: 0.3333 },
  top_links: [
    { url: "https://shop.example/b", clicks_unique: 2, clicks_total: 2 },
    { url: "https://shop.example/a", clicks_unique: 1, clicks_total: 1 }
  ],
  detail_window_days: 90
}

const analytics = async () => {
  const res = await api("GET", `/v1/bulk/campaigns/${campaignId}/analytics`)
  expect(res.status).toBe(200)
  return res.json
}
const csv = async () => {
  const res = await api("GET", `/v1/bulk/campaigns/${campaignId}/analytics?format=csv`)
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toMatch(/^text\/csv/)
  return res.text
}

describe("GET /v1/bulk/campaigns/{id}/analytics", () => {
  it("counts every outcome of the campaign and derives each rate", async () => {
    const a = await analytics()
    expect(a).toMatchObject({ campaign_id: campaignId, ...EXPECTED })
    expect(Object.keys(a).sort()).toEqual([
      "bounces", "campaign_id", "clicks_total", "clicks_unique", "complaints", "delivered", "detail_window_days", "opens_total",
      "opens_unique", "rates", "timeline", "top_links", "unsubs", "variants", "winner"
    ])
    // A campaign with one content has no A/B figures.
    expect(a).toMatchObject({ variants: [], winner: null })
    // The unsubscribes and the complaint are the address facts naming the campaign.
    const facts = await db<{ type: string; email: string }>(
      "SELECT type, email FROM contact_engagement WHERE campaign_id = $1 AND type IN ('unsubscribed', 'complained') ORDER BY type, email", [campaignId])
    expect(facts).toEqual([
      { type: "complained", email: COMPLAINER },
      { type: "unsubscribed", email: CY },
      { type: "unsubscribed", email: DEE }
    ])
  })

  it("has an hourly timeline from the start's hour holding every delivery, open and click", async () => {
    const { timeline } = await analytics()
    const hour = Math.floor(startedAt.getTime() / 3_600_000) * 3_600_000
    expect(timeline[0].at).toBe(new Date(hour).toISOString())
    timeline.forEach((b: { at: string }, i: number) => expect(b.at).toBe(new Date(hour + i * 3_600_000).toISOString()))
    const sum = (k: string) => timeline.reduce((n: number, b: Record<string, number>) => n + b[k]!, 0)
    expect({ delivered: sum("delivered"), opens: sum("opens"), clicks: sum("clicks") }).toEqual({ delivered: 6, opens: 3, clicks: 3 })
  })

  it("streams the per-recipient detail as CSV, with a formula-looking address prefixed", async () => {
    const lines = (await csv()).split("\r\n")
    expect(lines[0]).toBe("email,status,sent_at,first_opened_at,first_clicked_at")
    expect(lines.at(-1)).toBe("")
    const rows = new Map(lines.slice(1, -1).map((l) => [l.split(",")[0]!, l.split(",")]))
    expect([...rows.keys()]).toEqual(["'=sum@dest.example", BOUNCER, COMPLAINER, ADA, BOB, CY, DEE])
    const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
    const [, adaStatus, adaSent, adaOpened, adaClicked] = rows.get(ADA)!
    expect(adaStatus).toBe("delivered")
    for (const t of [adaSent, adaOpened, adaClicked]) expect(t).toMatch(iso)
    expect(rows.get(CY)!.slice(1)).toEqual(["delivered", expect.stringMatching(iso), "", ""]) // a machine open is no first open
    expect(rows.get(BOUNCER)!.slice(1)).toEqual(["bounced", "", "", ""])
    expect(rows.get(COMPLAINER)![1]).toBe("delivered")
    expect(rows.get("'=sum@dest.example")![1]).toBe("delivered")
  })

  it("answers 404 for another key's campaign and for an unknown one, in JSON and CSV", async () => {
    const other = await siblingKey(rig.app, sender)
    for (const route of [`/v1/bulk/campaigns/${campaignId}/analytics`, `/v1/bulk/campaigns/${campaignId}/analytics?format=csv`]) {
      const res = await api("GET", route, other.token)
      expect(res.status).toBe(404)
      expect(res.json.error.code).toBe("not_found")
    }
    expect((await api("GET", "/v1/bulk/campaigns/cp_nope/analytics")).status).toBe(404)
    const rates = await api("GET", "/v1/bulk/analytics/rates?period=30d", other.token)
    expect(rates.json).toMatchObject({ delivered: 0, opens_unique: 0, unsubs: 0, rates: { open: 0, bounce: 0 } })
  })
})

describe("GET /v1/bulk/analytics/rates", () => {
  it("sums the key's campaigns over the period ending now", async () => {
    const res = await api("GET", "/v1/bulk/analytics/rates?period=24h")
    expect(res.status).toBe(200)
    const { rates, top_links: _t, opens_total: _o, clicks_total: _c, detail_window_days: _d, ...counts } = EXPECTED
    expect(res.json).toEqual({ period: "24h", from: expect.any(String), to: expect.any(String), ...counts, rates })
    expect(Date.parse(res.json.to) - Date.parse(res.json.from)).toBe(86_400_000)
  })

  it("counts events by their time: a window that has moved past them holds none", async () => {
    const at = (days: number, period: "24h" | "7d" | "30d") =>
      withServices(rig.app, Effect.gen(function*() {
        yield* TestClock.setTime(Date.now() + days * 86_400_000)
        const service = yield* Analytics
        return yield* service.rates({ accountId: sender.accountId, keyId: sender.keyId }, period)
      }).pipe(Effect.provide(TestContext.TestContext)))
    const zero = { delivered: 0, opens_unique: 0, clicks_unique: 0, bounces: 0, complaints: 0, unsubs: 0 }
    expect(await at(2, "24h")).toMatchObject(zero)
    expect(await at(2, "7d")).toMatchObject({ delivered: 6, opens_unique: 2, clicks_unique: 2, bounces: 1, complaints: 1, unsubs: 2 })
    expect(await at(8, "7d")).toMatchObject(zero)
    expect(await at(8, "30d")).toMatchObject({ delivered: 6, unsubs: 2 })
    expect(await at(31, "30d")).toMatchObject({ ...zero, rates: { open: 0, ctr: 0, ctor: 0, bounce: 0, complaint: 0, unsub: 0 } })
  })

  it("takes the last 30 days when the period is left out", async () => {
    const res = await api("GET", "/v1/bulk/analytics/rates")
    expect(res.status).toBe(200)
    expect(res.json.period).toBe("30d")
    expect(Date.parse(res.json.to) - Date.parse(res.json.from)).toBe(30 * 86_400_000)
  })

  it("refuses an unknown period with 400 validation_failed", async () => {
    for (const q of ["?period=1h", "?period=7D", "?period="]) {
      const res = await api("GET", `/v1/bulk/analytics/rates${q}`)
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param: "period" })
    }
  })
})

describe("after the 90-day detail prune", () => {
  it("keeps every count, rate, link and timeline bucket; the CSV's first_* columns are empty", async () => {
    const before = await analytics()
    const pruned = await withServices(rig.app, pruneTrackingDetail(new Date(Date.now() + 91 * 86_400_000)))
    expect(pruned.hits).toBe(6) // 3 opens and 3 clicks counted (each repeat within the window left no row)
    expect(await analytics()).toEqual(before)
    const rows = (await csv()).split("\r\n").slice(1, -1).map((l) => l.split(","))
    expect(rows).toHaveLength(7)
    for (const row of rows) expect(row.slice(3)).toEqual(["", ""])
    expect(rows.find((r) => r[0] === ADA)![2]).not.toBe("")
  })
})

describe("the timeline's buckets", () => {
  it("are hourly over the first 72 hours from the start's hour, then daily, up to the last with activity", () => {
    const start = new Date("2026-03-01T10:20:00Z")
    const h = (iso: string, delivered: number, opens = 0, clicks = 0) => ({ hour: new Date(iso), delivered, opens, clicks })
    const timeline = timelineOf(start, [
      h("2026-03-01T10:00:00Z", 5, 1),
      h("2026-03-01T12:00:00Z", 0, 2, 1),
      h("2026-03-04T09:00:00Z", 0, 1), // the 72nd hour
      h("2026-03-04T10:00:00Z", 0, 3), // the first day
      h("2026-03-05T09:00:00Z", 0, 0, 2), // still the first day
      h("2026-03-06T11:00:00Z", 0, 4) // the third day
    ])
    expect(timeline).toHaveLength(72 + 3)
    expect(timeline[0]).toEqual({ at: "2026-03-01T10:00:00.000Z", delivered: 5, opens: 1, clicks: 0 })
    expect(timeline[1]).toEqual({ at: "2026-03-01T11:00:00.000Z", delivered: 0, opens: 0, clicks: 0 })
    expect(timeline[2]).toEqual({ at: "2026-03-01T12:00:00.000Z", delivered: 0, opens: 2, clicks: 1 })
    expect(timeline[71]).toEqual({ at: "2026-03-04T09:00:00.000Z", delivered: 0, opens: 1, clicks: 0 })
    expect(timeline.slice(72)).toEqual([
      { at: "2026-03-04T10:00:00.000Z", delivered: 0, opens: 3, clicks: 2 },
      { at: "2026-03-05T10:00:00.000Z", delivered: 0, opens: 0, clicks: 0 },
      { at: "2026-03-06T10:00:00.000Z", delivered: 0, opens: 4, clicks: 0 }
    ])
    expect(timelineOf(start, [])).toEqual([])
  })
})

describe("a feedback loop's report about a campaign's delivery", () => {
  it("counts as the campaign's complaint, once however often it comes", async () => {
    const received = rig.sink.received.find((m) => m.rcptTo[0] === FORMULA)!
    const loop = feedbackLoop(rig.dns, "yahoo.com")
    const fbl = "fbl@bounces.mta.herald.test"
    for (let i = 0; i < 2; i++) {
      const report = await loop.sign(arf(fbl, FORMULA, headersOf(received.raw), loop.from))
      expect((await sendRaw(rig.app.smtpPort, { from: loop.from, to: [fbl] }, report)).code).toBe(250)
    }
    const a = await eventually(async () => {
      const now = await analytics()
      return now.complaints === 2 ? now : undefined
    }, "the complaint counted", 20_000)
    await new Promise((r) => setTimeout(r, 1_000))
    expect(await analytics()).toMatchObject({ complaints: 2, delivered: 6, rates: { complaint: 0.3333 } })
    expect(a.rates.complaint).toBe(0.3333)
  })
})
