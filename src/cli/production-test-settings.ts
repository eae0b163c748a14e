/**
 * Start-up's refusal of test-only settings in production: HERALD_AB_WAIT_UNIT_SECONDS (issue 30
 * item 12) shortens an A/B test's wait for tests and staging; with HERALD_ENV=production any value
 * but 60 would send a winner long before the wait the marketer chose. Checked with the public
 * URLs (production-urls.ts), before anything listens or the database opens: one line naming the
 * variable and the way out.
 */
import { Data, Effect } from "effect"
import { AppConfig } from "../config/app-config.ts"

export class TestSettingInProduction extends Data.TaggedError("TestSettingInProduction")<{
  readonly message: string
}> {}

/** The A/B wait's unit in production: one minute. */
const PRODUCTION_AB_WAIT_UNIT_MS = 60_000

export const ensureNoTestSettings = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.env !== "production" || config.abWaitUnitMs === PRODUCTION_AB_WAIT_UNIT_MS) return
  return yield* new TestSettingInProduction({
    message: `herald: HERALD_AB_WAIT_UNIT_SECONDS is ${config.abWaitUnitMs / 1000}, and it is for tests and staging only: `
      + "with HERALD_ENV=production it must be 60; unset it, or set HERALD_ENV=development for a trial"
  })
})
