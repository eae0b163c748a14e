/**
 * The platform area for an account: plans, the usage record, plan changes (upgrade with
 * proration, pending downgrade applied by the monthly reset, shown in usage, replaced or
 * cancelled), and every change on record.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Subscriptions } from "../../src/platform/subscriptions/Subscriptions.ts"
import { type Appliance, startAppliance, withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, sendBody } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
const password = "correct horse battery"

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address } })
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

const changePlan = (token: string, package_id: string, pw = password) =>
  app.request("POST", "/v1/client/subscriptions/change-plan", { token, body: { package_id, password: pw } })

describe("plans", () => {
  it("lists every plan with the fields a client chooses by", async () => {
    const sender = await newSender(app, dns)
    const res = await app.request("GET", "/v1/client/plans", { token: sender.token })
    expect(res.status).toBe(200)
    const ids = res.json.items.map((p: { id: string }) => p.id)
    expect(ids).toEqual(expect.arrayContaining(["legacy-2019", "free", "starter", "business", "growth", "scale"]))
    const legacy = res.json.items.find((p: { id: string }) => p.id === "legacy-2019")
    expect(legacy.selectable).toBe(false)
    const growth = res.json.items.find((p: { id: string }) => p.id === "growth")
    expect(growth).toMatchObject({ billing_model: "sends", overage: { offered: true }, features: ["dmarc"] })
  })
})

describe("GET /v1/client/usage", () => {
  it("reports each key's own sends and the account's shared remainder", async () => {
    const sender = await newSender(app, dns, { packageId: "starter" })
    const second = await app.request("POST", "/v1/client/keys", { token: sender.token, body: { label: "second" } })
    await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, ["u1@example.org", "u2@example.org"]) })
    await app.request("POST", "/v1/mail/send", { token: second.json.token, body: sendBody(sender, "u3@example.org") })
    const res = await app.request("GET", "/v1/client/usage", { token: sender.token })
    expect(res.json.subscriptions).toEqual([expect.objectContaining({
      package_id: "starter", package_name: "Starter", monthly_quota: 50000, rate_per_min: 300, billing_period: "monthly"
    })])
    const byLabel = Object.fromEntries(res.json.keys.map((k: { label: string }) => [k.label, k]))
    expect(byLabel["tests"]).toMatchObject({ sent_this_period: 2, monthly_quota: 50000, quota_remaining: 49997 })
    expect(byLabel["second"]).toMatchObject({ sent_this_period: 1, quota_remaining: 49997 })
    expect(Date.parse(res.json.next_reset)).toBeGreaterThan(Date.now())
  })

  it("restarts the counters when the period rolls over", async () => {
    const sender = await newSender(app, dns, { packageId: "starter" })
    await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, ["r1@example.org", "r2@example.org"]) })
    const before = await app.request("GET", "/v1/client/usage", { token: sender.token })
    expect(before.json.keys[0]).toMatchObject({ sent_this_period: 2, quota_remaining: 49998 })

    // Roll the period over: the subscription, and the usage charged in it, move 35 days into the
    // past (longer than any month), so the period those sends were counted in has ended; then the
    // reset job's step runs now, as the actor would.
    const shift = "- interval '35 days'"
    await query(app.databaseUrl, `UPDATE subscriptions SET started_at = started_at ${shift}, period_start = period_start ${shift} WHERE account_id = $1`, [sender.accountId])
    await query(app.databaseUrl, `UPDATE account_usage SET period_start = period_start ${shift} WHERE account_id = $1`, [sender.accountId])
    await query(app.databaseUrl, `UPDATE key_usage SET period_start = period_start ${shift} WHERE key_id = $1`, [sender.keyId])
    expect(await withServices(app, Effect.flatMap(Subscriptions, (s) => s.resetPeriods(new Date())))).toBeGreaterThanOrEqual(1)
    const [sub] = await query<{ started_at: Date; period_start: Date }>(app.databaseUrl,
      "SELECT started_at, period_start FROM subscriptions WHERE account_id = $1 AND status = 'active'", [sender.accountId])
    expect(sub!.period_start.getTime()).toBeGreaterThan(sub!.started_at.getTime())

    const after = await app.request("GET", "/v1/client/usage", { token: sender.token })
    expect(after.json.keys[0]).toMatchObject({ sent_this_period: 0, monthly_quota: 50000, quota_remaining: 50000 })
    expect(after.json.next_reset).not.toBe(before.json.next_reset)
    expect(Date.parse(after.json.next_reset)).toBeGreaterThan(Date.now())
    // The new period counts from zero, with the send path's own counters.
    await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "r3@example.org") })
    const next = await app.request("GET", "/v1/client/usage", { token: sender.token })
    expect(next.json.keys[0]).toMatchObject({ sent_this_period: 1, quota_remaining: 49999 })
    // The ended period's counters are kept, under its own start.
    const kept = await query<{ sent: number }>(app.databaseUrl, "SELECT sent FROM account_usage WHERE account_id = $1 ORDER BY period_start", [sender.accountId])
    expect(kept.map((r) => r.sent)).toEqual([2, 1])
  })
})

describe("POST /v1/client/subscriptions/change-plan", () => {
  it("refuses a wrong password, the same package, a legacy or unknown one", async () => {
    const sender = await newSender(app, dns, { packageId: "starter" })
    expect((await changePlan(sender.token, "growth", "wrong")).json.error.code).toBe("incorrect_password")
    expect((await changePlan(sender.token, "starter")).json.error.code).toBe("same_package")
    expect((await changePlan(sender.token, "legacy-2019")).json.error.code).toBe("package_not_selectable")
    const unknown = await changePlan(sender.token, "platinum")
    expect(unknown.status).toBe(400)
    expect(unknown.json.error).toMatchObject({ code: "unknown_package", param: "package_id" })
  })

  it("applies an upgrade at once with a prorated charge, and records it", async () => {
    const sender = await newSender(app, dns, { packageId: "starter" })
    const res = await changePlan(sender.token, "growth")
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ type: "upgrade", proration: { days_charged: expect.any(Number), cycle_days: expect.any(Number) } })
    const p = res.json.proration
    expect(p.amount_usd_cents).toBe(Math.round((4900 * p.days_charged) / p.cycle_days))
    const usage = await app.request("GET", "/v1/client/usage", { token: sender.token })
    expect(usage.json.subscriptions[0].package_id).toBe("growth")
    const rows = await query(app.databaseUrl, "SELECT from_package_id, to_package_id, type, amount_usd_cents FROM plan_changes WHERE account_id = $1", [sender.accountId])
    expect(rows).toEqual([{ from_package_id: "starter", to_package_id: "growth", type: "upgrade", amount_usd_cents: p.amount_usd_cents }])
  })

  it("starts a plan for an account without one as an upgrade charging the whole first cycle", async () => {
    const sender = await newSender(app, dns)
    const res = await changePlan(sender.token, "starter")
    expect(res.json.type).toBe("upgrade")
    expect(res.json.proration.days_charged).toBe(res.json.proration.cycle_days)
    expect(res.json.proration.amount_usd_cents).toBe(1500)
  })

  it("schedules a downgrade for the next reset, which applies it", async () => {
    const sender = await newSender(app, dns, { packageId: "growth" })
    const res = await changePlan(sender.token, "free")
    expect(res.json).toMatchObject({ type: "downgrade" })
    const usage = await app.request("GET", "/v1/client/usage", { token: sender.token })
    expect(res.json.effective_at).toBe(usage.json.next_reset)
    expect(usage.json.subscriptions[0].package_id).toBe("growth")
    expect(usage.json.pending_change).toEqual({ package_id: "free", effective_at: res.json.effective_at })
    // The reset job's step at a moment past the period end, as the actor would run it then.
    const after = new Date(Date.parse(res.json.effective_at) + 60_000)
    await withServices(app, Effect.flatMap(Subscriptions, (s) => s.resetPeriods(after)))
    await withServices(app, Effect.flatMap(Subscriptions, (s) => s.resetPeriods(after)))
    const rows = await query<{ package_id: string; period_start: Date }>(app.databaseUrl,
      "SELECT package_id, period_start FROM subscriptions WHERE account_id = $1 AND status = 'active'", [sender.accountId])
    expect(rows[0]!.package_id).toBe("free")
    expect(rows[0]!.period_start.toISOString()).toBe(res.json.effective_at)
    const changes = await query<{ applied_at: Date | null }>(app.databaseUrl, "SELECT applied_at FROM plan_changes WHERE account_id = $1", [sender.accountId])
    expect(changes[0]!.applied_at).not.toBeNull()
  })

  it("shows a pending downgrade, lets a later one replace it, and withdraws it on cancel-pending-change", async () => {
    const sender = await newSender(app, dns, { packageId: "growth" })
    const cancel = (pw = password) =>
      app.request("POST", "/v1/client/subscriptions/cancel-pending-change", { token: sender.token, body: { password: pw } })
    const usage = async () => (await app.request("GET", "/v1/client/usage", { token: sender.token })).json
    expect((await usage()).pending_change).toBeNull()
    const nothing = await cancel()
    expect(nothing.status).toBe(404)
    expect(nothing.json.error.code).toBe("not_found")

    expect((await changePlan(sender.token, "starter")).json.type).toBe("downgrade")
    const second = await changePlan(sender.token, "free")
    expect((await usage()).pending_change).toEqual({ package_id: "free", effective_at: second.json.effective_at })
    // Choosing the current package again says how to keep it.
    const same = await changePlan(sender.token, "growth")
    expect(same.json.error.code).toBe("same_package")
    expect(same.json.error.message).toContain("cancel-pending-change")

    const refused = await cancel("wrong")
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe("incorrect_password")
    expect((await usage()).pending_change).toEqual({ package_id: "free", effective_at: second.json.effective_at })

    const cancelled = await cancel()
    expect(cancelled.status).toBe(200)
    expect(cancelled.json).toMatchObject({ pending_change: null, subscriptions: [{ package_id: "growth" }] })
    expect((await cancel()).status).toBe(404)

    // The reset keeps the package, and marks neither withdrawn downgrade as applied.
    const after = new Date(Date.parse(second.json.effective_at) + 60_000)
    await withServices(app, Effect.flatMap(Subscriptions, (s) => s.resetPeriods(after)))
    const [sub] = await query<{ package_id: string }>(app.databaseUrl,
      "SELECT package_id FROM subscriptions WHERE account_id = $1 AND status = 'active'", [sender.accountId])
    expect(sub!.package_id).toBe("growth")
    const changes = await query<{ to_package_id: string; applied: boolean; withdrawn: boolean }>(app.databaseUrl,
      `SELECT to_package_id, applied_at IS NOT NULL AS applied, withdrawn_at IS NOT NULL AS withdrawn
       FROM plan_changes WHERE account_id = $1 AND type = 'downgrade' ORDER BY created_at, id`, [sender.accountId])
    expect(changes).toEqual([
      { to_package_id: "starter", applied: false, withdrawn: true },
      { to_package_id: "free", applied: false, withdrawn: true }
    ])
  })
})
