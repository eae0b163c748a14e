/**
 * What a marketer meets in a campaign's second week (issue 30 items 1-6 and 11), against a real
 * appliance, SMTP sink and DNS server: a scheduled campaign taken off its schedule and a paused
 * one put back on it; a send the quota cannot cover refused (or paused when it comes due); why a
 * campaign paused when it came due incomplete, and a segment a campaign needs kept; a pending
 * member's confirmation sent again after its link expired; a deleted contact's running sequences
 * cancelled visibly, and its address not enrolled again when re-created; a deleted campaign's
 * counters kept in the key's rates.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, siblingKey } from "../support/sending.ts"
import { sleep } from "../support/net.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
}, 60_000)
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })

const listWith = async (emails: ReadonlyArray<string>, token = sender.token) => {
  const list = await api("POST", "/v1/bulk/lists", { name: `list ${Math.random()}` }, token)
  expect(list.status).toBe(201)
  const added = await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: emails }, token)
  expect(added.status).toBe(200)
  return list.json.id as string
}

const draft = async (fields: Record<string, unknown>, who: { readonly token: string; readonly from: string } = sender) => {
  const created = await api("POST", "/v1/bulk/campaigns", { name: "Week two", from_email: who.from, subject: "Hi", body_text: "Hello", ...fields }, who.token)
  expect(created.status).toBe(201)
  return created.json.id as string
}

const campaign = async (id: string) => (await api("GET", `/v1/bulk/campaigns/${id}`)).json
const call = (id: string, action: string, body?: unknown) => api("POST", `/v1/bulk/campaigns/${id}/${action}`, body)

describe("item 1: a scheduled campaign can be changed", () => {
  it("unschedule takes a scheduled campaign back to an editable draft; 409 from any other state, 404 for another key", async () => {
    const listId = await listWith(["delivered+u1@simulator.herald.invalid"])
    const id = await draft({ list_ids: [listId] })
    const at = new Date(Date.now() + 3_600_000).toISOString()
    expect((await call(id, "send", { scheduled_at: at })).json).toMatchObject({ status: "scheduled", scheduled_at: at })

    const other = await siblingKey(rig.app, sender)
    expect((await api("POST", `/v1/bulk/campaigns/${id}/unschedule`, undefined, other.token)).status).toBe(404)

    const back = await call(id, "unschedule")
    expect(back.status).toBe(200)
    expect(back.json).toMatchObject({ id, status: "draft", scheduled_at: null, pause_reason: null, total_contacts: null })
    expect((await api("PATCH", `/v1/bulk/campaigns/${id}`, { subject: "Changed" })).json).toMatchObject({ subject: "Changed" })

    // draft, paused, sending: not scheduled, so 409 conflict and nothing changed.
    const refused = async () => {
      const before = await campaign(id)
      const res = await call(id, "unschedule")
      expect({ status: res.status, code: res.json.error?.code }).toEqual({ status: 409, code: "conflict" })
      expect(await campaign(id)).toEqual(before)
    }
    await refused()
    expect((await call(id, "send", { scheduled_at: at })).status).toBe(200)
    expect((await call(id, "pause")).status).toBe(200)
    await refused()
    expect((await call(id, "send", {})).json).toMatchObject({ status: "sending" })
    await refused()
  })

  it("resume puts a campaign paused before its start back on its schedule while its time is ahead, and sends once it has passed", async () => {
    const listId = await listWith(["delivered+u2@simulator.herald.invalid"])
    const later = await draft({ list_ids: [listId] })
    const at = new Date(Date.now() + 3_600_000).toISOString()
    expect((await call(later, "send", { scheduled_at: at })).status).toBe(200)
    expect((await call(later, "pause")).json).toMatchObject({ status: "paused", pause_reason: "manual" })
    const resumed = await call(later, "resume")
    expect(resumed.status).toBe(200)
    expect(resumed.json).toMatchObject({ status: "scheduled", scheduled_at: at, pause_reason: null, total_contacts: null, started_at: null })

    // Its time passed while paused: resume sends now, as before.
    const soon = await draft({ list_ids: [listId] })
    expect((await call(soon, "send", { scheduled_at: new Date(Date.now() + 1_500).toISOString() })).status).toBe(200)
    expect((await call(soon, "pause")).status).toBe(200)
    await sleep(2_000)
    expect((await call(soon, "resume")).json).toMatchObject({ status: "sending", total_contacts: 1 })
  })
})

describe("item 2: a campaign the quota cannot cover does not start", () => {
  /** An account without overage whose monthly quota is `quota`. */
  const withQuota = async (quota: number) => {
    const owner = await newSender(rig.app, rig.dns)
    const limits = await rig.app.request("PATCH", `/v1/admin/accounts/${owner.accountId}/limits`, { body: { rate_per_min: 1000, monthly_quota: quota } })
    expect(limits.status).toBe(200)
    return owner
  }
  const frozen = async (id: string) =>
    (await query<{ n: number }>(rig.app.databaseUrl, "SELECT count(*)::int AS n FROM campaign_recipients WHERE campaign_id = $1", [id]))[0]!.n

  it("refuses a send whose recipients exceed what is left with 400 overage_not_offered, nothing changed; allow_partial starts it", async () => {
    const owner = await withQuota(3)
    const as = (method: string, route: string, body?: unknown) => api(method, route, body, owner.token)
    // Five charged recipients and two free simulator ones: 5 needed, 3 left.
    const listId = await listWith([1, 2, 3, 4, 5].map((i) => `q${i}@dest.example`).concat(["delivered+q1@simulator.herald.invalid", "delivered+q2@simulator.herald.invalid"]), owner.token)
    const id = await draft({ list_ids: [listId] }, owner)
    const before = (await as("GET", `/v1/bulk/campaigns/${id}`)).json

    const refused = await as("POST", `/v1/bulk/campaigns/${id}/send`, {})
    expect(refused.status).toBe(400)
    expect(refused.json.error).toMatchObject({ type: "invalid_request_error", code: "overage_not_offered" })
    expect(refused.json.error.message).toContain("needs 5 emails but only 3 of the monthly quota (0/3 used) remain")
    expect((await as("GET", `/v1/bulk/campaigns/${id}`)).json).toEqual(before)
    expect(await frozen(id)).toBe(0)

    // The same campaign to the simulator addresses alone fits: they are free.
    const free = await listWith(["delivered+q3@simulator.herald.invalid"], owner.token)
    const fits = await draft({ list_ids: [free] }, owner)
    expect((await as("POST", `/v1/bulk/campaigns/${fits}/send`, {})).json).toMatchObject({ status: "sending", total_contacts: 1 })

    const partial = await as("POST", `/v1/bulk/campaigns/${id}/send`, { allow_partial: true })
    expect(partial.json).toEqual({ id, status: "sending", total_contacts: 7 })
    const paused = await eventually(async () => {
      const c = (await as("GET", `/v1/bulk/campaigns/${id}`)).json
      return c.status === "paused" ? c : undefined
    }, "paused when the quota ran out")
    expect(paused.pause_reason).toBe("quota_exhausted")
  })

  it("pauses a scheduled campaign the quota cannot cover when it comes due, with quota_exhausted and nothing frozen", async () => {
    const owner = await withQuota(2)
    const as = (method: string, route: string, body?: unknown) => api(method, route, body, owner.token)
    const listId = await listWith(["s1@dest.example", "s2@dest.example", "s3@dest.example"], owner.token)
    const id = await draft({ list_ids: [listId] }, owner)
    expect((await as("POST", `/v1/bulk/campaigns/${id}/send`, { scheduled_at: new Date(Date.now() + 1_000).toISOString() })).status).toBe(200)
    const paused = await eventually(async () => {
      const c = (await as("GET", `/v1/bulk/campaigns/${id}`)).json
      return c.status === "paused" ? c : undefined
    }, "paused when due")
    expect(paused).toMatchObject({ pause_reason: "quota_exhausted", total_contacts: null, started_at: null })
    expect(await frozen(id)).toBe(0)
    const [messages] = await query<{ n: number }>(rig.app.databaseUrl, "SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1", [id])
    expect(messages!.n).toBe(0)

    // Scheduled with allow_partial: it starts and sends what fits.
    const partial = await draft({ list_ids: [listId] }, owner)
    const at = new Date(Date.now() + 1_000).toISOString()
    expect((await as("POST", `/v1/bulk/campaigns/${partial}/send`, { scheduled_at: at, allow_partial: true })).status).toBe(200)
    const started = await eventually(async () => {
      const c = (await as("GET", `/v1/bulk/campaigns/${partial}`)).json
      return c.status === "paused" ? c : undefined
    }, "started, then paused part-way")
    expect(started).toMatchObject({ pause_reason: "quota_exhausted", total_contacts: 3 })
    expect(started.started_at).not.toBeNull()
  })
})

describe("item 3: why a campaign paused, and a segment it needs", () => {
  const pausedWhenDue = (id: string) =>
    eventually(async () => {
      const c = await campaign(id)
      return c.status === "paused" ? c : undefined
    }, "paused when due")

  it("pauses a campaign that comes due with its template's sender removed with content_incomplete and what is missing", async () => {
    const listId = await listWith(["delivered+i1@simulator.herald.invalid"])
    const template = await api("POST", "/v1/bulk/templates", { name: "t", subject: "s", body_text: "b", from_email: sender.from })
    expect(template.status).toBe(201)
    const id = await draft({ list_ids: [listId], template_id: template.json.id, from_email: null, subject: null, body_text: null })
    expect((await call(id, "send", { scheduled_at: new Date(Date.now() + 1_500).toISOString() })).status).toBe(200)
    expect((await api("PATCH", `/v1/bulk/templates/${template.json.id}`, { from_email: null })).status).toBe(200)
    const paused = await pausedWhenDue(id)
    expect(paused).toMatchObject({
      pause_reason: "content_incomplete",
      pause_message: "No sender: set from_email on the campaign or its template",
      total_contacts: null
    })
    // A manual pause says nothing more.
    const manual = await draft({ list_ids: [listId] })
    expect((await call(manual, "send", { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() })).status).toBe(200)
    expect((await call(manual, "pause")).json).toMatchObject({ pause_reason: "manual", pause_message: null })
  })

  it("refuses to delete a segment a campaign not yet completed names with 409 conflict; a finished one lets it go", async () => {
    const segment = await api("POST", "/v1/bulk/segments", { name: "all", rules: { match: "all", rules: [{ field: "status", op: "is", value: "active" }] } })
    expect(segment.status).toBe(201)
    const segmentId = segment.json.id as string
    const id = await draft({ segment_id: segmentId })
    expect((await call(id, "send", { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() })).status).toBe(200)

    const refused = await api("DELETE", `/v1/bulk/segments/${segmentId}`)
    expect(refused.status).toBe(409)
    expect(refused.json.error.code).toBe("conflict")
    expect(refused.json.error.message).toContain(`campaign ${id} (scheduled)`)
    expect((await api("GET", `/v1/bulk/segments/${segmentId}`)).status).toBe(200)
    const other = await siblingKey(rig.app, sender)
    expect((await api("DELETE", `/v1/bulk/segments/${segmentId}`, undefined, other.token)).status).toBe(404)

    expect((await call(id, "cancel")).status).toBe(200)
    expect((await api("DELETE", `/v1/bulk/segments/${segmentId}`)).json).toEqual({ id: segmentId, deleted: true })
  })
})

describe("item 6: a pending member is not stuck", () => {
  it("resend-confirmation queues a new confirmation (202 queued) once the 24 h are over; 429 inside them, 409 unless pending, 404 for another key", async () => {
    const owner = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const as = (method: string, route: string, token = owner.token) => api(method, route, undefined, token)
    const created = await api("POST", "/v1/bulk/lists", { name: "Opt-in" }, owner.token)
    const listId = created.json.id as string
    expect((await api("PUT", `/v1/bulk/lists/${listId}/confirmation`, { require_confirmation: true, confirm_from_email: `news@${owner.domain}` }, owner.token)).status).toBe(200)
    const email = "late@dest.example"
    expect((await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: [email] }, owner.token)).status).toBe(200)
    const route = `/v1/bulk/lists/${listId}/contacts/${encodeURIComponent(email)}/resend-confirmation`
    const confirmations = async () =>
      (await query<{ n: number }>(rig.app.databaseUrl, `SELECT count(*)::int AS n FROM messages m JOIN deliveries d ON d.message_id = m.id
        WHERE m.origin = 'confirmation' AND lower(d.recipient) = $1`, [email]))[0]!.n
    expect(await confirmations()).toBe(1)

    const early = await as("POST", route)
    expect(early.status).toBe(429)
    expect(early.json.error.code).toBe("confirmation_recently_sent")
    expect(Number(early.headers.get("retry-after"))).toBeGreaterThan(0)

    // Eight days later: the first link has expired, the 24 h bound is long over.
    await query(rig.app.databaseUrl, "UPDATE confirmation_sends SET sent_at = sent_at - interval '8 days' WHERE list_id = $1", [listId])
    const other = await siblingKey(rig.app, owner)
    expect((await as("POST", route, other.token)).status).toBe(404)
    const again = await as("POST", route)
    expect(again.status).toBe(202)
    expect(again.json).toEqual({ queued: true })
    expect(await confirmations()).toBe(2)
    expect((await as("POST", route)).status).toBe(429)

    // Confirmed (or on a list without confirmation): nothing to resend.
    await query(rig.app.databaseUrl, "UPDATE list_memberships SET status = 'confirmed' WHERE list_id = $1", [listId])
    const confirmed = await as("POST", route)
    expect({ status: confirmed.status, code: confirmed.json.error?.code }).toEqual({ status: 409, code: "conflict" })
    expect((await as("POST", `/v1/bulk/lists/${listId}/contacts/nobody%40dest.example/resend-confirmation`)).status).toBe(404)
  })
})

describe("item 5: deleting a contact ends its sequences visibly", () => {
  it("cancels each running subscription with sequence.cancelled (manual) first; re-created, the address is not enrolled again", async () => {
    const sequence = await api("POST", "/v1/bulk/sequences", { name: "Welcome", from_email: sender.from })
    expect(sequence.status).toBe(201)
    const id = sequence.json.id as string
    expect((await api("POST", `/v1/bulk/sequences/${id}/steps`, { subject: "Later", html: "<p>x</p>", offset_seconds: 86_400 })).status).toBe(201)
    const email = "leaving@dest.example"
    const listId = await listWith([email, "staying@dest.example"])
    expect((await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: listId })).json).toMatchObject({ enrolled: 2 })

    const removed = await api("DELETE", `/v1/bulk/contacts/${encodeURIComponent(email)}`)
    expect(removed.status).toBe(200)
    const subscriptions = (await api("GET", `/v1/bulk/sequences/${id}/subscriptions?limit=200`)).json.items as Array<Record<string, unknown>>
    expect(subscriptions.find((s) => s.email === email)).toMatchObject({ state: "cancelled", reason: "manual", contact_id: null })
    expect(subscriptions.find((s) => s.email === "staying@dest.example")).toMatchObject({ state: "active" })
    const events = await query<{ payload: Record<string, unknown> }>(rig.app.databaseUrl,
      "SELECT payload FROM events WHERE event = 'sequence.cancelled' AND payload->>'campaign_id' = $1", [id])
    expect(events.map((e) => ({ email: e.payload.email, campaign_id: e.payload.campaign_id, reason: e.payload.reason })))
      .toEqual([{ email, campaign_id: id, reason: "manual" }])

    // The same address back as a new contact on the list: the subscription it ended still counts.
    expect((await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: [email] })).status).toBe(200)
    expect((await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: listId })).json).toMatchObject({ enrolled: 0, already_in: 1, skipped_terminal: 1 })
  })
})

describe("item 4: a deleted campaign's aggregate counters stay", () => {
  it("keeps a deleted campaign's deliveries and bounces in GET /v1/bulk/analytics/rates", async () => {
    const owner = await newSender(rig.app, rig.dns, { packageId: "growth" })
    const as = (method: string, route: string) => api(method, route, undefined, owner.token)
    const listId = await listWith(["delivered+r1@simulator.herald.invalid", "delivered+r2@simulator.herald.invalid", "bounce+r3@simulator.herald.invalid"], owner.token)
    const id = await draft({ list_ids: [listId] }, owner)
    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`, {}, owner.token)).json).toMatchObject({ status: "sending", total_contacts: 3 })
    await eventually(async () => ((await as("GET", `/v1/bulk/campaigns/${id}`)).json.status === "completed" ? true : undefined), "completed")
    const before = (await as("GET", "/v1/bulk/analytics/rates?period=24h")).json
    expect(before).toMatchObject({ delivered: 2, bounces: 1 })

    expect((await as("DELETE", `/v1/bulk/campaigns/${id}`)).status).toBe(200)
    expect((await as("GET", `/v1/bulk/campaigns/${id}`)).status).toBe(404)
    const after = (await as("GET", "/v1/bulk/analytics/rates?period=24h")).json
    expect(after).toMatchObject({ delivered: 2, bounces: 1, opens_unique: before.opens_unique, rates: before.rates })
  })
})
