/**
 * An A/B test under crashes and a second replica (issue 30 item 12: "a crash or a second replica
 * never sends a recipient two variants"), with real processes on one database: the appliance is
 * SIGKILLed in the middle of a batch of the test share's fan-out (held there by a SHARE lock on
 * `messages`, as test/bulk/campaigns-crash.test.ts does), restarted, SIGKILLed again during the
 * wait, and then two appliances run at once through the decision and the rest. Every recipient has
 * exactly one message, with its variant's content in the test share and the one winner's after it.
 * The MTA is off, so the queued rows stay for counting.
 */
import { describe, expect, it } from "vitest"
import { killInsideMessagesBatch, spawnedRig } from "../support/spawned-rig.ts"
import { eventually } from "../support/eventually.ts"

const COUNT = 1000
const TEST_SHARE = 500

// Batches of 100: the test share is five batches, each writing two variants' rows. A wait minute of
// 0.5 s: the 30-minute wait is 15 s, and the two replicas are up about 2.5 s after it begins on a
// quiet machine, so both still run through the decision on a loaded one.
const { spawn, begin } = spawnedRig({ HERALD_CAMPAIGN_FANOUT_BATCH: "100", HERALD_AB_WAIT_UNIT_SECONDS: "0.5" })

describe("an A/B test killed during its test share and during its wait, then run by two replicas", () => {
  it("gives every recipient exactly one message: its own variant in the test share, the one winner after it", async () => {
    const { databaseUrl, db, first, sender, api, list } = await begin("crash")
    const contacts = Array.from({ length: COUNT }, (_, i) => `c${i}@crash.example`)
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts })).status).toBe(200)
    const created = await api("POST", "/v1/bulk/campaigns", {
      name: "Crash A/B",
      from_email: sender.from,
      list_ids: [list.json.id],
      variants: [{ subject: "Alpha", body_text: "a" }, { subject: "Beta", body_text: "b" }],
      ab_test: { test_percent: 50, metric: "opens", wait_minutes: 30 }
    })
    expect(created.status).toBe(201)
    const id = created.json.id as string
    const state = async () =>
      (await db<{ queued_count: number; ab_decide_at: Date | null; ab_winner: number | null; messages: number }>(
        `SELECT queued_count, ab_decide_at, ab_winner, (SELECT count(*)::int FROM messages WHERE campaign_id = $1) AS messages
         FROM campaigns WHERE id = $1`, [id]))[0]!

    // 1. Killed in the middle of a test-share batch.
    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`)).json).toEqual({ id, status: "sending", total_contacts: COUNT })
    await eventually(async () => ((await state()).messages > 0 ? true : undefined), "the first batch", 30_000)
    await killInsideMessagesBatch(first, databaseUrl)
    const afterFirst = await state()
    expect(afterFirst.queued_count).toBeGreaterThan(0)
    expect(afterFirst.queued_count).toBeLessThan(TEST_SHARE)
    expect(afterFirst.messages).toBe(afterFirst.queued_count)
    expect(afterFirst.ab_decide_at).toBeNull()

    // 2. Restarted: the test share completes and stops there; killed again during the wait.
    const second = await spawn(databaseUrl, first.adminToken)
    const waiting = await eventually(async () => {
      const s = await state()
      return s.queued_count === TEST_SHARE && s.ab_decide_at !== null ? s : undefined
    }, "the test share queued and the wait begun", 30_000)
    expect(waiting.ab_winner).toBeNull()
    expect(waiting.messages).toBe(TEST_SHARE)
    second.child.kill("SIGKILL")
    await second.exited
    const afterSecond = await state()
    expect(afterSecond).toMatchObject({ queued_count: TEST_SHARE, ab_winner: null, messages: TEST_SHARE })

    // 3. Two replicas at once through the decision and the rest.
    await Promise.all([spawn(databaseUrl, first.adminToken), spawn(databaseUrl, first.adminToken)])
    const done = await eventually(async () => {
      const s = await state()
      return s.queued_count === COUNT && s.ab_winner !== null ? s : undefined
    }, "the winner decided and the rest queued", 90_000)
    expect(done.messages).toBe(COUNT)

    // Exactly one message per recipient, with its variant's content (the rest: the winner's).
    const rows = await db<{ position: number; variant: number | null; content_id: string; expected: string; n: number }>(
      `SELECT r.position, r.variant, min(m.content_id) AS content_id, count(m.id)::int AS n,
         c.variant_content_ids[coalesce(r.variant, c.ab_winner) + 1] AS expected
       FROM campaign_recipients r JOIN campaigns c ON c.id = r.campaign_id
         LEFT JOIN messages m ON m.campaign_id = r.campaign_id AND m.content->>'contact_id' = r.contact_id
       WHERE r.campaign_id = $1 GROUP BY r.position, r.variant, c.variant_content_ids, c.ab_winner`, [id])
    expect(rows).toHaveLength(COUNT)
    expect(rows.filter((r) => r.n !== 1)).toEqual([])
    expect(rows.filter((r) => r.content_id !== r.expected)).toEqual([])
    const perVariant = new Map<string, number>()
    for (const r of rows) perVariant.set(String(r.variant), (perVariant.get(String(r.variant)) ?? 0) + 1)
    expect(Object.fromEntries(perVariant)).toEqual({ 0: 250, 1: 250, null: 500 })
    expect(rows.filter((r) => r.variant !== null).every((r) => r.position <= TEST_SHARE)).toBe(true)
    const [deliveries] = await db<{ n: number; recipients: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT d.recipient)::int AS recipients
         FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1`, [id])
    expect(deliveries).toEqual({ n: COUNT, recipients: COUNT })
  }, 240_000)
})
