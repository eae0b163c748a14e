/**
 * What a campaign's pause, resume and cancel do to its rows in the MTA's queue, and the quota
 * pause after the start (DESIGN "Quota, suspension and verification after the start"). The MTA is
 * off in this file, so the queued rows stay as the campaign left them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { newSender, type SendingApp, startSendingApp } from "../support/sending.ts"

let env: SendingApp

beforeAll(async () => {
  env = await startSendingApp()
})
afterAll(() => env.stop())

interface Row {
  readonly state: string
  readonly held_at: Date | null
  readonly next_attempt_at: Date
  readonly attempts: number
}

const setUp = async (token: string, from: string, count: number) => {
  const api = (method: string, route: string, body?: unknown) => env.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
  const list = await api("POST", "/v1/bulk/lists", { name: "queue" })
  await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: Array.from({ length: count }, (_, i) => `q${i}@dest.example`) })
  const c = await api("POST", "/v1/bulk/campaigns", { name: "Queue", from_email: from, subject: "s", body_text: "b", list_ids: [list.json.id] })
  expect(c.status).toBe(201)
  return { api, id: c.json.id as string }
}

const rowsOf = (id: string) =>
  query<Row & Record<string, unknown>>(env.app.databaseUrl, `SELECT d.state, d.held_at, d.next_attempt_at, d.attempts
    FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1`, [id])

describe("pause, resume and cancel", () => {
  it("hold the queued rows, wake them, then drop the rows never attempted", async () => {
    const { api, id } = await setUp(env.sender.token, env.sender.from, 5)
    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`)).json).toEqual({ id, status: "sending", total_contacts: 5 })
    await eventually(async () => ((await rowsOf(id)).length === 5 ? true : undefined), "fan-out")

    const paused = await api("POST", `/v1/bulk/campaigns/${id}/pause`)
    expect(paused.json).toMatchObject({ status: "paused", pause_reason: "manual" })
    const held = await rowsOf(id)
    expect(held.every((r) => r.state === "queued" && r.held_at !== null && r.next_attempt_at.getTime() > Date.now())).toBe(true)

    const resumed = await api("POST", `/v1/bulk/campaigns/${id}/resume`)
    expect(resumed.json).toMatchObject({ status: "sending", pause_reason: null, total_contacts: 5 })
    const woken = await rowsOf(id)
    expect(woken.every((r) => r.state === "queued" && r.held_at === null && r.next_attempt_at.getTime() <= Date.now())).toBe(true)

    const cancelled = await api("POST", `/v1/bulk/campaigns/${id}/cancel`)
    expect(cancelled.json).toMatchObject({ status: "cancelled", sent_count: 0, failed_count: 0 })
    expect((await rowsOf(id)).map((r) => [r.state, r.attempts])).toEqual(Array(5).fill(["failed", 0]))
    const events = await query(env.app.databaseUrl, `SELECT event FROM events WHERE payload->>'campaign_id' = $1`, [id])
    expect(events).toEqual([])
  })
})

describe("the quota after the start", () => {
  it("pauses the campaign with quota_exhausted, its remaining contacts unqueued; resume is refused while it lasts", async () => {
    const sender = await newSender(env.app, env.dns)
    // A quota of 3 recipients this month, no overage (an account without a plan).
    await query(env.app.databaseUrl, `UPDATE accounts SET monthly_quota_override = 3 WHERE id = $1`, [sender.accountId])
    const { api, id } = await setUp(sender.token, sender.from, 5)
    // allow_partial: start although the quota cannot cover every recipient (without it, 400 overage_not_offered).
    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`, { allow_partial: true })).json).toEqual({ id, status: "sending", total_contacts: 5 })
    const paused = await eventually(async () => {
      const c = (await api("GET", `/v1/bulk/campaigns/${id}`)).json
      return c.status === "paused" ? c : undefined
    }, "the quota pause")
    expect(paused).toMatchObject({ pause_reason: "quota_exhausted", total_contacts: 5 })
    expect((await rowsOf(id)).length).toBe(3)
    const resumed = await api("POST", `/v1/bulk/campaigns/${id}/resume`)
    expect(resumed.status).toBe(429)
    expect(resumed.json.error.code).toBe("monthly_quota_exceeded")
    expect((await api("GET", `/v1/bulk/campaigns/${id}`)).json).toMatchObject({ status: "paused", pause_reason: "quota_exhausted" })
  })

  it("queues up to the last recipient that fits, simulator addresses free, and after more quota the rest: none skipped", async () => {
    const sender = await newSender(env.app, env.dns)
    await query(env.app.databaseUrl, `UPDATE accounts SET monthly_quota_override = 1 WHERE id = $1`, [sender.accountId])
    const api = (method: string, route: string, body?: unknown) =>
      env.app.request(method, route, { token: sender.token, ...(body === undefined ? {} : { body }) })
    const list = await api("POST", "/v1/bulk/lists", { name: "order" })
    // One call each, so the frozen order (by creation) is this one: two charged, one free, one charged.
    const emails = ["r1@dest.example", "r2@dest.example", "delivered@simulator.herald.invalid", "r3@dest.example"]
    for (const email of emails) expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: [email] })).status).toBe(200)
    const c = await api("POST", "/v1/bulk/campaigns", { name: "Order", from_email: sender.from, subject: "s", body_text: "b", list_ids: [list.json.id] })
    const id = c.json.id as string
    const queued = async () =>
      (await query<{ recipient: string }>(env.app.databaseUrl, `SELECT d.recipient FROM deliveries d JOIN messages m ON m.id = d.message_id
        WHERE m.campaign_id = $1 ORDER BY m.personalization_index`, [id])).map((r) => r.recipient)
    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`, { allow_partial: true })).status).toBe(200)
    await eventually(async () => ((await api("GET", `/v1/bulk/campaigns/${id}`)).json.status === "paused" ? true : undefined), "the quota pause")
    // The quota's one recipient, and nothing past it: r2 does not fit, so neither the free address after it.
    expect(await queued()).toEqual(["r1@dest.example"])

    await query(env.app.databaseUrl, `UPDATE accounts SET monthly_quota_override = 10 WHERE id = $1`, [sender.accountId])
    expect((await api("POST", `/v1/bulk/campaigns/${id}/resume`)).status).toBe(200)
    await eventually(async () => ((await queued()).length === emails.length ? true : undefined), "the rest queued")
    expect(await queued()).toEqual(emails)
    const [usage] = await query<{ sent: number }>(env.app.databaseUrl, "SELECT sent FROM account_usage WHERE account_id = $1", [sender.accountId])
    expect(usage!.sent).toBe(3)
  })
})
