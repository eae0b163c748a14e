/**
 * The fan-out under a crash (issue 20 "Fan-out": "an actor that can crash at any row and resume
 * without a duplicate or a gap"), with real processes: the appliance is SIGKILLed while a batch's
 * transaction is open in the middle of a 4,000-contact fan-out, and after a restart on the same
 * database every contact is queued exactly once and charged to the quota exactly once.
 *
 * To be sure the kill lands in the middle of a batch, the test takes a SHARE lock on `messages`
 * once the first rows are queued (reads go on, writes wait): the next batch, which has already
 * charged its recipients to the quota, blocks when it inserts its messages, inside its transaction
 * with the campaign's row locked; that is when the process dies. The MTA is off, so the queued
 * rows stay for counting.
 */
import { describe, expect, it } from "vitest"
import { killInsideMessagesBatch, spawnedRig } from "../support/spawned-rig.ts"
import { eventually } from "../support/eventually.ts"

const COUNT = 4000

// Batches of 500: the kill lands in the middle of a fan-out of several batches.
const { spawn, begin } = spawnedRig({ HERALD_CAMPAIGN_FANOUT_BATCH: "500" })

describe("a fan-out killed in the middle of a batch", () => {
  it("resumes after a restart with each contact queued and charged exactly once, none missing", async () => {
    const { databaseUrl, db, first, sender, api, list } = await begin("crash")
    for (let i = 0; i < COUNT; i += 1000) {
      const contacts = Array.from({ length: 1000 }, (_, j) => `c${i + j}@crash.example`)
      expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts })).status).toBe(200)
    }
    const c = await api("POST", "/v1/bulk/campaigns", { name: "Crash", from_email: sender.from, subject: "s", body_text: "b", list_ids: [list.json.id] })
    expect(c.status).toBe(201)
    const id = c.json.id as string
    const queuedRows = async () => (await db<{ n: number }>("SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1", [id]))[0]!.n

    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`)).json).toEqual({ id, status: "sending", total_contacts: COUNT })
    await eventually(async () => ((await queuedRows()) > 0 ? true : undefined), "the first batch", 30_000)
    await killInsideMessagesBatch(first, databaseUrl)

    // What the killed process left: whole batches only, the cursor agreeing with the rows.
    const [left] = await db<{ queued_count: number; status: string }>("SELECT queued_count, status FROM campaigns WHERE id = $1", [id])
    expect(left!.status).toBe("sending")
    expect(left!.queued_count).toBeGreaterThan(0)
    expect(left!.queued_count).toBeLessThan(COUNT)
    expect(await queuedRows()).toBe(left!.queued_count)
    // The killed batch's quota charge went with its transaction.
    const usageNow = async () => (await db<{ sent: number }>("SELECT sent FROM account_usage WHERE account_id = $1", [sender.accountId]))[0]!.sent
    expect(await usageNow()).toBe(left!.queued_count)

    const second = await spawn(databaseUrl, first.adminToken)
    await eventually(async () => ((await queuedRows()) >= COUNT ? true : undefined), "the resumed fan-out", 60_000)
    await eventually(async () => {
      const [row] = await db<{ queued_count: number }>("SELECT queued_count FROM campaigns WHERE id = $1", [id])
      return row!.queued_count === COUNT ? true : undefined
    }, "the cursor at the end")
    const perContact = await db<{ email: string; n: number }>(
      `SELECT r.email, count(d.id)::int AS n FROM campaign_recipients r
         LEFT JOIN messages m ON m.campaign_id = r.campaign_id AND m.content->>'contact_id' = r.contact_id
         LEFT JOIN deliveries d ON d.message_id = m.id
       WHERE r.campaign_id = $1 GROUP BY r.email`,
      [id]
    )
    expect(perContact.length).toBe(COUNT)
    expect(perContact.filter((r) => r.n !== 1)).toEqual([])
    const [deliveries] = await db<{ n: number; recipients: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT d.recipient)::int AS recipients
         FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1`,
      [id]
    )
    expect(deliveries).toEqual({ n: COUNT, recipients: COUNT })
    expect(await usageNow()).toBe(COUNT)
    await second.stop()
  }, 150_000)
})
