/** The monthly reset as an actor: every replica runs it; the update is idempotent. */
import { Clock, Duration, Effect } from "effect"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { Subscriptions } from "./Subscriptions.ts"

export const ResetJobLive = actorLayer(
  "billing-reset",
  Effect.flatMap(Subscriptions, (subscriptions) =>
    actorLoop("billing-reset", Effect.gen(function*() {
      const moved = yield* subscriptions.resetPeriods(new Date(yield* Clock.currentTimeMillis))
      if (moved > 0) yield* Effect.logInfo("billing periods reset").pipe(Effect.annotateLogs("subscriptions", moved))
      return Duration.minutes(1)
    })))
)
