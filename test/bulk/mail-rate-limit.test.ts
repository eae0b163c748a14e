/**
 * The bulk calls that produce mail — a template's test-send, a campaign's send, a sequence's
 * enrolment — count in the key's per-minute window together with the sends (DESIGN "Which calls
 * count against the per-minute rate limit"): each carries the RateLimit headers, and once the
 * window is full each answers 429 `rate_limit_exceeded` and changes nothing. The CRUD calls around
 * them are never limited.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { type SendingApp, startSendingApp } from "../support/sending.ts"

const RATE = 3
let rig: SendingApp

beforeAll(async () => {
  rig = await startSendingApp()
  const limits = await rig.app.request("PATCH", `/v1/admin/accounts/${rig.sender.accountId}/limits`, { body: { rate_per_min: RATE } })
  expect(limits.status).toBe(200)
})
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown) =>
  rig.app.request(method, route, { token: rig.sender.token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

describe("the bulk calls that produce mail", () => {
  it("share the sends' window: RateLimit headers on each, then 429 for each, and nothing changed", async () => {
    const from = rig.sender.from
    const template = await api("POST", "/v1/bulk/templates", { name: "T", subject: "S", html: "<p>x</p>", from_email: from })
    const list = await api("POST", "/v1/bulk/lists", { name: "L" })
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: ["delivered@simulator.herald.invalid"] })).status).toBe(200)
    const campaign = (name: string) => api("POST", "/v1/bulk/campaigns", { name, from_email: from, subject: "S", body_text: "b", list_ids: [list.json.id] })
    const first = await campaign("first")
    const second = await campaign("second")
    const sequence = await api("POST", "/v1/bulk/sequences", { name: "Q", from_email: from })
    expect((await api("POST", `/v1/bulk/sequences/${sequence.json.id}/steps`, { subject: "S", html: "<p>x</p>", offset_seconds: 3600 })).status).toBe(201)

    const calls = {
      testSend: () => api("POST", `/v1/bulk/templates/${template.json.id}/test-send`, { to_email: "delivered@simulator.herald.invalid" }),
      campaignSend: (id: string) => api("POST", `/v1/bulk/campaigns/${id}/send`),
      enroll: () => api("POST", `/v1/bulk/sequences/${sequence.json.id}/enroll`, { list_id: list.json.id })
    }
    const allowed = [await calls.testSend(), await calls.campaignSend(first.json.id), await calls.enroll()]
    expect(allowed.map((r) => r.status)).toEqual([200, 200, 200])
    expect(allowed.map((r) => r.headers.get("ratelimit-limit"))).toEqual([String(RATE), String(RATE), String(RATE)])

    const refused = [await calls.testSend(), await calls.campaignSend(second.json.id), await calls.enroll()]
    for (const res of refused) {
      expect(res.status).toBe(429)
      expect(res.json.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
      expect(res.headers.get("ratelimit-remaining")).toBe("0")
    }
    // The refused campaign is still a draft, the refused test-send queued nothing, nobody was enrolled twice.
    expect((await api("GET", `/v1/bulk/campaigns/${second.json.id}`)).json.status).toBe("draft")
    const testSends = await db<{ n: number }>("SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND content->>'origin' = 'test_send'", [rig.sender.accountId])
    expect(testSends[0]!.n).toBe(1)
    expect((await api("GET", `/v1/bulk/sequences/${sequence.json.id}/subscriptions`)).json.total).toBe(1)
    // CRUD calls are never limited.
    expect((await api("GET", "/v1/bulk/campaigns")).status).toBe(200)
    expect((await api("POST", "/v1/bulk/lists", { name: "another" })).status).toBe(201)
  })
})
