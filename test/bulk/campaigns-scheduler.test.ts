/**
 * A scheduled campaign with two appliances on one database (issue 20: "the scheduler starts a
 * scheduled campaign at its time … across restarts and replicas exactly once"), and the campaign's
 * events as a real webhook receiver gets them: `campaign.email.sent` once per accepted contact, a
 * bounce counted as failed, and `campaign.completed` once with sent_count, failed_count and
 * delivery_rate (sent_count / total_contacts, 4 decimals). Simulator recipients: the MTA decides
 * their outcome without an SMTP peer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { eventually } from "../support/eventually.ts"
import { hookWebhooks, newSender, type Sender } from "../support/sending.ts"
import { type Hit, type Receiver, startReceiver } from "../webhooks/receiver.ts"

const DELIVERED = Array.from({ length: 6 }, (_, i) => `delivered+s${i}@simulator.herald.invalid`)
const BOUNCED = "bounce+s@simulator.herald.invalid"

let dns: DnsServer
let receiver: Receiver
let a: Appliance
let b: Appliance
let sender: Sender
let databaseUrl: string

beforeAll(async () => {
  dns = await startDnsServer()
  receiver = await startReceiver(200)
  databaseUrl = await freshDatabase()
  const env = { HERALD_DNS_SERVERS: dns.address, HERALD_MTA_ENABLED: "true", HERALD_WEBHOOK_ALLOW_PRIVATE: "true" }
  a = await startAppliance({ databaseUrl, env })
  b = await startAppliance({ databaseUrl, env, bootstrapKey: a.adminToken })
  sender = await newSender(a, dns, { packageId: "growth" })
  await hookWebhooks(a, sender, receiver.url())
}, 60_000)
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()])
  await receiver?.close()
  await dns?.close()
})

const ofCampaign = (id: string, event: string) => (h: Hit) => h.json?.event === event && h.json?.campaign_id === id

describe("a campaign scheduled with two appliances on one database", () => {
  it("starts at its time, once: each contact queued once, each acceptance and the completion sent to the webhook once", async () => {
    const api = (app: Appliance, method: string, route: string, body?: unknown) =>
      app.request(method, route, { token: sender.token, ...(body === undefined ? {} : { body }) })
    const list = await api(a, "POST", "/v1/bulk/lists", { name: "scheduled" })
    expect((await api(a, "POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: [...DELIVERED, BOUNCED] })).status).toBe(200)
    const c = await api(b, "POST", "/v1/bulk/campaigns", {
      name: "Later",
      from_email: sender.from,
      subject: "Hello {{ email }}",
      html: "<p>Hi</p>",
      list_ids: [list.json.id]
    })
    expect(c.status).toBe(201)
    const id = c.json.id as string
    const at = new Date(Date.now() + 4_000)
    const scheduled = await api(a, "POST", `/v1/bulk/campaigns/${id}/send`, { scheduled_at: at.toISOString() })
    expect(scheduled.json).toEqual({ id, status: "scheduled", scheduled_at: at.toISOString() })

    // Nothing before its time, on either appliance.
    while (Date.now() < at.getTime() - 500) {
      const seen = await api(Date.now() % 2 === 0 ? a : b, "GET", `/v1/bulk/campaigns/${id}`)
      expect(seen.json).toMatchObject({ status: "scheduled", total_contacts: null, started_at: null })
      await new Promise((r) => setTimeout(r, 250))
    }
    const [early] = await query<{ n: number }>(databaseUrl, "SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1", [id])
    expect(early!.n).toBe(0)

    const done = await eventually(async () => {
      const r = (await api(b, "GET", `/v1/bulk/campaigns/${id}`)).json
      return r.status === "completed" ? r : undefined
    }, "the scheduled campaign completed", 30_000)
    const startedAt = Date.parse(done.started_at)
    expect(startedAt).toBeGreaterThanOrEqual(at.getTime())
    // The actor looks every second on each replica.
    expect(startedAt - at.getTime()).toBeLessThan(5_000)
    const total = DELIVERED.length + 1
    expect(done).toMatchObject({ total_contacts: total, sent_count: DELIVERED.length, failed_count: 1, delivery_rate: 0.8571 })

    const perContact = await query<{ recipient: string; n: number }>(databaseUrl, `SELECT d.recipient, count(*)::int AS n
      FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1 GROUP BY d.recipient ORDER BY d.recipient`, [id])
    expect(perContact).toEqual([...DELIVERED, BOUNCED].sort().map((recipient) => ({ recipient, n: 1 })))
    const [frozen] = await query<{ n: number }>(databaseUrl, "SELECT count(*)::int AS n FROM campaign_recipients WHERE campaign_id = $1", [id])
    expect(frozen!.n).toBe(total)

    await receiver.waitFor(1, ofCampaign(id, "campaign.completed"), 20_000)
    await receiver.waitFor(DELIVERED.length, ofCampaign(id, "campaign.email.sent"), 20_000)
    // Past the dispatchers' polls: a duplicate from either appliance would be here by now.
    await new Promise((r) => setTimeout(r, 2_000))
    const sent = receiver.hits.filter(ofCampaign(id, "campaign.email.sent")).map((h) => h.json.email).sort()
    expect(sent).toEqual([...DELIVERED].sort())
    expect(receiver.hits.filter(ofCampaign(id, "campaign.completed")).map((h) => {
      const { campaign_id, name, sent_count, failed_count, delivery_rate } = h.json
      return { campaign_id, name, sent_count, failed_count, delivery_rate }
    })).toEqual([{ campaign_id: id, name: "Later", sent_count: DELIVERED.length, failed_count: 1, delivery_rate: 0.8571 }])
    expect(receiver.hits.filter((h) => h.json?.event === "email.bounced").map((h) => h.json.recipient)).toEqual([BOUNCED])
    // Bulk mail never emits the transactional outcome events.
    expect(receiver.hits.filter((h) => h.json?.event === "email.sent" || h.json?.event === "email.failed")).toEqual([])
  }, 60_000)
})
