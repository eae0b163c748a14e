/**
 * Issue 30 item 7 against a running appliance: a campaign previewed as one contact would get it
 * (their variables, their unsubscribe link, links untracked) and test-sent to 1–5 addresses through
 * the template test-send's path ([Test] subject, no tracking, no events, the quota charged per
 * address and the rate window once, a suppressed address refused with `param: to[i]`).
 */
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender } from "../support/sending.ts"

let rig: DeliveryRig
let sender: Sender
let other: Sender
let campaignId: string

beforeAll(async () => {
  rig = await startDeliveryRig({ HERALD_TRACK_URL: "http://track.herald.test" })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
  const list = await api("POST", "/v1/bulk/lists", { name: "News" })
  expect((await api("POST", "/v1/bulk/contacts", { email: "ada@dest.example", name: "Ada <&>", metadata: { plan: "pro" } })).status).toBe(201)
  expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: ["ada@dest.example"] })).status).toBe(200)
  const campaign = await api("POST", "/v1/bulk/campaigns", {
    name: "November",
    from_email: sender.from,
    subject: "News for {{ name }}",
    html: "<html><body><p>Hi {{ name }}, plan {{ metadata.plan }}</p><a href=\"https://shop.example/offer\">Offer</a>"
      + "<a href=\"{{ unsubscribe_url }}\">Leave</a></body></html>",
    list_ids: [list.json.id]
  })
  expect(campaign.status).toBe(201)
  campaignId = campaign.json.id
})
afterAll(() => rig.stop())

function api(method: string, route: string, body?: unknown, token = sender.token) {
  return rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
}

describe("campaign preview", () => {
  it("renders what the contact would get, by address or id, links untracked, with their unsubscribe link", async () => {
    const res = await api("POST", `/v1/bulk/campaigns/${campaignId}/preview`, { contact: "ADA@dest.example" })
    expect(res.status).toBe(200)
    expect(res.json.subject).toBe("News for Ada <&>")
    expect(res.json.html).toContain("<p>Hi Ada &lt;&amp;&gt;, plan pro</p>")
    expect(res.json.html).toContain("href=\"https://shop.example/offer\"")
    expect(res.json.html).not.toContain("track.herald.test")
    expect(res.json.html).toMatch(/href="http[^"]+\/u\/[A-Za-z0-9_.-]{20,}"/)
    expect(res.json.body_text).toContain("Hi Ada <&>, plan pro")

    const contacts = await api("GET", "/v1/bulk/contacts?search=ada")
    const byId = await api("POST", `/v1/bulk/campaigns/${campaignId}/preview`, { contact: contacts.json.items[0].id })
    expect(byId.json.subject).toBe(res.json.subject)
  })

  it("answers 404 for another key's campaign or contact and 400 for a variant the campaign does not have", async () => {
    expect((await api("POST", `/v1/bulk/campaigns/${campaignId}/preview`, { contact: "nobody@dest.example" })).status).toBe(404)
    const theirs = await api("POST", `/v1/bulk/campaigns/${campaignId}/preview`, { contact: "ada@dest.example" }, other.token)
    expect(theirs.status).toBe(404)
    expect(theirs.json.error.code).toBe("not_found")
    const variant = await api("POST", `/v1/bulk/campaigns/${campaignId}/preview`, { contact: "ada@dest.example", variant: 1 })
    expect(variant.status).toBe(400)
    expect(variant.json.error).toMatchObject({ code: "validation_failed", param: "variant" })
  })
})

describe("campaign test-send", () => {
  it("sends the contact's render to each address: [Test] subject, untracked, unsubscribe redacted, no events, quota per address, one rate count", async () => {
    const usage = async () => (await query<{ sent: number }>(rig.app.databaseUrl, "SELECT sent FROM key_usage WHERE key_id = $1", [sender.keyId]))[0]?.sent ?? 0
    const usedBefore = await usage()
    const probe = await api("POST", `/v1/bulk/campaigns/${campaignId}/preview`, { contact: "ada@dest.example" })
    expect(probe.status).toBe(200)
    const before = rig.sink.received.length
    const to = ["one@dest.example", "two@dest.example"]
    const res = await api("POST", `/v1/bulk/campaigns/${campaignId}/test-send`, { to, contact: "ada@dest.example" })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ ok: true, to })
    expect(res.json.message_ids).toHaveLength(2)
    const limit = Number(res.headers.get("ratelimit-limit"))
    expect(Number(res.headers.get("ratelimit-remaining"))).toBe(limit - 1)

    await rig.sink.waitFor(before + 2)
    const got = await Promise.all(rig.sink.received.slice(before, before + 2).map((m) => simpleParser(m.raw)))
    expect(got.map((m) => m.to && "text" in m.to ? m.to.text : "").sort()).toEqual(to)
    for (const parsed of got) {
      expect(parsed.subject).toBe("[Test] News for Ada <&>")
      expect(parsed.html).toContain("Hi Ada &lt;&amp;&gt;, plan pro")
      expect(parsed.html).toContain("href=\"https://shop.example/offer\"")
      expect(parsed.html).not.toContain("track.herald.test")
      expect(parsed.html).toMatch(/\/u\/redacted"/)
      expect(parsed.headers.get("x-herald-channel")).toBe("bulk")
    }
    const rows = await query<{ origin: string }>(rig.app.databaseUrl, "SELECT origin FROM messages WHERE id = ANY($1)", [res.json.message_ids])
    expect(rows.map((r) => r.origin)).toEqual(["test_send", "test_send"])
    await new Promise((r) => setTimeout(r, 500))
    const events = await query(rig.app.databaseUrl, "SELECT event FROM events WHERE payload->>'message_id' = ANY($1)", [res.json.message_ids])
    expect(events).toEqual([])
    expect(await usage()).toBe(usedBefore + 2)
  })

  it("renders with the first address alone without a contact", async () => {
    const before = rig.sink.received.length
    const res = await api("POST", `/v1/bulk/campaigns/${campaignId}/test-send`, { to: ["solo@dest.example"] })
    expect(res.status).toBe(200)
    await rig.sink.waitFor(before + 1)
    expect((await simpleParser(rig.sink.received[before]!.raw)).subject).toMatch(/^\[Test\] News for\s*$/)
  })

  it("refuses a suppressed address with param to[i], too many or no addresses, another key's campaign; nothing is queued", async () => {
    expect((await api("POST", "/v1/client/suppressions", { email: "gone@dest.example", reason: "unsubscribe" })).status).toBeLessThan(300)
    const count = async () => (await query(rig.app.databaseUrl, "SELECT id FROM messages WHERE key_id = $1", [sender.keyId])).length
    const before = await count()
    const suppressed = await api("POST", `/v1/bulk/campaigns/${campaignId}/test-send`, { to: ["fine@dest.example", "gone@dest.example"] })
    expect(suppressed.status).toBe(400)
    expect(suppressed.json.error).toMatchObject({ code: "recipient_suppressed", param: "to[1]" })
    const six = Array.from({ length: 6 }, (_, i) => `t${i}@dest.example`)
    expect((await api("POST", `/v1/bulk/campaigns/${campaignId}/test-send`, { to: six })).json.error.code).toBe("validation_failed")
    expect((await api("POST", `/v1/bulk/campaigns/${campaignId}/test-send`, { to: [] })).json.error.code).toBe("validation_failed")
    expect((await api("POST", `/v1/bulk/campaigns/${campaignId}/test-send`, { to: ["x@dest.example"] }, other.token)).status).toBe(404)
    expect((await api("POST", `/v1/bulk/campaigns/${campaignId}/test-send`, { to: ["x@dest.example"], contact: "nobody@dest.example" })).status).toBe(404)
    expect(await count()).toBe(before)
  })
})
