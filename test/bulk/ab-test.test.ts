/**
 * A/B tests (issue 30 item 12) against a running appliance, the MTA and an SMTP sink, with
 * HERALD_AB_WAIT_UNIT_SECONDS=0.4 (a "minute" of the wait is 0.4 s: the shortest wait, 30 minutes, is
 * 12 s): the test share goes out split
 * evenly across the variants, clicks through the /c/ URLs of the delivered mail pick the winner
 * after the wait, and the rest gets the winner only; a pause during the wait holds the decision
 * until resume; cancel ends it; the analytics' variants and winner; preview by variant; the 400s.
 */
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender } from "../support/sending.ts"

const HUMAN_UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)"
const WAIT_MINUTES = 30
const WAIT_UNIT_SECONDS = 0.4

let rig: DeliveryRig
let sender: Sender

const api = (method: string, route: string, body?: unknown) =>
  rig.app.request(method, route, { token: sender.token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

/** A list of `count` contacts at the sink's domain, named by `tag`. */
const listOf = async (tag: string, count: number) => {
  const list = await api("POST", "/v1/bulk/lists", { name: tag })
  const contacts = Array.from({ length: count }, (_, i) => `${tag}${i}@dest.example`)
  expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts })).status).toBe(200)
  return { id: list.json.id as string, contacts }
}

const variants = [
  { subject: "Alpha {{ email }}", html: "<html><body><p>A</p><a href=\"https://shop.example/a\">Shop A</a></body></html>" },
  { subject: "Beta {{ email }}", html: "<html><body><p>B</p><a href=\"https://shop.example/b\">Shop B</a></body></html>" }
]
const abTest = { test_percent: 50, metric: "clicks", wait_minutes: WAIT_MINUTES }

const createAb = async (name: string, listId: string, extra: Record<string, unknown> = {}) => {
  const res = await api("POST", "/v1/bulk/campaigns", { name, from_email: sender.from, list_ids: [listId], variants, ab_test: abTest, ...extra })
  expect(res.status).toBe(201)
  return res.json.id as string
}

/** What the sink got for `contacts`, by recipient: subjects, and the click URL of the delivered html. */
const mailTo = async (contacts: ReadonlyArray<string>) => {
  const wanted = new Set(contacts)
  const got = new Map<string, Array<{ subject: string; click: string | undefined; open: string | undefined }>>()
  for (const m of rig.sink.received) {
    const to = m.rcptTo[0]!
    if (!wanted.has(to)) continue
    const parsed = await simpleParser(m.raw)
    const html = typeof parsed.html === "string" ? parsed.html : ""
    const entry = { subject: parsed.subject ?? "", click: /href="([^"]+\/c\/[^"]+)"/.exec(html)?.[1], open: /src="([^"]+\/o\/[^"]+)"/.exec(html)?.[1] }
    got.set(to, [...(got.get(to) ?? []), entry])
  }
  return got
}

const received = async (contacts: ReadonlyArray<string>, count: number, what: string, timeoutMs = 30_000) =>
  eventually(async () => {
    const got = await mailTo(contacts)
    return [...got.values()].reduce((n, mails) => n + mails.length, 0) >= count ? got : undefined
  }, what, timeoutMs)

const aggregated = () =>
  eventually(async () => (await db<{ n: number }>("SELECT count(*)::int AS n FROM tracking_ingest"))[0]!.n === 0 ? true : undefined, "hits counted")

beforeAll(async () => {
  // 12 s of wait: the test share's delivery, the clicks, their count and the pause take about 2 s
  // on a quiet machine, so the pause and the cancel still land well inside the wait on a loaded one.
  rig = await startDeliveryRig({ HERALD_AB_WAIT_UNIT_SECONDS: String(WAIT_UNIT_SECONDS) })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
}, 60_000)
afterAll(() => rig?.stop())

describe("an A/B test's refusals", () => {
  it("refuses top-level content with variants, one without the other, out-of-range settings, and a test share under 10 a variant", async () => {
    const list = await listOf("few", 30)
    const base = { name: "Bad", from_email: sender.from, list_ids: [list.id] }
    const withSubject = await api("POST", "/v1/bulk/campaigns", { ...base, subject: "Top", variants, ab_test: abTest })
    expect(withSubject.status).toBe(400)
    expect(withSubject.json.error).toMatchObject({ code: "validation_failed", param: "subject" })
    const withHtml = await api("POST", "/v1/bulk/campaigns", { ...base, html: "<p>x</p>", variants, ab_test: abTest })
    expect(withHtml.json.error).toMatchObject({ code: "validation_failed", param: "html" })
    expect((await api("POST", "/v1/bulk/campaigns", { ...base, variants })).json.error).toMatchObject({ param: "ab_test" })
    expect((await api("POST", "/v1/bulk/campaigns", { ...base, subject: "s", html: "<p>x</p>", ab_test: abTest })).json.error)
      .toMatchObject({ param: "variants" })
    for (const bad of [
      { variants: [variants[0]], ab_test: abTest },
      { variants: [...variants, ...variants, variants[0]], ab_test: abTest },
      { variants, ab_test: { ...abTest, test_percent: 9 } },
      { variants, ab_test: { ...abTest, test_percent: 51 } },
      { variants, ab_test: { ...abTest, metric: "bounces" } },
      { variants, ab_test: { ...abTest, wait_minutes: 29 } },
      { variants, ab_test: { ...abTest, wait_minutes: 4321 } }
    ]) {
      const res = await api("POST", "/v1/bulk/campaigns", { ...base, ...bad })
      expect(res.status).toBe(400)
      expect(res.json.error.code).toBe("validation_failed")
    }
    const draft = await api("POST", "/v1/bulk/campaigns", { ...base, subject: "s", html: "<p>x</p>" })
    const patched = await api("PATCH", `/v1/bulk/campaigns/${draft.json.id}`, { variants, ab_test: abTest })
    expect(patched.json.error).toMatchObject({ code: "validation_failed", param: "subject" })
    expect((await api("GET", `/v1/bulk/campaigns/${draft.json.id}`)).json).toMatchObject({ variants: null, ab_test: null })

    // 30 recipients, 50 %: 15 in the test share, 7 a variant. Refused at send, nothing frozen.
    const id = await createAb("Too few", list.id)
    const sent = await api("POST", `/v1/bulk/campaigns/${id}/send`)
    expect(sent.status).toBe(400)
    expect(sent.json.error).toMatchObject({ code: "validation_failed", param: "ab_test.test_percent" })
    expect((await api("GET", `/v1/bulk/campaigns/${id}`)).json).toMatchObject({ status: "draft", total_contacts: null })
    expect(await db("SELECT 1 FROM campaign_recipients WHERE campaign_id = $1", [id])).toEqual([])
  })
})

describe("an A/B test run to its winner", () => {
  // First, alone: it counts every mail the sink gets.
  it("test-sends the variant it is asked for, untracked, and refuses one the campaign does not have", async () => {
    const list = await listOf("abtest", 20)
    const id = await createAb("Test-send by variant", list.id)
    const before = rig.sink.received.length
    const res = await api("POST", `/v1/bulk/campaigns/${id}/test-send`, { to: ["tester@dest.example"], contact: list.contacts[1], variant: 1 })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ ok: true, to: ["tester@dest.example"] })
    await rig.sink.waitFor(before + 1)
    const parsed = await simpleParser(rig.sink.received[before]!.raw)
    expect(parsed.subject).toBe(`[Test] Beta ${list.contacts[1]}`)
    expect(parsed.html).toContain("href=\"https://shop.example/b\"")
    expect(parsed.html).not.toContain("/c/")
    const missing = await api("POST", `/v1/bulk/campaigns/${id}/test-send`, { to: ["tester@dest.example"], variant: 3 })
    expect(missing.status).toBe(400)
    expect(missing.json.error).toMatchObject({ code: "validation_failed", param: "variant" })
    expect(rig.sink.received.length).toBe(before + 1)
  })

  // The two waits side by side (each its own list and campaign): every check below is per campaign
  // or per recipient, and the file no longer waits out one decision time after the other.
  it.concurrent("sends the test share split evenly, holds the rest through the wait (and a pause), then sends the clicked variant to the rest", async () => {
    const list = await listOf("ab", 60)
    const id = await createAb("Subject test", list.id)
    const preview = await api("POST", `/v1/bulk/campaigns/${id}/preview`, { contact: list.contacts[0], variant: 1 })
    expect(preview.json.subject).toBe(`Beta ${list.contacts[0]}`)
    expect(preview.json.html).toContain("https://shop.example/b")
    expect((await api("POST", `/v1/bulk/campaigns/${id}/preview`, { contact: list.contacts[0] })).json.subject).toMatch(/^Alpha /)
    const missing = await api("POST", `/v1/bulk/campaigns/${id}/preview`, { contact: list.contacts[0], variant: 2 })
    expect(missing.json.error).toMatchObject({ code: "validation_failed", param: "variant" })

    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`)).json).toEqual({ id, status: "sending", total_contacts: 60 })
    const test = await received(list.contacts, 30, "the test share delivered")
    const alphas = [...test].filter(([, m]) => m[0]!.subject.startsWith("Alpha"))
    const betas = [...test].filter(([, m]) => m[0]!.subject.startsWith("Beta"))
    expect([alphas.length, betas.length]).toEqual([15, 15])
    // Each got its own variant's content, tracked.
    expect(alphas.every(([to, m]) => m[0]!.subject === `Alpha ${to}` && m[0]!.click !== undefined)).toBe(true)

    // One click on Alpha, four on Beta (one of them twice), opens on both: Beta has the higher unique click rate.
    const get = (url: string) => fetch(url, { redirect: "manual", headers: { "user-agent": HUMAN_UA } })
    const alphaClick = await get(alphas[0]![1][0]!.click!)
    expect(alphaClick.status).toBe(302)
    expect(alphaClick.headers.get("location")).toBe("https://shop.example/a")
    for (const [, m] of [...betas.slice(0, 4), betas[0]!]) {
      const res = await get(m[0]!.click!)
      expect(res.status).toBe(302)
      expect(res.headers.get("location")).toBe("https://shop.example/b")
    }
    for (const [, m] of [...alphas.slice(0, 3), ...betas.slice(0, 2)]) expect((await get(m[0]!.open!)).status).toBe(200)
    await aggregated()

    // Waiting: still sending, no winner, the rest not queued.
    let analytics = (await api("GET", `/v1/bulk/campaigns/${id}/analytics`)).json
    expect(analytics.winner).toBeNull()
    expect(analytics.variants).toEqual([
      { index: 0, subject: variants[0]!.subject, sent: 15, opens_unique: 3, clicks_unique: 1, open_rate: 0.2, click_rate: 0.0667 },
      { index: 1, subject: variants[1]!.subject, sent: 15, opens_unique: 2, clicks_unique: 4, open_rate: 0.1333, click_rate: 0.2667 }
    ])
    expect((await api("GET", `/v1/bulk/campaigns/${id}`)).json).toMatchObject({ status: "sending", total_contacts: 60 })

    // Paused through the end of the wait: no decision until resume.
    expect((await api("POST", `/v1/bulk/campaigns/${id}/pause`)).json.status).toBe("paused")
    const [due] = await db<{ ab_decide_at: Date }>("SELECT ab_decide_at FROM campaigns WHERE id = $1", [id])
    expect(due!.ab_decide_at).not.toBeNull()
    await new Promise((r) => setTimeout(r, Math.max(0, due!.ab_decide_at.getTime() - Date.now()) + 2_500))
    expect((await db("SELECT ab_winner FROM campaigns WHERE id = $1", [id]))[0]).toEqual({ ab_winner: null })
    expect((await db("SELECT 1 FROM messages WHERE campaign_id = $1", [id])).length).toBe(30)
    expect((await api("POST", `/v1/bulk/campaigns/${id}/resume`)).json.status).toBe("sending")

    const all = await received(list.contacts, 60, "the rest delivered")
    // Everyone exactly one mail; the rest all Beta.
    expect([...all.values()].every((m) => m.length === 1)).toBe(true)
    expect(all.size).toBe(60)
    const rest = list.contacts.filter((to) => !test.has(to))
    expect(rest).toHaveLength(30)
    expect(rest.every((to) => all.get(to)![0]!.subject === `Beta ${to}`)).toBe(true)
    const done = await eventually(async () => {
      const c = (await api("GET", `/v1/bulk/campaigns/${id}`)).json
      return c.status === "completed" ? c : undefined
    }, "the campaign completed")
    expect(done).toMatchObject({ sent_count: 60, failed_count: 0 })
    analytics = (await api("GET", `/v1/bulk/campaigns/${id}/analytics`)).json
    expect(analytics.winner).toBe(1)
    expect(analytics.variants.map((v: { sent: number }) => v.sent)).toEqual([15, 45])
  }, 120_000)

  it.concurrent("ends with cancel during the wait: no winner, the rest never sent", async () => {
    const list = await listOf("cancelled", 40)
    const id = await createAb("Cancelled test", list.id)
    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`)).json.status).toBe("sending")
    await received(list.contacts, 20, "the test share delivered")
    expect((await api("POST", `/v1/bulk/campaigns/${id}/cancel`)).json.status).toBe("cancelled")
    const [due] = await db<{ ab_decide_at: Date }>("SELECT ab_decide_at FROM campaigns WHERE id = $1", [id])
    await new Promise((r) => setTimeout(r, Math.max(0, due!.ab_decide_at.getTime() - Date.now()) + 2_500))
    expect((await db("SELECT ab_winner FROM campaigns WHERE id = $1", [id]))[0]).toEqual({ ab_winner: null })
    expect((await db("SELECT 1 FROM messages WHERE campaign_id = $1", [id])).length).toBe(20)
    expect((await api("GET", `/v1/bulk/campaigns/${id}/analytics`)).json.winner).toBeNull()
  }, 90_000)
})
