/**
 * A long-running loop of the appliance (an "actor"): forked into the layer's scope so shutdown
 * interrupts it, every log line annotated with the actor's name, and a failing iteration logged
 * with its cause and retried after a pause — a database blip must never kill an actor.
 */
import { Duration, Effect, Layer, Schedule } from "effect"

export const actorLoop = <E, R>(
  name: string,
  /** One iteration; returns how long to wait before the next. */
  step: Effect.Effect<Duration.DurationInput, E, R>,
  retryAfter: Duration.DurationInput = Duration.seconds(2)
) =>
  Effect.gen(function*() {
    const wait = yield* step.pipe(
      Effect.catchAllCause((cause) =>
        Effect.logError(`${name}: iteration failed; retrying`, cause).pipe(Effect.as(retryAfter)))
    )
    yield* Effect.sleep(wait)
  }).pipe(
    Effect.repeat(Schedule.forever),
    Effect.annotateLogs("actor", name)
  )

/** The layer that runs `loop` for as long as the appliance runs. */
export const actorLayer = <E, R>(name: string, loop: Effect.Effect<unknown, E, R>) =>
  Layer.scopedDiscard(
    Effect.logInfo("actor started").pipe(
      Effect.zipRight(Effect.forkScoped(loop)),
      Effect.annotateLogs("actor", name)
    )
  )
