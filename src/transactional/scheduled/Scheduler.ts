/** The scheduler actor: releases due scheduled sends into the queue (every replica runs one). */
import { Clock, Duration, Effect } from "effect"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { ScheduledSends } from "./ScheduledSends.ts"

/** How often due sends are looked for: a send fires at most this late. */
const TICK = Duration.seconds(1)

export const SchedulerLive = actorLayer(
  "scheduler",
  Effect.flatMap(ScheduledSends, (scheduled) =>
    actorLoop("scheduler", Effect.gen(function*() {
      const released = yield* scheduled.releaseDue(new Date(yield* Clock.currentTimeMillis))
      // A full batch means more may be due: go again at once.
      return released >= 50 ? Duration.zero : TICK
    })))
)
