/** The sequence tests' clock: one step-scheduler pass of an appliance at a time they choose (TestClock). */
import { Effect, TestClock, TestContext } from "effect"
import { schedulerPass } from "../../src/bulk/sequences/SchedulerActor.ts"
import { type Appliance, withServices } from "./appliance.ts"

/** One scheduler pass of `app` with the Clock at `atMs`; answers whether more may be due. */
export const schedulerPassAt = (app: Appliance, atMs: number) =>
  withServices(app, Effect.gen(function*() {
    yield* TestClock.setTime(atMs)
    return yield* schedulerPass
  }).pipe(Effect.provide(TestContext.TestContext)))
