/**
 * Sequences end to end with the MTA on, on the real Clock: the scheduler actor queues each step
 * at its offset, the MTA decides simulator recipients (src/mta/simulator.ts: no SMTP needed), the
 * outcome writer emits the sequence's events by origin, and a real webhook receiver gets them:
 * `sequence.step.sent` per accepted step, `sequence.step.failed` per failed step with the next step
 * still following at its offset, `email.bounced` for a bounce, and `sequence.completed` exactly
 * once per contact after the last step's final state.
 */
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { receiverBody } from "../../src/events/schema.ts"
import { query } from "../support/database.ts"
import { hookWebhooks, type SendingApp, startSendingApp } from "../support/sending.ts"
import { type Hit, type Receiver, startReceiver } from "../webhooks/receiver.ts"
import { sleep } from "../support/net.ts"

let rig: SendingApp
let receiver: Receiver

beforeAll(async () => {
  receiver = await startReceiver(200)
  rig = await startSendingApp({ HERALD_MTA_ENABLED: "true", HERALD_WEBHOOK_ALLOW_PRIVATE: "true" })
  await hookWebhooks(rig.app, rig.sender, receiver.url())
}, 60_000)
afterAll(async () => {
  await rig?.stop()
  await receiver?.close()
})

const api = (method: string, route: string, body?: unknown) =>
  rig.app.request(method, route, { token: rig.sender.token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

const strictly = (event: Parameters<typeof receiverBody>[0], json: unknown) =>
  Schema.decodeUnknownEither(receiverBody(event))(json, { onExcessProperty: "error" })._tag
/** The receiver's calls about one contact of a sequence, in the order the events happened (their `ts`). */
const hitsOf = (sequenceId: string, email: string) =>
  receiver.hits.filter((h) => h.json?.campaign_id === sequenceId && h.json?.email === email)
    .sort((x, y) => Date.parse(x.json.ts) - Date.parse(y.json.ts))

const OFFSETS = [0, 2, 2]

describe("sequence steps through the MTA", () => {
  it("emits step.sent, step.failed (the next step still following at its offset) and completed once, to the webhook", async () => {
    const seq = await api("POST", "/v1/bulk/sequences", { name: "Drip", from_email: rig.sender.from })
    const id = seq.json.id as string
    for (const [i, offset] of OFFSETS.entries()) {
      expect((await api("POST", `/v1/bulk/sequences/${id}/steps`, { subject: `Step ${i + 1}`, html: `<p>${i + 1}</p>`, offset_seconds: offset })).status)
        .toBe(201)
    }
    const delivered = "delivered+seq@simulator.herald.invalid"
    const failing = "suppressed+seq@simulator.herald.invalid"
    const bouncing = "bounce+seq@simulator.herald.invalid"
    const list = await api("POST", "/v1/bulk/lists", { name: "Simulated" })
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: [delivered, failing, bouncing] })).status).toBe(200)
    expect((await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list.json.id })).json.enrolled).toBe(3)

    const ofSequence = (h: Hit) => h.json?.campaign_id === id || (h.json?.event === "email.bounced" && h.json?.recipient === bouncing)
    await receiver.waitFor(3, (h) => h.json?.event === "sequence.completed" && h.json?.campaign_id === id, 40_000)
    // Anything emitted twice would arrive within the scheduler's next passes.
    await sleep(2_500)

    const events = (email: string) => hitsOf(id, email).map((h) => h.json.event)
    expect(events(delivered)).toEqual(["sequence.subscribed", "sequence.step.sent", "sequence.step.sent", "sequence.step.sent", "sequence.completed"])
    expect(events(failing)).toEqual(["sequence.subscribed", "sequence.step.failed", "sequence.step.failed", "sequence.step.failed", "sequence.completed"])
    // A bounce is email.bounced for a sequence step (DESIGN "Outcome events by origin"); the simulator suppresses nobody, so the steps go on.
    expect(events(bouncing)).toEqual(["sequence.subscribed", "sequence.completed"])
    const bounces = receiver.hits.filter((h) => h.json?.event === "email.bounced" && h.json?.recipient === bouncing)
    expect(bounces).toHaveLength(3)
    for (const h of receiver.hits.filter(ofSequence)) expect(strictly(h.json.event, h.json), h.json.event).toBe("Right")
    expect(hitsOf(id, delivered).at(-1)!.json).toMatchObject({ event: "sequence.completed", email: delivered, campaign_id: id, app: rig.sender.keyId })

    // Completed only after the last step's final state (the lists above are in the order of the events' ts).
    const bounced = bounces.map((h) => Date.parse(h.json.ts)).sort((x, y) => x - y)
    expect(Date.parse(hitsOf(id, bouncing).at(-1)!.json.ts)).toBeGreaterThanOrEqual(bounced.at(-1)!)

    // Each step queued once per contact, each at its offset from the previous step's due time (a failure does not delay the next).
    const sends = await db<{ email: string; step_id: number; queued_at: Date; enrolled_at: Date; state: string }>(
      `SELECT s.email, x.step_id, x.queued_at, s.enrolled_at, s.state FROM sequence_step_sends x
       JOIN sequence_subscriptions s ON s.id = x.subscription_id WHERE s.sequence_id = $1 ORDER BY s.email, x.step_id`, [id])
    expect(sends.map((r) => [r.email, r.step_id])).toEqual([bouncing, delivered, failing].flatMap((e) => [[e, 1], [e, 2], [e, 3]]))
    for (const r of sends) {
      const due = r.enrolled_at.getTime() + OFFSETS.slice(0, r.step_id).reduce((a, b) => a + b, 0) * 1000
      expect(r.queued_at.getTime(), `${r.email} step ${r.step_id}`).toBeGreaterThanOrEqual(due)
      expect(r.state).toBe("completed")
    }
    const deliveries = await db<{ recipient: string; state: string; n: number }>(
      `SELECT d.recipient, d.state, count(*)::int AS n FROM deliveries d JOIN messages m ON m.id = d.message_id
       WHERE m.content->>'sequence_id' = $1 GROUP BY 1, 2 ORDER BY 1`, [id])
    expect(deliveries).toEqual([
      { recipient: bouncing, state: "bounced", n: 3 },
      { recipient: delivered, state: "sent", n: 3 },
      { recipient: failing, state: "failed", n: 3 }
    ])
    const completed = await db<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE event = 'sequence.completed' AND payload->>'campaign_id' = $1", [id])
    expect(completed[0]!.n).toBe(3)
    expect((await api("GET", `/v1/bulk/sequences/${id}`)).json.subscriptions).toEqual({ active: 0, paused: 0, completed: 3, cancelled: 0 })
  }, 60_000)
})
