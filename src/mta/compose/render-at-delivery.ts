/**
 * A campaign's or sequence step's message rendered for its contact at delivery, by the bulk area
 * through the BulkContent port (in a render worker), and what the attempt does when that fails.
 *
 * - The content's own failure (syntax, a Liquid limit): the delivery fails (5.6.0), as it will
 *   every time.
 * - A render stopped at its deadline or out of memory (`outOfTime`): on a loaded machine a sound
 *   template can be slow, so the delivery is tried again later (4.3.0) — but only until one content
 *   has been stopped RENDER_STOPS_BEFORE_PAUSE times. Then, instead of every recipient paying the
 *   deadline again for the queue's 120 h: the campaign pauses with `pause_reason: render_failed`
 *   (its deliveries are held, `resume` tries again), a sequence step's waiting subscriptions are
 *   paused with `hold_reason: render_failed` and their deliveries held (the subscription's
 *   `resume` tries again) — both the bulk area's writes, through BulkContent `stoppedAgain` — and
 *   a campaign's test-send fails at once (`render_failed`). A step with nothing left to hold
 *   (paused by hand, cancelled meanwhile) waits HOLD_RECHECK_MS instead, not rendered.
 * - Busy (every worker taken, the line full, shutting down): not the content's doing; tried again
 *   later, not counted.
 *
 * Stops are counted in memory, per content, by this process: a restart or another replica pays at
 * most three deadlines more before it pauses too.
 */
import { Clock, Effect } from "effect"
import { HOLD_RECHECK_MS } from "../queue/delivery-checks.ts"
import type { BulkContentShape, Reference, ReferenceNotRendered, RenderedReference } from "./BulkContent.ts"

/** Render stops (deadline or memory) of one content before its campaign pauses or its step waits. */
export const RENDER_STOPS_BEFORE_PAUSE = 3
/** Contents whose stops are remembered, at most (the oldest forgotten first). */
const CONTENTS_TRACKED = 10_000

export type RenderAtDelivery =
  | { readonly _tag: "rendered"; readonly rendered: RenderedReference }
  /** Fails for good: the content's own failure, or a test-send's stopped render. */
  | { readonly _tag: "fail"; readonly reason: string }
  /** Tried again later, at the retry schedule's time or at `until`. */
  | { readonly _tag: "defer"; readonly reason: string; readonly until?: Date | undefined }
  /** The campaign was paused, or the step's subscriptions held (render_failed): the delivery is held with them. */
  | { readonly _tag: "hold"; readonly reason: string }

const contentOf = (stored: Reference) => (stored._tag === "campaign" ? `campaign:${stored.campaign_id}` : `sequence:${stored.sequence_id}:${stored.step}`)

export const makeRenderAtDelivery = (bulk: BulkContentShape) => {
  const stops = new Map<string, { count: number; waitUntil: number }>()

  /** One more stop of `content`; true when that makes RENDER_STOPS_BEFORE_PAUSE (the count starts again). */
  const stopped = (content: string, now: number): boolean => {
    const entry = stops.get(content) ?? { count: 0, waitUntil: 0 }
    stops.delete(content)
    entry.count += 1
    const enough = entry.count >= RENDER_STOPS_BEFORE_PAUSE
    if (enough) {
      entry.count = 0
      entry.waitUntil = now + HOLD_RECHECK_MS
    }
    stops.set(content, entry)
    if (stops.size > CONTENTS_TRACKED) stops.delete(stops.keys().next().value!)
    return enough
  }

  /** What the delivery does once the bulk area was told: held with its campaign or subscription, or (nothing held) a wait. */
  const toldBulk = (stored: Reference, now: number, why: string, contactId?: string): Effect.Effect<RenderAtDelivery> =>
    bulk.stoppedAgain(stored, new Date(now), contactId).pipe(
      Effect.map((held): RenderAtDelivery =>
        !held
          ? { _tag: "defer", reason: `${why}; the step waits`, until: new Date(now + HOLD_RECHECK_MS) }
          : stored._tag === "sequence"
          ? { _tag: "hold", reason: `${why}; the step's subscriptions are held` }
          : { _tag: "hold", reason: `${why}; the campaign is paused` })
    )

  /** `stored`'s content was stopped again: counted, and once enough, the bulk area is told (a campaign pauses, a step holds). */
  const afterStop = (stored: Reference, failure: ReferenceNotRendered, now: number): Effect.Effect<RenderAtDelivery> => {
    const reason = `render_failed: ${failure.message}`
    if (stored._tag === "campaign" && stored.origin === "test_send") return Effect.succeed({ _tag: "fail", reason })
    const content = contentOf(stored)
    if (!stopped(content, now)) return Effect.succeed({ _tag: "defer", reason })
    return toldBulk(stored, now, `${reason} (stopped ${RENDER_STOPS_BEFORE_PAUSE} times)`)
  }

  /** The contact's render of `stored`, or what the attempt does instead. */
  const render = (stored: Reference, accountId: string): Effect.Effect<RenderAtDelivery> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const waiting = stored._tag === "sequence" ? stops.get(contentOf(stored)) : undefined
      if (stored._tag === "sequence" && waiting !== undefined && waiting.waitUntil > now) {
        // A later delivery of a step already known to be stopped: its own subscription holds too, not rendered.
        return yield* toldBulk(stored, now, `render_failed: this step's content was stopped ${RENDER_STOPS_BEFORE_PAUSE} times`, stored.contact_id)
      }
      return yield* bulk.render(stored, accountId).pipe(
        Effect.map((rendered): RenderAtDelivery => ({ _tag: "rendered", rendered })),
        Effect.catchAll((failure): Effect.Effect<RenderAtDelivery> =>
          failure.kind === "busy"
            ? Effect.succeed({ _tag: "defer", reason: failure.message })
            : failure.kind === "stopped"
            ? afterStop(stored, failure, now)
            : Effect.succeed({ _tag: "fail", reason: `render_failed: ${failure.message}` }))
      )
    })

  return { render } as const
}
