/**
 * Open and click tracking against a running appliance: real delivery rows of a campaign (written
 * through the queue writer in the campaign form, as the fan-out writes them), the campaign's HTML
 * rewritten and filled per recipient, the pixel and click URLs fetched over HTTP, and the events
 * delivered to a real webhook receiver. Counters (a token's repeats within the 60 s repeat window
 * count once: test/bulk/tracking-replay.test.ts replays), uniqueness (one event per contact and
 * campaign), machine opens, bad and tampered tokens, no open redirect, the message timeline, the engagement
 * history, and the 90-day prune that keeps the counters.
 */
import * as http from "node:http"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { fillTracking, rewriteForTracking } from "../../src/bulk/tracking/rewrite.ts"
import { aggregateOnce } from "../../src/bulk/tracking/aggregator.ts"
import { appendHits } from "../../src/bulk/tracking/ingest.ts"
import { pruneTrackingDetail, recordCampaignLinks } from "../../src/bulk/tracking/store.ts"
import { clickToken, openToken, recipientTokens } from "../../src/bulk/tracking/tokens.ts"
import { newId } from "../../src/lib/ids.ts"
import type { StoredMessage } from "../../src/mta/queue/StoredMessage.ts"
import { writeQueue } from "../../src/mta/queue/enqueue.ts"
import { withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { hookWebhooks, sendBody, type SendingApp, startSendingApp } from "../support/sending.ts"
import { type Hit, type Receiver, startReceiver } from "../webhooks/receiver.ts"

/** A campaign id as the campaigns API makes them: with real id lengths, a click token is over 100 characters. */
const CAMPAIGN = newId("cp")
const HUMAN_UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)"
/** HERALD_TRACKING_REPEAT_SECONDS's default, which this appliance runs with. */
const REPEAT_MS = 60_000
const HTML = `<html><body><p>Hello {{ name }}</p><a href="https://shop.example/pricing">Pricing</a>
<a href="https://shop.example/blog?a=1&amp;b=2">Blog</a> <a href="{{ unsubscribe_url }}">Unsubscribe</a></body></html>`

let t: SendingApp
let receiver: Receiver
let tokens: ReturnType<typeof makeTokens>
let links: ReadonlyArray<string>
/** Recipient → its delivery and the URLs in its filled HTML. */
const recipients = new Map<string, { deliveryId: string; messageId: string; open: string; clicks: Array<string> }>()

const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(t.app.databaseUrl, text, params)
const counters = async () =>
  (await db<Record<string, string>>("SELECT opens_total, opens_unique, opens_machine, clicks_total, clicks_unique FROM campaign_tracking WHERE campaign_id = $1", [CAMPAIGN]))[0]
/** Waits until the aggregator has counted every logged hit (the endpoints answer before it does). */
const aggregated = () =>
  eventually(async () => (await db<{ n: number }>("SELECT count(*)::int AS n FROM tracking_ingest"))[0]!.n === 0 ? true : undefined, "hits counted")
const hitCount = async () => (await db<{ n: number }>("SELECT count(*)::int AS n FROM tracking_hits"))[0]!.n
const get = (url: string, userAgent = HUMAN_UA) => fetch(url, { redirect: "manual", headers: { "user-agent": userAgent } })
const hooksOf = (event: string, email: string) => (h: Hit) => h.json?.event === event && h.json?.email === email
/** Waits past the dispatcher's poll, so an event that should not exist would have arrived. */
const settle = () => new Promise((r) => setTimeout(r, 1_500))

beforeAll(async () => {
  receiver = await startReceiver(200)
  t = await startSendingApp({ HERALD_WEBHOOK_ALLOW_PRIVATE: "true" })
  await hookWebhooks(t.app, t.sender, receiver.url())

  // The campaign's content frozen once: links rewritten, link table recorded.
  const trackUrl = t.app.baseUrl
  const rewritten = rewriteForTracking(HTML, { trackUrl, baseUrl: t.app.baseUrl })
  links = rewritten.links
  expect(links).toEqual(["https://shop.example/pricing", "https://shop.example/blog?a=1&b=2"])
  await withServices(t.app, recordCampaignLinks(CAMPAIGN, links))

  // One delivery row per contact, in the campaign form, as the fan-out writes them.
  const emails = ["ada@rcpt.example", "bob@rcpt.example", "cy@rcpt.example", "dee@rcpt.example"]
  const message = { from: { email: t.sender.from }, subject: "News", content: [{ type: "text/html" as const, value: rewritten.html }] }
  const queued = emails.map((email, i) => {
    const stored: StoredMessage = {
      _tag: "campaign",
      origin: "campaign",
      campaign_id: CAMPAIGN,
      channel: "bulk",
      contact_id: `ct_${i}`,
      to: { email },
      variables: {},
      message
    }
    return { messageId: newId("msg"), personalizationIndex: i, subject: "News", stored, recipients: [{ email, kind: "to" as const }] }
  })
  const context = { accountId: t.sender.accountId, keyId: t.sender.keyId, requestId: "req_campaign", fromEmail: t.sender.from, now: new Date() }
  await withServices(t.app, Effect.asVoid(writeQueue(context, queued)))

  const [setting] = await db<{ value: string }>("SELECT value FROM appliance_settings WHERE name = 'public_token_secret'")
  tokens = makeTokens(setting!.value)
  for (const q of queued) {
    const [row] = await db<{ id: string }>("SELECT id FROM deliveries WHERE message_id = $1", [q.messageId])
    const filled = fillTracking(rewritten.html, recipientTokens(tokens, { deliveryId: row!.id, campaignId: CAMPAIGN }))
    const open = /src="([^"]+\/o\/[^"]+)"/.exec(filled)![1]!
    const clicks = [...filled.matchAll(/href="([^"]+\/c\/[^"]+)"/g)].map((m) => m[1]!)
    expect(clicks).toHaveLength(2)
    expect(clicks[0]!.split("/c/")[1]!.length).toBeGreaterThan(100)
    expect(filled).toContain(`href="{{ unsubscribe_url }}"`)
    recipients.set(q.recipients[0]!.email, { deliveryId: row!.id, messageId: q.messageId, open, clicks })
  }
})
afterAll(async () => {
  await t.stop()
  await receiver.close()
})

const who = (email: string) => recipients.get(email)!

describe("the open pixel", () => {
  it("answers a 1×1 GIF not to be cached every time, counts the window's opens once, and fires email.opened once per contact", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await get(who("ada@rcpt.example").open)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toBe("image/gif")
      expect(res.headers.get("cache-control")).toBe("no-store")
      const gif = Buffer.from(await res.arrayBuffer())
      expect(gif.subarray(0, 6).toString()).toBe("GIF89a")
      expect([gif.readUInt16LE(6), gif.readUInt16LE(8)]).toEqual([1, 1])
    }
    await aggregated()
    // Three loads within the repeat window: one open.
    expect(await counters()).toMatchObject({ opens_total: "1", opens_unique: "1", opens_machine: "0", clicks_total: "0" })
    const [hook] = await receiver.waitFor(1, hooksOf("email.opened", "ada@rcpt.example"))
    expect(hook!.json).toMatchObject({ event: "email.opened", app: t.sender.keyId, campaign_id: CAMPAIGN, email: "ada@rcpt.example" })
    await settle()
    expect(receiver.hits.filter(hooksOf("email.opened", "ada@rcpt.example"))).toHaveLength(1)

    // The contact's engagement history and the message's timeline show the open.
    const facts = await db<{ type: string; key_id: string; campaign_id: string }>(
      "SELECT type, key_id, campaign_id FROM contact_engagement WHERE email = 'ada@rcpt.example'")
    expect(facts).toHaveLength(1)
    expect(facts[0]).toEqual({ type: "opened", key_id: t.sender.keyId, campaign_id: CAMPAIGN })
    const message = await t.app.request("GET", `/v1/mail/messages/${who("ada@rcpt.example").messageId}`, { token: t.sender.token })
    expect(message.status).toBe(200)
    expect(message.json.timeline.filter((e: { type: string }) => e.type === "opened")).toHaveLength(1)
  })

  it("counts a prefetching proxy's open in opens_total only, with no event, and the human open right after it as the first", async () => {
    const apple = await get(who("bob@rcpt.example").open, "Mozilla/5.0")
    expect(apple.status).toBe(200)
    await aggregated()
    expect(await counters()).toMatchObject({ opens_total: "2", opens_unique: "1", opens_machine: "1" })
    const machine = await db<{ machine: boolean }>("SELECT machine FROM tracking_hits WHERE delivery_id = $1", [who("bob@rcpt.example").deliveryId])
    expect(machine).toEqual([{ machine: true }])
    await settle()
    expect(receiver.hits.filter(hooksOf("email.opened", "bob@rcpt.example"))).toHaveLength(0)
    expect(await db("SELECT 1 FROM contact_engagement WHERE email = 'bob@rcpt.example'")).toHaveLength(0)

    // Within the proxy's window, but a person's open is a window of its own: counted, and the first.
    await get(who("bob@rcpt.example").open)
    await aggregated()
    expect(await counters()).toMatchObject({ opens_total: "3", opens_unique: "2", opens_machine: "1" })
    await receiver.waitFor(1, hooksOf("email.opened", "bob@rcpt.example"))
  })

  it("still answers its GIF for a bad or tampered token and records nothing", async () => {
    const before = await hitCount()
    const good = who("cy@rcpt.example").open
    const tampered = good.slice(0, -3) + (good.endsWith("AAA") ? "BBB" : "AAA")
    const [payload] = good.split("/o/")[1]!.split(".")
    const forged = `${t.app.baseUrl}/o/${payload}.${"A".repeat(22)}`
    for (const url of [tampered, forged, `${t.app.baseUrl}/o/nonsense`, `${t.app.baseUrl}/o/${"x".repeat(600)}`]) {
      const res = await get(url)
      expect(res.status, url).toBe(200)
      expect(res.headers.get("content-type")).toBe("image/gif")
      expect(res.headers.get("cache-control")).toBe("no-store")
    }
    // A genuine click token is no open token.
    expect((await get(`${t.app.baseUrl}/o/${who("cy@rcpt.example").clicks[0]!.split("/c/")[1]}`)).status).toBe(200)
    await aggregated()
    expect(await hitCount()).toBe(before)
  })

  it("records nothing for a transactional message, even with a validly signed token", async () => {
    const sent = await t.app.request("POST", "/v1/mail/send", { token: t.sender.token, body: sendBody(t.sender, "tx@rcpt.example") })
    expect(sent.status).toBe(202)
    const [row] = await db<{ id: string }>("SELECT id FROM deliveries WHERE recipient = 'tx@rcpt.example'")
    const before = await hitCount()
    const res = await get(`${t.app.baseUrl}/o/${openToken(tokens, { deliveryId: row!.id, campaignId: CAMPAIGN })}`)
    expect(res.status).toBe(200)
    await aggregated()
    expect(await hitCount()).toBe(before)
  })
})

describe("the click redirect", () => {
  it("sends the browser on with 302 and no-store every time, counts a link's clicks of a window once, fires email.clicked once, and is no open", async () => {
    const cy = who("cy@rcpt.example")
    const opensBefore = await counters()
    for (const [url, expected] of [[cy.clicks[0]!, links[0]], [cy.clicks[0]!, links[0]], [cy.clicks[1]!, links[1]]] as const) {
      const res = await get(url)
      expect(res.status).toBe(302)
      expect(res.headers.get("location")).toBe(expected)
      expect(res.headers.get("cache-control")).toBe("no-store")
    }
    await aggregated()
    expect(await counters()).toMatchObject({
      opens_total: opensBefore!["opens_total"],
      opens_unique: opensBefore!["opens_unique"],
      clicks_total: "2",
      clicks_unique: "1"
    })
    // Each link token has its own window: link 0 twice within it is one click, link 1 another.
    const perLink = await db<{ link_index: number; clicks_total: string; clicks_unique: string }>(
      "SELECT link_index, clicks_total, clicks_unique FROM campaign_links WHERE campaign_id = $1 ORDER BY link_index", [CAMPAIGN])
    expect(perLink).toEqual([{ link_index: 0, clicks_total: "1", clicks_unique: "1" }, { link_index: 1, clicks_total: "1", clicks_unique: "1" }])
    const [hook] = await receiver.waitFor(1, hooksOf("email.clicked", "cy@rcpt.example"))
    expect(hook!.json).toMatchObject({ event: "email.clicked", campaign_id: CAMPAIGN, email: "cy@rcpt.example", url: links[0] })
    await settle()
    expect(receiver.hits.filter(hooksOf("email.clicked", "cy@rcpt.example"))).toHaveLength(1)
    expect(receiver.hits.filter(hooksOf("email.opened", "cy@rcpt.example"))).toHaveLength(0)

    const message = await t.app.request("GET", `/v1/mail/messages/${cy.messageId}`, { token: t.sender.token })
    expect(message.json.timeline.filter((e: { type: string }) => e.type === "clicked").map((e: { url: string }) => e.url))
      .toEqual([links[0], links[1]])
    expect(await db("SELECT 1 FROM contact_engagement WHERE email = 'cy@rcpt.example' AND type = 'clicked'")).toHaveLength(2)
  })

  it("answers a tampered or foreign token with the plain 404 page and records nothing", async () => {
    const before = await hitCount()
    const good = who("dee@rcpt.example").clicks[0]!
    const token = good.split("/c/")[1]!
    const [payload, mac] = token.split(".") as [string, string]
    // The payload re-pointed at another link index, with the old signature.
    const repointed = Buffer.from(JSON.stringify([[who("dee@rcpt.example").deliveryId, CAMPAIGN, "1"], 0])).toString("base64url")
    for (const bad of [`${payload}.${mac.slice(0, -2)}xx`, `${repointed}.${mac}`, "nonsense", who("dee@rcpt.example").open.split("/o/")[1]!]) {
      const res = await get(`${t.app.baseUrl}/c/${bad}`)
      expect(res.status).toBe(404)
      expect(res.headers.get("location")).toBeNull()
      expect(res.headers.get("content-type")).toContain("text/html")
      expect(await res.text()).toContain("This link is not valid")
    }
    await aggregated()
    expect(await hitCount()).toBe(before)
  })

  it("is no open redirect: only the campaign's own links, whatever the request adds", async () => {
    const dee = who("dee@rcpt.example")
    const res = await get(`${dee.clicks[1]}?url=https://evil.example/&redirect=https://evil.example/`)
    expect(res.status).toBe(302)
    expect(res.headers.get("location")).toBe(links[1])
    // A validly signed token for a link the campaign does not have: nothing to send anyone to.
    const unknown = clickToken(tokens, { deliveryId: dee.deliveryId, campaignId: CAMPAIGN, linkIndex: 7 })
    expect((await get(`${t.app.baseUrl}/c/${unknown}`)).status).toBe(404)
    const otherCampaign = clickToken(tokens, { deliveryId: dee.deliveryId, campaignId: "cp_other", linkIndex: 0 })
    expect((await get(`${t.app.baseUrl}/c/${otherCampaign}`)).status).toBe(404)
  })
})

describe("the aggregator", () => {
  it("counts concurrent hits exactly once, also when two replicas take from the log at the same time", async () => {
    const dee = who("dee@rcpt.example")
    // The earlier tests' hits may still be in the log: counted first, so `before` is complete.
    await aggregated()
    const before = (await counters())!
    const link1 = async () => (await db<{ clicks_total: string; clicks_unique: string }>(
      "SELECT clicks_total, clicks_unique FROM campaign_links WHERE campaign_id = $1 AND link_index = 1", [CAMPAIGN]))[0]!
    const linkBefore = await link1()
    // 30 loads at once: 30 pixels, one open (the window's first).
    const answers = await Promise.all(Array.from({ length: 30 }, () => get(dee.open)))
    expect(answers.map((r) => r.status)).toEqual(Array.from({ length: 30 }, () => 200))
    // 600 more hits as other replicas' endpoints log them (400 opens, 200 clicks on link 1, which
    // Dee has clicked before), each a repeat window after the one before, so every one counts,
    // taken by two aggregators of their own and this appliance's at once.
    const from = Date.now() + REPEAT_MS
    const logged = Array.from({ length: 600 }, (_, i) =>
      ({ campaignId: CAMPAIGN, deliveryId: dee.deliveryId, linkIndex: i % 3 === 0 ? 1 : null, machine: false, at: new Date(from + i * REPEAT_MS) }))
    await withServices(t.app, appendHits(logged))
    const drain = () => withServices(t.app, Effect.gen(function*() {
      while ((yield* aggregateOnce(REPEAT_MS)) > 0) { /* the next batch */ }
    }))
    await Promise.all([drain(), drain()])
    await aggregated()
    const plus = (field: string, n: number) => String(Number(before[field]) + n)
    expect(await counters()).toEqual({
      opens_total: plus("opens_total", 401),
      opens_unique: plus("opens_unique", 1),
      opens_machine: before["opens_machine"],
      clicks_total: plus("clicks_total", 200),
      clicks_unique: before["clicks_unique"]
    })
    expect(await link1()).toEqual({ clicks_total: String(Number(linkBefore.clicks_total) + 200), clicks_unique: linkBefore.clicks_unique })
    // Detail is capped per token: 50 of the 401 opens, 50 of link 1's 201 clicks (one from before).
    const detail = await db<{ kind: string; n: number }>(
      "SELECT kind, count(*)::int AS n FROM tracking_hits WHERE delivery_id = $1 GROUP BY kind ORDER BY kind", [dee.deliveryId])
    expect(detail).toEqual([{ kind: "click", n: 50 }, { kind: "open", n: 50 }])
    const facts = await db<{ type: string; n: number }>(
      "SELECT type, count(*)::int AS n FROM contact_engagement WHERE email = 'dee@rcpt.example' GROUP BY type ORDER BY type")
    expect(facts).toEqual([{ type: "clicked", n: 50 }, { type: "opened", n: 50 }])
    await receiver.waitFor(1, hooksOf("email.opened", "dee@rcpt.example"))
    await settle()
    expect(receiver.hits.filter(hooksOf("email.opened", "dee@rcpt.example"))).toHaveLength(1)
    expect(receiver.hits.filter(hooksOf("email.clicked", "dee@rcpt.example"))).toHaveLength(1)
  })
})

describe("the detail prune", () => {
  it("forgets per-recipient detail after 90 days and keeps the counters, so a late open is not first again", async () => {
    const kept = await counters()
    expect(await hitCount()).toBeGreaterThan(0)
    // Nothing is old enough yet.
    await withServices(t.app, pruneTrackingDetail(new Date()))
    expect(await counters()).toEqual(kept)
    expect(await hitCount()).toBeGreaterThan(0)

    const later = new Date(Date.now() + 91 * 86_400_000)
    const pruned = await withServices(t.app, pruneTrackingDetail(later))
    expect(pruned.hits).toBeGreaterThan(0)
    expect(await hitCount()).toBe(0)
    expect(await db("SELECT 1 FROM tracking_recipients WHERE first_opened_at IS NOT NULL OR first_clicked_at IS NOT NULL")).toHaveLength(0)
    expect(await db("SELECT 1 FROM contact_engagement WHERE type IN ('opened', 'clicked')")).toHaveLength(0)
    expect(await counters()).toEqual(kept)
    const timeline = await db<{ opens: string }>("SELECT sum(opens)::text AS opens FROM campaign_tracking_hours WHERE campaign_id = $1", [CAMPAIGN])
    expect(timeline[0]!.opens).toBe(kept!["opens_total"])

    // Ada opens again after the prune (91 days on, as her endpoint logs it): counted in the total,
    // still one unique open, no second event.
    await withServices(t.app, appendHits([{ campaignId: CAMPAIGN, deliveryId: who("ada@rcpt.example").deliveryId, linkIndex: null, machine: false, at: later }]))
    await aggregated()
    expect(await counters()).toMatchObject({ opens_total: String(Number(kept!["opens_total"]) + 1), opens_unique: kept!["opens_unique"] })
    await settle()
    expect(receiver.hits.filter(hooksOf("email.opened", "ada@rcpt.example"))).toHaveLength(1)
  })
})

describe("the front door", () => {
  it("answers GET /o/ and /c/ before the API (no request id), and leaves every other method and any body to the API", async () => {
    const ada = who("ada@rcpt.example")
    await aggregated()
    const before = (await counters())!
    // GET, with a query string a mail client may add: the front door's answer, counted (Cy's pixel
    // and Bob's link: tokens not fetched before, so no repeat window hides them).
    const pixel = await get(`${who("cy@rcpt.example").open}?utm_source=x`)
    expect(pixel.status).toBe(200)
    expect(pixel.headers.get("content-type")).toBe("image/gif")
    expect(pixel.headers.get("x-request-id")).toBeNull()
    const click = await get(who("bob@rcpt.example").clicks[0]!)
    expect(click.status).toBe(302)
    expect(click.headers.get("x-request-id")).toBeNull()
    await aggregated()
    expect(await counters()).toMatchObject({
      opens_total: String(Number(before["opens_total"]) + 1),
      clicks_total: String(Number(before["clicks_total"]) + 1)
    })
    // Other methods are the router's, with the API's request id: POST is refused with what the path answers.
    const post = await fetch(ada.open, { method: "POST" })
    expect(post.status).toBe(405)
    expect(post.headers.get("allow")).toBe("GET, HEAD")
    expect(post.headers.get("x-request-id")).toMatch(/^req_/)
    // A GET that declares a body is the API's too: refused by its size before a byte is read.
    const declared = await new Promise<{ status: number | undefined; requestId: unknown }>((resolve, reject) => {
      const req = http.request(ada.open, { method: "GET", headers: { "content-length": String(64 * 1024 * 1024) } }, (res) => {
        res.resume()
        resolve({ status: res.statusCode, requestId: res.headers["x-request-id"] })
      })
      req.on("error", reject)
      req.flushHeaders()
    })
    expect(declared.status).toBe(413)
    expect(declared.requestId).toMatch(/^req_/)
    await aggregated()
    expect(await counters()).toMatchObject({ opens_total: String(Number(before["opens_total"]) + 1) })
  })
})
