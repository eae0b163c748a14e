/**
 * GET /v1/client/stats on a real appliance with the MTA on: simulator mail of every scenario goes
 * through the queue, the outcome writer and the outbox, and the current hour's bucket counts it —
 * for the sender's account only. Also the period's buckets (hourly, daily, zeros present), the
 * period's validation, the calling key's webhook backlog and the reputation pause.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { freePort } from "../support/net.ts"
import { newSender, sendBody } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
let deadPort = 0

interface Tenant {
  readonly accountId: string
  readonly token: string
  readonly keyId: string
}

const tenant = async (name: string): Promise<Tenant> => {
  const account = await app.request("POST", "/v1/admin/accounts", {
    body: { name, email: `${name}@customers.test`, password: "correct horse battery", package_id: "growth" }
  })
  expect(account.status).toBe(201)
  const key = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: name } })
  expect(key.status).toBe(201)
  const domain = await app.request("POST", "/v1/client/domains", { token: key.json.token, body: { domain: `${name}.example` } })
  expect(domain.status).toBe(201)
  return { accountId: account.json.id, token: key.json.token, keyId: key.json.id }
}

const send = (t: Tenant, name: string, to: ReadonlyArray<string>) =>
  app.request("POST", "/v1/mail/send", {
    token: t.token,
    body: {
      personalizations: to.map((email) => ({ to: [{ email }] })),
      from: { email: `hello@${name}.example` },
      subject: "Stats",
      content: [{ type: "text/plain", value: "Counting" }]
    }
  })

const stats = (t: Tenant, period?: string) =>
  app.request("GET", `/v1/client/stats${period === undefined ? "" : `?period=${period}`}`, { token: t.token })

const sum = (buckets: ReadonlyArray<Record<string, unknown>>, field: string) =>
  buckets.reduce((n, b) => n + (b[field] as number), 0)

let shop: Tenant
let other: Tenant

beforeAll(async () => {
  deadPort = await freePort()
  dns = await startDnsServer()
  app = await startAppliance({
    env: {
      HERALD_DNS_SERVERS: dns.address,
      HERALD_MTA_ENABLED: "true",
      HERALD_WEBHOOK_ALLOW_PRIVATE: "true"
    }
  })
  shop = await tenant("shop")
  other = await tenant("other")
}, 60_000)
afterAll(async () => {
  await app?.stop()
  await dns?.close()
})

describe("GET /v1/client/stats", () => {
  it("counts the account's sent, delivered, deferred, bounced and complained mail in the current hour, and no one else's", async () => {
    const sim = (s: string) => `${s}@simulator.herald.invalid`
    const sent = await send(shop, "shop", [sim("delivered"), sim("bounce"), sim("complaint"), sim("defer")])
    expect(sent.status).toBe(202)
    // The deferral scenario is retried 2 s and 4 s after its deferrals, then delivered.
    const answer = await eventually(async () => {
      const res = await stats(shop)
      const last = res.json.buckets.at(-1)
      return last.delivered === 3 && last.deferred === 2 && last.complained === 1 ? res : undefined
    }, "the simulator's outcomes counted", 30_000)
    expect(answer.status).toBe(200)
    expect(answer.json.period).toBe("24h")
    expect(answer.json.granularity).toBe("hour")
    expect(answer.json.buckets).toHaveLength(24)
    const current = answer.json.buckets.at(-1)
    expect(current).toEqual({ start: expect.any(String), sent: 4, delivered: 3, deferred: 2, bounced: 1, complained: 1, failed: 0 })
    const now = new Date()
    expect(current.start).toBe(new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000).toISOString())
    // Every other bucket is present, and empty.
    expect(sum(answer.json.buckets.slice(0, -1), "sent")).toBe(0)
    for (let i = 1; i < 24; i++) {
      expect(Date.parse(answer.json.buckets[i].start) - Date.parse(answer.json.buckets[i - 1].start)).toBe(3_600_000)
    }

    // The other account sent nothing: its stats are all zeros, whatever the shop sent.
    const theirs = await stats(other)
    expect(theirs.status).toBe(200)
    for (const field of ["sent", "delivered", "deferred", "bounced", "complained", "failed"]) {
      expect(sum(theirs.json.buckets, field)).toBe(0)
    }
  }, 60_000)

  it("answers 7 and 30 daily buckets ending today, with today's counts", async () => {
    const week = await stats(shop, "7d")
    expect(week.status).toBe(200)
    expect(week.json.granularity).toBe("day")
    expect(week.json.buckets).toHaveLength(7)
    const today = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString()
    expect(week.json.buckets.at(-1).start).toBe(today)
    expect(sum(week.json.buckets, "sent")).toBeGreaterThanOrEqual(4)
    const month = await stats(shop, "30d")
    expect(month.status).toBe(200)
    expect(month.json.buckets).toHaveLength(30)
    expect(sum(month.json.buckets, "delivered")).toBe(sum(week.json.buckets, "delivered"))
  })

  it("refuses another period with 400 validation_failed naming period", async () => {
    for (const period of ["1h", "90d", "", "24H"]) {
      const res = await stats(shop, period)
      expect(res.status).toBe(400)
      expect(res.json.error.code).toBe("validation_failed")
      expect(res.json.error.param).toBe("period")
    }
  })

  it("carries the calling key's rate headroom in the RateLimit headers, which reading the stats does not spend", async () => {
    const t = await tenant("headroom")
    const before = await stats(t)
    const limit = before.headers.get("ratelimit-limit")
    expect(limit).not.toBeNull()
    expect(before.headers.get("ratelimit-remaining")).toBe(limit) // nothing sent: the whole minute's rate
    expect((await stats(t)).headers.get("ratelimit-remaining")).toBe(limit) // the first read counted nothing
    const sent = await send(t, "headroom", ["delivered@simulator.herald.invalid"])
    expect(sent.status, sent.text).toBe(202)
    const after = await stats(t)
    // The window as the send's own answer described it.
    expect(after.headers.get("ratelimit-remaining")).toBe(sent.headers.get("ratelimit-remaining"))
    expect(after.headers.get("ratelimit-reset")).toBe(sent.headers.get("ratelimit-reset"))
    expect(Number(after.headers.get("ratelimit-remaining"))).toBe(Number(limit) - 1)
  })

  it("counts a delivery that failed for good in its own account's bucket", async () => {
    const sender = await newSender(app, dns, { packageId: "growth" })
    dns.set("nomail.example", { MX: [{ preference: 0, exchange: "." }] })
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "someone@nomail.example") })
    expect(res.status).toBe(202)
    const failed = await eventually(async () => {
      const r = await app.request("GET", "/v1/client/stats", { token: sender.token })
      return r.json.buckets.at(-1).failed === 1 ? r.json.buckets.at(-1) : undefined
    }, "the null-MX delivery counted failed")
    expect(failed).toMatchObject({ sent: 1, delivered: 0, failed: 1 })
    expect(sum((await stats(shop)).json.buckets, "failed")).toBe(0)
  })

  it("shows the calling key's webhook backlog, not its sibling's", async () => {
    const hook = await app.request("PATCH", `/v1/client/keys/${shop.keyId}`, {
      token: shop.token,
      body: { label: "shop", webhook_url: `http://127.0.0.1:${deadPort}/hook` }
    })
    expect(hook.status).toBe(200)
    const queued = await app.request("POST", `/v1/client/keys/${shop.keyId}/webhook/test`, { token: shop.token })
    expect(queued.status).toBe(202)
    const answer = await eventually(async () => {
      const res = await stats(shop)
      return res.json.webhook_backlog.pending >= 1 ? res : undefined
    }, "a pending webhook delivery")
    expect(answer.json.webhook_backlog.key_id).toBe(shop.keyId)
    expect(Date.parse(answer.json.webhook_backlog.oldest_pending_at)).toBeGreaterThan(Date.now() - 60_000)
    const sibling = await app.request("POST", `/v1/admin/accounts/${shop.accountId}/keys`, { body: { label: "sibling" } })
    const siblingStats = await app.request("GET", "/v1/client/stats", { token: sibling.json.token })
    expect(siblingStats.json.webhook_backlog).toEqual({ key_id: sibling.json.id, pending: 0, oldest_pending_at: null })
  })

  it("says when the account's sending is paused for its reputation, and why", async () => {
    expect((await stats(shop)).json.reputation).toEqual({ paused: false, reason: null })
    // The reputation policy's own write (src/platform/reputation/Reputation.ts), as its sweep makes it.
    await query(app.databaseUrl, "UPDATE accounts SET sending_paused_at = now(), sending_paused_reason = $2 WHERE id = $1", [
      shop.accountId,
      "hard bounce rate 9.1% over 5% in 7 days"
    ])
    expect((await stats(shop)).json.reputation).toEqual({ paused: true, reason: "hard bounce rate 9.1% over 5% in 7 days" })
    const unpaused = await app.request("POST", `/v1/admin/accounts/${shop.accountId}/unpause`)
    expect(unpaused.status).toBe(200)
    expect((await stats(shop)).json.reputation.paused).toBe(false)
  })
})

describe("settled hours", () => {
  // Past hours cannot be made by traffic in a test run: rows are written as the outcome writer
  // writes them (a delivery, its attempt with the account), stamped hours and days ago.
  const seed = async (t: Tenant, id: string, at: Date) => {
    await query(app.databaseUrl, `
      INSERT INTO deliveries (id, message_id, account_id, key_id, recipient, recipient_domain, recipient_kind, state, attempts,
                              next_attempt_at, created_at, updated_at, completed_at)
      VALUES ($1, 'msg_' || $1, $2, $3, 'r@example.net', 'example.net', 'to', 'sent', 1, $4, $4, $4, $4)`, [id, t.accountId, t.keyId, at])
    await query(app.databaseUrl, "INSERT INTO delivery_attempts (delivery_id, account_id, at, outcome) VALUES ($1, $2, $3, 'sent')", [
      id,
      t.accountId,
      at
    ])
  }

  it("are counted once into the rollup and answered from it; older days fold a day per statement", async () => {
    const t = await tenant("settled")
    const hour = 3_600_000
    const threeHoursAgo = new Date(Math.floor(Date.now() / hour) * hour - 3 * hour + 60_000)
    const twentyDaysAgo = new Date(Date.now() - 20 * 24 * hour)
    await seed(t, "dlv_settled_1", threeHoursAgo)
    await seed(t, "dlv_settled_2", twentyDaysAgo)
    const first = await stats(t)
    const bucket = first.json.buckets.find((b: { start: string }) => b.start === new Date(Math.floor(threeHoursAgo.getTime() / hour) * hour).toISOString())
    expect(bucket).toMatchObject({ sent: 1, delivered: 1 })
    const month = await stats(t, "30d")
    expect(sum(month.json.buckets, "sent")).toBe(2)
    const [folded] = await query<{ n: number; through: Date }>(app.databaseUrl, `
      SELECT (SELECT count(*)::int FROM account_activity_hours WHERE account_id = $1) AS n,
             (SELECT folded_through FROM account_activity_folds WHERE account_id = $1) AS through`, [t.accountId])
    expect(folded!.n).toBe(2)
    expect(Date.now() - folded!.through.getTime()).toBeLessThan(2 * hour)
    // A row stamped inside a settled hour after it was counted is not counted again: the answer
    // comes from the rollup, not from another scan of the queue's tables.
    await seed(t, "dlv_settled_3", threeHoursAgo)
    const again = await stats(t)
    expect(sum(again.json.buckets, "sent")).toBe(1)
  })
})
