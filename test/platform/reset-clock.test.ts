/**
 * The monthly reset as the appliance runs it: the billing-reset actor, driven by TestClock (no
 * waiting), applies a pending downgrade once the period ends, survives a restart between, keeps an
 * anchor of the 31st after a short month, and restarts the usage counters.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { Accounts } from "../../src/platform/accounts/Accounts.ts"
import { ApiKeys } from "../../src/platform/keys/ApiKeys.ts"
import { AccountLimits } from "../../src/platform/usage/AccountLimits.ts"
import { reserveQuota } from "../../src/platform/usage/Quota.ts"
import { Usage } from "../../src/platform/usage/Usage.ts"
import { ResetJobLive } from "../../src/platform/subscriptions/ResetJob.ts"
import { loadPlanCatalog } from "../../src/platform/plans/plan-catalog.ts"
import { seedPlans } from "../../src/platform/plans/Plans.ts"
import { Subscriptions } from "../../src/platform/subscriptions/Subscriptions.ts"
import { servicesOn } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { sleep } from "../support/net.ts"

const START = Date.parse("2026-01-15T10:00:00Z")

const realPause = (ms: number) => Effect.promise(() => sleep(ms))

/**
 * Moves the clock a minute at a time (the actor's pace) and gives each iteration real time for
 * its database I/O, until `done` holds or `minutes` have passed. Repeated small steps, not one
 * jump: an iteration still busy when the clock moves only starts its sleep afterwards.
 */
const runMinutes = (minutes: number, done: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    for (let i = 0; i < minutes; i++) {
      yield* TestClock.adjust(Duration.minutes(1))
      yield* realPause(250)
      if (yield* done) return true
    }
    return false
  })

/**
 * The same pace, for as long as it takes (a loaded machine may need more real time per iteration),
 * until `done` holds; fails past a real-time deadline. Only for outcomes that further minutes of
 * clock cannot spoil.
 */
const runUntil = (done: Effect.Effect<boolean>, deadlineMs = 40_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + deadlineMs
    while (Date.now() < deadline) {
      yield* TestClock.adjust(Duration.minutes(1))
      yield* realPause(250)
      if (yield* done) return true
    }
    return false
  })


describe("the billing-reset actor", () => {
  it.effect("applies a pending downgrade when the period ends, across a restart", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* Effect.promise(freshDatabase)
      const services = servicesOn(databaseUrl)

      // Day 0: an account on growth asks for a downgrade to free.
      const accountId = yield* Effect.gen(function*() {
        yield* TestClock.setTime(START)
        yield* Effect.flatMap(loadPlanCatalog, seedPlans)
        const accounts = yield* Accounts
        const account = yield* accounts.create({ name: "Clock", email: "clock@example.org", password: "long enough pw", packageId: "growth" })
        const change = yield* (yield* Subscriptions).changePlan(account.id, "test", "free", "long enough pw", new Date(START))
        expect(change.type).toBe("downgrade")
        expect(change.effective_at).toBe("2026-02-15T10:00:00.000Z")
        return account.id
      }).pipe(Effect.provide(services), Effect.scoped)

      const packageOf = () =>
        Effect.promise(() => query<{ package_id: string }>(databaseUrl, "SELECT package_id FROM subscriptions WHERE account_id = $1 AND status = 'active'", [accountId]))

      const downgraded = packageOf().pipe(Effect.map((rows) => rows[0]!.package_id === "free"))

      // A replica runs for five minutes mid-period: nothing changes.
      yield* TestClock.setTime(START + 20 * 86_400_000)
      const early = yield* runMinutes(5, downgraded).pipe(
        Effect.provide(ResetJobLive.pipe(Layer.provideMerge(services))),
        Effect.scoped
      )
      expect(early).toBe(false)
      expect((yield* packageOf())[0]!.package_id).toBe("growth")

      // Another replica starts two minutes before the period ends: once the clock passes the end,
      // one of its iterations applies the downgrade.
      yield* TestClock.setTime(Date.parse("2026-02-15T09:58:00Z"))
      const applied = yield* runUntil(downgraded).pipe(
        Effect.provide(ResetJobLive.pipe(Layer.provideMerge(services))),
        Effect.scoped
      )
      expect(applied).toBe(true)
      const periods = yield* Effect.promise(() =>
        query<{ period_start: Date }>(databaseUrl, "SELECT period_start FROM subscriptions WHERE account_id = $1", [accountId]))
      expect(periods[0]!.period_start.toISOString()).toBe("2026-02-15T10:00:00.000Z")
    }), 90_000)

  it.effect("keeps the anchor day after a short month (Jan 31 → Feb 28 → Mar 31) and restarts the counters", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* Effect.promise(freshDatabase)
      const services = servicesOn(databaseUrl)
      const at = (iso: string) => new Date(Date.parse(iso))
      const usageAt = (accountId: string, iso: string) =>
        Effect.flatMap(Usage, (u) => u.record(accountId, at(iso))).pipe(Effect.provide(services), Effect.scoped, Effect.orDie)

      // Jan 31: an account on starter; its key sends three recipients on Feb 10.
      yield* TestClock.setTime(Date.parse("2026-01-31T10:00:00Z"))
      const { accountId, keyId } = yield* Effect.gen(function*() {
        yield* Effect.flatMap(loadPlanCatalog, seedPlans)
        const account = yield* (yield* Accounts).create({ name: "Anchor", email: "anchor@example.org", password: "long enough pw", packageId: "starter" })
        const key = yield* (yield* ApiKeys).create(account.id, "anchor")
        const limits = yield* (yield* AccountLimits).of(account.id, at("2026-02-10T00:00:00Z"))
        yield* reserveQuota(limits, key.id, 3)
        return { accountId: account.id, keyId: key.id }
      }).pipe(Effect.provide(services), Effect.scoped, Effect.orDie)

      const before = yield* usageAt(accountId, "2026-02-10T00:00:00Z")
      expect(before.next_reset).toBe("2026-02-28T10:00:00.000Z")
      expect(before.keys).toEqual([expect.objectContaining({ id: keyId, sent_this_period: 3, quota_remaining: 49_997 })])

      const subscription = () =>
        Effect.promise(() =>
          query<{ period_start: Date; package_id: string }>(databaseUrl,
            "SELECT period_start, package_id FROM subscriptions WHERE account_id = $1 AND status = 'active'", [accountId])).pipe(
          Effect.map((rows) => ({ start: rows[0]!.period_start.toISOString(), packageId: rows[0]!.package_id }))
        )
      const startIs = (iso: string) => subscription().pipe(Effect.map((s) => s.start === iso))
      const runFrom = (iso: string, run: (done: Effect.Effect<boolean>) => Effect.Effect<boolean>, done: Effect.Effect<boolean>) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(Date.parse(iso))
          return yield* run(done).pipe(Effect.provide(ResetJobLive.pipe(Layer.provideMerge(services))), Effect.scoped)
        })

      // February is short: the reset comes on Feb 28 at the anchor's time of day.
      expect(yield* runFrom("2026-02-28T09:58:00Z", runUntil, startIs("2026-02-28T10:00:00.000Z"))).toBe(true)

      // Counters restart: the key's sends and the account's remainder are those of the new period.
      const after = yield* usageAt(accountId, "2026-02-28T10:05:00Z")
      expect(after.next_reset).toBe("2026-03-31T10:00:00.000Z")
      expect(after.keys).toEqual([expect.objectContaining({ id: keyId, sent_this_period: 0, quota_remaining: 50_000 })])

      // A downgrade asked for in March takes effect on the 31st, not the 28th.
      const change = yield* Effect.flatMap(Subscriptions, (s) =>
        s.changePlan(accountId, "test", "free", "long enough pw", at("2026-03-01T00:00:00Z"))).pipe(
          Effect.provide(services), Effect.scoped, Effect.orDie
        )
      expect(change.effective_at).toBe("2026-03-31T10:00:00.000Z")

      // Mar 28 at the old time of day is no reset (a clamped anchor would have made it one).
      expect(yield* runFrom("2026-03-28T09:58:00Z", (done) => runMinutes(5, done), Effect.map(startIs("2026-02-28T10:00:00.000Z"), (same) => !same))).toBe(false)
      expect(yield* subscription()).toEqual({ start: "2026-02-28T10:00:00.000Z", packageId: "starter" })

      // Mar 31: the period moves to the 31st again and the downgrade applies.
      expect(yield* runFrom("2026-03-31T09:58:00Z", runUntil, startIs("2026-03-31T10:00:00.000Z"))).toBe(true)
      expect(yield* subscription()).toEqual({ start: "2026-03-31T10:00:00.000Z", packageId: "free" })
      expect((yield* usageAt(accountId, "2026-04-01T00:00:00Z")).next_reset).toBe("2026-04-30T10:00:00.000Z")
    }), 150_000)
})
