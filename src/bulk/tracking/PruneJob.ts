/**
 * The tracking detail prune as an actor (DESIGN "Analytics detail"): every hour, per-recipient
 * opens and clicks older than 90 days go; the counters stay. Idempotent, so replicas may each run
 * it: a second run in the same hour finds nothing to delete.
 */
import { Clock, Duration, Effect } from "effect"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { pruneTrackingDetail } from "./store.ts"

export const TrackingPruneLive = actorLayer(
  "tracking-prune",
  actorLoop("tracking-prune", Effect.gen(function*() {
    const now = new Date(yield* Clock.currentTimeMillis)
    const pruned = yield* pruneTrackingDetail(now)
    if (pruned.hits > 0) yield* Effect.logInfo("tracking detail pruned").pipe(Effect.annotateLogs({ hits: pruned.hits }))
    return Duration.hours(1)
  }))
)
