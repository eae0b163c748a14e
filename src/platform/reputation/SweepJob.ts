/** The reputation sweep as an actor: accounts with recent bounces or complaints, every minute. */
import { Clock, Duration, Effect } from "effect"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { Reputation } from "./Reputation.ts"

export const ReputationSweepLive = actorLayer(
  "reputation",
  Effect.flatMap(Reputation, (reputation) =>
    actorLoop("reputation", Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* reputation.sweep(now, new Date(now.getTime() - 10 * 60_000))
      return Duration.minutes(1)
    })))
)
