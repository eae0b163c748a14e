/**
 * The message content view is bounded (issue 28, view 2): an appliance as its own process (so a
 * frozen event loop shows as a slow `/health`), the MTA off so nothing but the view renders, a
 * short render deadline (HERALD_RENDER_TIMEOUT_MS=1500):
 * - a campaign message whose content is the string-doubling template (5.7 s of one Liquid filter
 *   on the main thread, issue 26) is rendered for the view in the render pool: stopped at the
 *   deadline, 422 `content_unavailable`, and viewing it again and again consumes no render stop
 *   (the campaign is not paused, as three stopped deliveries would pause it);
 * - eight views of a 440 KB message at once: two are prepared (a key's bound), six get 429 with
 *   Retry-After at once (before that bound, the main thread's share of eight views of a 3.5 MB
 *   message — reading, handing over, answering — held /health for up to 968 ms);
 * - a message stored past the view's size cap (4 MB without attachments) is not read: 422.
 * While each runs, `/health` answers 200 (median within 100 ms) and another account's send 202.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApplianceProcess, spawnAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { eventually } from "../support/eventually.ts"
import { expectResponsive, formatHealth, probeHealthWhile } from "../support/health-probe.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

const DOUBLING = `{% assign s = "xxxxxxxxxxxxxxxxxxxxxabc" %}{% for i in (1..17) %}{% assign s = s | append: s %}{% endfor %}{{ s | split: "" | sort_natural | size }}`
const SIM = "simulator.herald.invalid"

let app: ApplianceProcess
let dns: DnsServer
let viewer: Sender
let other: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  app = await spawnAppliance({ env: { HERALD_DNS_SERVERS: dns.address, HERALD_RENDER_WORKERS: "2", HERALD_RENDER_TIMEOUT_MS: "1500" } })
  viewer = await newSender(app, dns, { packageId: "growth" })
  other = await newSender(app, dns, { packageId: "growth" })
}, 180_000)
afterAll(async () => {
  await app?.stop()
  await dns?.close()
})

const api = (method: string, route: string, body?: unknown) =>
  app.request(method, route, { token: viewer.token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(app.databaseUrl, text, params)

const whileRunning = async <A>(work: Promise<A>, minMs = 500) => {
  const run = await probeHealthWhile(app, work, { minMs, bystander: { sender: other, to: `delivered@${SIM}` } })
  console.log(`while viewing: ${formatHealth(run.health)}`)
  return run
}

describe("the content view's work", () => {
  it("eight views of a 440 KB message at once: two prepared, six refused with 429, the appliance answering", { timeout: 120_000 }, async () => {
    const html = `<p>${"All work and no play. ".repeat(20_000)}</p>`
    const sent = await api("POST", "/v1/mail/send", sendBody(viewer, `delivered@${SIM}`, { content: [{ type: "text/html", value: html }] }))
    expect(sent.status).toBe(202)
    const id = sent.json.items[0].message_id as string
    const views = Promise.all(Array.from({ length: 8 }, () => api("GET", `/v1/mail/messages/${id}/content`)))
    const { result, health } = await whileRunning(views)
    const shown = result.filter((res) => res.status === 200)
    const refused = result.filter((res) => res.status === 429)
    expect(shown).toHaveLength(2)
    expect(refused).toHaveLength(6)
    for (const res of shown) expect(res.json.html.length).toBeGreaterThan(html.length - 10)
    for (const res of refused) {
      expect(res.json.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
      expect(res.headers.get("retry-after")).toBe("1")
    }
    expectResponsive(health)
    // Once answered, the key may view again.
    expect((await api("GET", `/v1/mail/messages/${id}/content`)).status).toBe(200)
  })

  it("a message stored past the view's size cap is not read: 422 content_unavailable", { timeout: 60_000 }, async () => {
    const sent = await api("POST", "/v1/mail/send", sendBody(viewer, `delivered@${SIM}`))
    const id = sent.json.items[0].message_id as string
    // 5 MB of padding: over the view's 4 MB, under what delivery reads (twice MAX_JSON_MB).
    await db("UPDATE messages SET content = content || jsonb_build_object('padding', repeat('x', 5 * 1024 * 1024)) WHERE id = $1", [id])
    const { result, health } = await whileRunning(api("GET", `/v1/mail/messages/${id}/content`), 2_000)
    expect(result.status).toBe(422)
    expect(result.json.error).toMatchObject({ code: "content_unavailable" })
    expect(result.json.error.message).toMatch(/at most 4194304 are read to be shown/)
    expectResponsive(health)
  })

  it("a campaign message that renders for seconds is stopped at the deadline in the pool, and consumes no render stop", { timeout: 120_000 }, async () => {
    const list = await api("POST", "/v1/bulk/lists", { name: "doubling" })
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: ["a@victims.example"] })).status).toBe(200)
    const campaign = await api("POST", "/v1/bulk/campaigns", { name: "Doubling", from_email: viewer.from, subject: "Hi", html: DOUBLING, list_ids: [list.json.id] })
    expect(campaign.status).toBe(201)
    expect((await api("POST", `/v1/bulk/campaigns/${campaign.json.id}/send`)).status).toBe(200)
    const message = await eventually(async () =>
      (await db<{ id: string }>("SELECT id FROM messages WHERE campaign_id = $1", [campaign.json.id]))[0], "the campaign's message", 30_000)

    // Two at once (a key's bound), then two more: four stopped renders.
    const view = () => Promise.all([1, 2].map(() => api("GET", `/v1/mail/messages/${message.id}/content`)))
    const { result, health } = await whileRunning(view().then(async (first) => [...first, ...(await view())]), 2_000)
    for (const res of result) {
      expect(res.status).toBe(422)
      expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "content_unavailable" })
      expect(res.json.error.message).toMatch(/longer than 1500 ms/)
    }
    expectResponsive(health)
    // Four stopped renders, none of them delivery's: the campaign goes on sending (three stopped deliveries would pause it).
    expect((await api("GET", `/v1/bulk/campaigns/${campaign.json.id}`)).json).toMatchObject({ status: "sending" })
    expect((await db("SELECT state, attempts FROM deliveries WHERE message_id = $1", [message.id]))).toEqual([{ state: "queued", attempts: 0 }])
  })
})
