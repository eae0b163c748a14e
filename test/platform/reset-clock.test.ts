/**
 * The monthly reset as the appliance runs it: the billing-reset actor, driven by TestClock (no
 * waiting), applies a pending downgrade once the period ends, and survives a restart between.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer, TestClock } from "effect"
import { BaseLive, ServicesLive } from "../../src/appliance.ts"
import { Accounts } from "../../src/platform/accounts/Accounts.ts"
import { ResetJobLive } from "../../src/platform/subscriptions/ResetJob.ts"
import { loadPlanCatalog } from "../../src/platform/plans/plan-catalog.ts"
import { seedPlans } from "../../src/platform/plans/Plans.ts"
import { Subscriptions } from "../../src/platform/subscriptions/Subscriptions.ts"
import { freshDatabase, query } from "../support/database.ts"

const START = Date.parse("2026-01-15T10:00:00Z")

const realPause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

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

const servicesOn = (databaseUrl: string) =>
  ServicesLive.pipe(
    Layer.provideMerge(BaseLive),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([
      ["DATABASE_URL", databaseUrl],
      ["HERALD_LOG_LEVEL", "warn"],
      ["HERALD_HOSTNAME", "herald.test"]
    ]))))
  )

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
      const applied = yield* runMinutes(10, downgraded).pipe(
        Effect.provide(ResetJobLive.pipe(Layer.provideMerge(services))),
        Effect.scoped
      )
      expect(applied).toBe(true)
      const periods = yield* Effect.promise(() =>
        query<{ period_start: Date }>(databaseUrl, "SELECT period_start FROM subscriptions WHERE account_id = $1", [accountId]))
      expect(periods[0]!.period_start.toISOString()).toBe("2026-02-15T10:00:00.000Z")
    }), 60_000)
})
