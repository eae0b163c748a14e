/**
 * The step scheduler on TestClock (in-process services on the appliance's database, MTA off so
 * the queue rows stay to be read): three steps at their offsets, each queued once as the
 * `sequence` stored message on channel `bulk`; an inactive sequence holds its due step; and two
 * schedulers on one database (two connection pools, as two appliances) queue each step once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { schedulerPassAt } from "../support/sequences.ts"
import { type Sender, type SendingApp, startSendingApp } from "../support/sending.ts"

let rig: SendingApp
let sender: Sender

beforeAll(async () => {
  rig = await startSendingApp()
  sender = rig.sender
})
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown) => rig.app.request(method, route, { token: sender.token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

/** One scheduler pass with the Clock at `atMs`. */
const passAt = (atMs: number) => schedulerPassAt(rig.app, atMs)

const HOUR = 3_600_000

/** A sequence with three steps (1 h, then 2 h, then 1 h) and `emails` enrolled; answers its id and the enrolment time. */
const enrolled = async (emails: ReadonlyArray<string>) => {
  const seq = await api("POST", "/v1/bulk/sequences", { name: "Drip", from_email: sender.from })
  for (const [i, offset] of [3600, 7200, 3600].entries()) {
    expect((await api("POST", `/v1/bulk/sequences/${seq.json.id}/steps`, { subject: `Step ${i + 1}`, html: `<p>{{ email }} ${i + 1}</p>`, offset_seconds: offset })).status).toBe(201)
  }
  const list = await api("POST", "/v1/bulk/lists", { name: `L${Math.random()}` })
  await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: emails })
  expect((await api("POST", `/v1/bulk/sequences/${seq.json.id}/enroll`, { list_id: list.json.id })).json.enrolled).toBe(emails.length)
  const [row] = await db<{ enrolled_at: Date }>("SELECT min(enrolled_at) AS enrolled_at FROM sequence_subscriptions WHERE sequence_id = $1", [seq.json.id])
  return { id: seq.json.id as string, t0: row!.enrolled_at.getTime() }
}

const queuedSteps = (sequenceId: string) =>
  db<{ step: number; channel: string; origin: string; to: string; subject: string; due: string }>(
    `SELECT (m.content->>'step')::int AS step, m.channel, m.origin, m.content->'to'->>'email' AS to, m.subject, m.content->>'sequence_id' AS due
     FROM messages m WHERE m.content->>'sequence_id' = $1 ORDER BY m.created_at, (m.content->>'step')::int`, [sequenceId])

describe("step scheduler", () => {
  it("queues three steps at their offsets from the previous due time, once each", async () => {
    const { id, t0 } = await enrolled(["delivered+a@simulator.herald.invalid"])
    await passAt(t0 + HOUR - 1000)
    expect(await queuedSteps(id)).toEqual([])
    await passAt(t0 + HOUR)
    await passAt(t0 + HOUR + 5000)
    expect((await queuedSteps(id)).map((m) => [m.step, m.channel, m.origin, m.to, m.subject])).toEqual([
      [1, "bulk", "sequence", "delivered+a@simulator.herald.invalid", "Step 1"]
    ])
    // The second step is due two hours after the first's due time, however late the first went.
    await passAt(t0 + 3 * HOUR - 1000)
    expect(await queuedSteps(id)).toHaveLength(1)
    await passAt(t0 + 3 * HOUR)
    await passAt(t0 + 4 * HOUR)
    expect((await queuedSteps(id)).map((m) => m.step)).toEqual([1, 2, 3])
    const [sub] = await db<{ state: string; next_due_at: Date | null; last_step_id: number }>(
      "SELECT state, next_due_at, last_step_id FROM sequence_subscriptions WHERE sequence_id = $1", [id])
    expect(sub).toEqual({ state: "active", next_due_at: null, last_step_id: 3 })
    const [content] = await db<{ content: any }>(
      "SELECT c.content FROM messages m JOIN message_contents c ON c.id = m.content_id WHERE m.content->>'sequence_id' = $1 AND m.content->>'step' = '1'", [id])
    expect(content!.content).toMatchObject({ from: { email: sender.from }, subject: "Step 1" })
    expect(content!.content.content).toContainEqual({ type: "text/html", value: "<p>{{ email }} 1</p>" })
    // Every step queued: completed once the last one's delivery reaches a final state (the MTA is off here).
    await passAt(t0 + 5 * HOUR)
    expect((await db("SELECT 1 FROM events WHERE event = 'sequence.completed' AND payload->>'campaign_id' = $1", [id]))).toHaveLength(0)
  })

  it("writes a pass's steps together: each contact's message, one stored copy of the step's shared part", async () => {
    const emails = ["delivered+p1@simulator.herald.invalid", "delivered+p2@simulator.herald.invalid", "delivered+p3@simulator.herald.invalid"]
    const { id, t0 } = await enrolled(emails)
    await passAt(t0 + HOUR)
    const rows = await db<{ to: string; content_id: string; step: number }>(
      `SELECT m.content->'to'->>'email' AS to, m.content_id, (m.content->>'step')::int AS step FROM messages m
       WHERE m.content->>'sequence_id' = $1 ORDER BY 1`, [id])
    expect(rows.map((r) => [r.to, r.step])).toEqual(emails.map((e) => [e, 1]))
    // One shared part for the three (step by step, each message stored its own).
    expect(new Set(rows.map((r) => r.content_id)).size).toBe(1)
    const subs = await db<{ last_step_id: number; next_due_at: Date }>(
      "SELECT last_step_id, next_due_at FROM sequence_subscriptions WHERE sequence_id = $1", [id])
    expect(subs.map((x) => [x.last_step_id, x.next_due_at.getTime()])).toEqual(emails.map(() => [1, t0 + 3 * HOUR]))
  })

  it("holds due steps of an inactive sequence and sends them once it is active again", async () => {
    const { id, t0 } = await enrolled(["delivered+b@simulator.herald.invalid"])
    await api("PATCH", `/v1/bulk/sequences/${id}`, { status: "inactive" })
    await passAt(t0 + 2 * HOUR)
    expect(await queuedSteps(id)).toEqual([])
    await api("PATCH", `/v1/bulk/sequences/${id}`, { status: "active" })
    await passAt(t0 + 2 * HOUR)
    expect((await queuedSteps(id)).map((m) => m.step)).toEqual([1])
  })

  it("completes a subscription once its last step has a final state, stamped no earlier than that outcome", async () => {
    const { id, t0 } = await enrolled(["delivered+c@simulator.herald.invalid"])
    for (const at of [t0 + HOUR, t0 + 3 * HOUR, t0 + 4 * HOUR]) await passAt(at)
    expect((await queuedSteps(id)).map((m) => m.step)).toEqual([1, 2, 3])
    const completedEvents = () =>
      db<{ payload: any; created_at: Date }>("SELECT payload, created_at FROM events WHERE event = 'sequence.completed' AND payload->>'campaign_id' = $1", [id])
    // The last step's delivery is still queued (the MTA is off here): not completed.
    await passAt(t0 + 4 * HOUR + 1000)
    expect(await completedEvents()).toEqual([])
    // Its outcome written (as the MTA writes it) at a moment after the pass's clock reading.
    const outcomeAt = new Date(t0 + 4 * HOUR + 10 * 60_000)
    await db(`UPDATE deliveries SET state = 'sent', completed_at = $2 WHERE message_id IN (SELECT m.id FROM messages m
      WHERE m.content->>'sequence_id' = $1 AND m.content->>'step' = '3')`, [id, outcomeAt])
    await passAt(t0 + 4 * HOUR + 2000)
    await passAt(t0 + 4 * HOUR + 3000)
    const events = await completedEvents()
    expect(events).toEqual([{ payload: { email: "delivered+c@simulator.herald.invalid", campaign_id: id }, created_at: outcomeAt }])
    const [sub] = await db<{ state: string }>("SELECT state FROM sequence_subscriptions WHERE sequence_id = $1", [id])
    expect(sub!.state).toBe("completed")
  })

  it("queues each step once with two schedulers on one database", async () => {
    const emails = Array.from({ length: 120 }, (_, i) => `delivered+r${i}@simulator.herald.invalid`)
    const { id, t0 } = await enrolled(emails)
    // Two service layers: two connection pools claiming at once, as two appliances would.
    for (let round = 0; round < 4; round++) await Promise.all([passAt(t0 + HOUR), passAt(t0 + HOUR)])
    const rows = await db<{ n: number; subs: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT m.request_id)::int AS subs FROM messages m WHERE m.content->>'sequence_id' = $1", [id])
    expect(rows[0]).toEqual({ n: 120, subs: 120 })
    const sends = await db<{ n: number }>(
      "SELECT count(*)::int AS n FROM sequence_step_sends x JOIN sequence_subscriptions s ON s.id = x.subscription_id WHERE s.sequence_id = $1", [id])
    expect(sends[0]!.n).toBe(120)
  })
})
