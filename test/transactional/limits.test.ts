/**
 * Rate limit and monthly quota of sends, over HTTP: the RateLimit-* headers on every send answer,
 * 429 at the 31st request of a minute without a plan (across two replicas), the account's rate
 * shared by all its keys, and the quota decisions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, sendBody } from "../support/sending.ts"

let app: Appliance
let replica: Appliance
let dns: DnsServer

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address } })
  // A second appliance on the same database: the counters must be shared.
  replica = await startAppliance({ databaseUrl: app.databaseUrl, env: { HERALD_DNS_SERVERS: dns.address, HERALD_BOOTSTRAP_KEY: app.adminToken } })
})
afterAll(async () => {
  await replica.stop()
  await app.stop()
  await dns.close()
})

describe("the per-minute rate limit", () => {
  it("answers the 31st send of a minute of an account without a plan with 429, across replicas", async () => {
    const sender = await newSender(app, dns)
    const statuses: Array<number> = []
    let last: Awaited<ReturnType<Appliance["request"]>> | undefined
    for (let i = 0; i < 31; i++) {
      const target = i % 2 === 0 ? app : replica
      last = await target.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, `r${i}@example.org`), headers: { "X-Herald-Test": "1" } })
      statuses.push(last.status)
      expect(last.headers.get("ratelimit-limit")).toBe("30")
      expect(Number(last.headers.get("ratelimit-remaining"))).toBe(Math.max(0, 29 - i))
    }
    expect(statuses.slice(0, 30).every((s) => s === 202)).toBe(true)
    expect(statuses[30]).toBe(429)
    expect(last!.json.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
    const reset = Number(last!.headers.get("ratelimit-reset"))
    // A Unix timestamp in seconds, within the next minute — not "seconds until".
    expect(reset).toBeGreaterThan(Date.now() / 1000)
    expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61)
  })

  it("gives an account's keys together exactly the account's rate: concurrent sends of two keys of a 10-a-minute account get ten 202s", async () => {
    // Without the account's own window, each key had the plan's rate: two keys sent twice the rate.
    const sender = await newSender(app, dns)
    expect((await app.request("PATCH", `/v1/admin/accounts/${sender.accountId}/limits`, { body: { rate_per_min: 10 } })).status).toBe(200)
    const second = await app.request("POST", "/v1/client/keys", { token: sender.token, body: { label: "second" } })
    expect(second.status).toBe(201)
    const tokens = [sender.token, second.json.token as string]
    // 24 sends at once, 12 per key, half of them through the replica: grouped, and across processes.
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) =>
      (i % 2 === 0 ? app : replica).request("POST", "/v1/mail/send", {
        token: tokens[Math.floor(i / 12)]!, body: sendBody(sender, `a${i}@example.org`), headers: { "X-Herald-Test": "1" }
      })
    ))
    const accepted = answers.filter((res) => res.status === 202)
    expect(accepted).toHaveLength(10)
    expect(answers.filter((res) => res.status !== 202).every((res) => res.status === 429 && res.json.error.code === "rate_limit_exceeded")).toBe(true)
    // The headers tell the account's window (the tighter one): each accepted send took its own place in it.
    expect(accepted.map((res) => Number(res.headers.get("ratelimit-remaining"))).sort((a, b) => b - a))
      .toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
    expect(answers.every((res) => res.headers.get("ratelimit-limit") === "10")).toBe(true)
    // A third key made now has a fresh key window, but the account's is spent.
    const third = await app.request("POST", "/v1/client/keys", { token: sender.token, body: { label: "third" } })
    const late = await app.request("POST", "/v1/mail/send", { token: third.json.token, body: sendBody(sender, "late@example.org") })
    expect(late.status).toBe(429)
    expect(late.headers.get("ratelimit-remaining")).toBe("0")
  })

  it("counts each key on its own", async () => {
    const sender = await newSender(app, dns)
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "solo@example.org") })
    expect(res.status).toBe(202)
    expect(res.headers.get("ratelimit-remaining")).toBe("29")
  })
})

describe("the monthly quota", () => {
  const withQuota = async (packageId: string | undefined, quota: number) => {
    const sender = await newSender(app, dns, packageId === undefined ? {} : { packageId })
    const limits = await app.request("PATCH", `/v1/admin/accounts/${sender.accountId}/limits`, {
      body: { rate_per_min: 1000, monthly_quota: quota }
    })
    expect(limits.status).toBe(200)
    return sender
  }
  const post = (sender: Awaited<ReturnType<typeof newSender>>, to: ReadonlyArray<string>) =>
    app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to) })

  it("refuses a send that would pass the remaining quota of a plan without overage with 400 overage_not_offered", async () => {
    const sender = await withQuota(undefined, 3)
    expect((await post(sender, ["q1@example.org", "q2@example.org"])).status).toBe(202)
    const over = await post(sender, ["q3@example.org", "q4@example.org"])
    expect(over.status).toBe(400)
    expect(over.json.error.code).toBe("overage_not_offered")
    expect((await post(sender, ["q3@example.org"])).status).toBe(202)
  })

  it("answers 429 monthly_quota_exceeded with used/quota once the quota is used up", async () => {
    const sender = await withQuota(undefined, 1)
    expect((await post(sender, ["u1@example.org"])).status).toBe(202)
    const res = await post(sender, ["u2@example.org"])
    expect(res.status).toBe(429)
    expect(res.json.error).toMatchObject({ type: "rate_limit_error", code: "monthly_quota_exceeded" })
    expect(res.json.error.message).toContain("1/1")
  })

  it("keeps sending past the quota when the plan offers overage", async () => {
    const sender = await withQuota("starter", 1)
    expect((await post(sender, ["o1@example.org", "o2@example.org", "o3@example.org"])).status).toBe(202)
    const usage = await app.request("GET", "/v1/client/usage", { token: sender.token })
    expect(usage.json.keys[0]).toMatchObject({ sent_this_period: 3, monthly_quota: 1, quota_remaining: 0 })
    // Two emails past the quota at the starter plan's 90 cents per 1,000: 0.18 cents, rounded once.
    expect(usage.json.overage).toEqual({ emails: 2, amount_usd_cents: 0 })
    const plans = await app.request("GET", "/v1/client/plans", { token: sender.token })
    expect(plans.json.items.find((p: { id: string }) => p.id === "starter").overage)
      .toEqual({ offered: true, price_usd_cents_per_1000: 90, price_usd_cents_per_email: 0.09 })
  })

  it("does not charge sandbox sends", async () => {
    const sender = await withQuota(undefined, 1)
    const sandbox = await app.request("POST", "/v1/mail/send", {
      token: sender.token, body: sendBody(sender, ["s1@example.org", "s2@example.org"]), headers: { "X-Herald-Test": "yes" }
    })
    expect(sandbox.status).toBe(202)
    expect((await post(sender, ["s3@example.org"])).status).toBe(202)
  })

  it("charges sends that arrive together exactly: concurrent sends of two accounts never pass either quota, each counted once", async () => {
    // Sends that arrive together are counted, reserved and written in groups (send-context.ts,
    // QuotaReserver.ts, mta/queue/enqueue.ts); a group whose sum passes a quota is decided one by one.
    const senders = [await withQuota(undefined, 5), await withQuota(undefined, 5)]
    const answers = await Promise.all(senders.flatMap((sender) =>
      Array.from({ length: 12 }, (_, i) => post(sender, [`c${i}@example.org`]).then((res) => ({ sender, res })))
    ))
    for (const sender of senders) {
      const mine = answers.filter((a) => a.sender === sender).map((a) => a.res)
      expect(mine.filter((res) => res.status === 202)).toHaveLength(5)
      expect(mine.filter((res) => res.status !== 202).every((res) => res.status === 429 && res.json.error.code === "monthly_quota_exceeded")).toBe(true)
      // Each request took its own place in the key's window: 999 down to 988, each once.
      expect(mine.map((res) => Number(res.headers.get("ratelimit-remaining"))).sort((a, b) => b - a))
        .toEqual(Array.from({ length: 12 }, (_, i) => 999 - i))
      const usage = await app.request("GET", "/v1/client/usage", { token: sender.token })
      expect(usage.json.keys[0]).toMatchObject({ sent_this_period: 5, monthly_quota: 5, quota_remaining: 0 })
      const audit = await app.request("GET", "/v1/mail/audit", { token: sender.token })
      expect(audit.json.total).toBe(5)
    }
  })
})
