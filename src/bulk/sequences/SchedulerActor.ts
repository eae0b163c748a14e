/** The sequence step scheduler actor: every replica runs one; the claim's SKIP LOCKED shares the work. */
import { Clock, Duration, Effect } from "effect"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { morePassesDue } from "./pass-plan.ts"
import { StepScheduler } from "./StepScheduler.ts"

/** How often due steps are looked for: a step goes at most this late. */
const TICK = Duration.seconds(1)
/** Subscriptions per pass (one transaction; its steps written together, StepScheduler.sendAll). */
const BATCH = 200

/** One pass at the Clock's current time: due steps queued, finished subscriptions completed. Answers whether more may be due. */
export const schedulerPass = Effect.gen(function*() {
  const scheduler = yield* StepScheduler
  const now = new Date(yield* Clock.currentTimeMillis)
  const claimed = yield* scheduler.runDue(now, BATCH)
  yield* scheduler.finish(now)
  return morePassesDue(claimed, BATCH)
})

export const SequenceSchedulerLive = actorLayer(
  "sequence-scheduler",
  actorLoop("sequence-scheduler", Effect.map(schedulerPass, (more) => more ? Duration.zero : TICK))
)
