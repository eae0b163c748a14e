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
 *   (the bulk area's write, BulkContent `stoppedAgain`; its deliveries are held, `resume` tries
 *   again), a sequence step's deliveries wait
 *   HOLD_RECHECK_MS without rendering (each try costs nothing until then), and a campaign's
 *   test-send fails at once (`render_failed`).
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
  /** The campaign was paused (render_failed): the delivery is held with it. */
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

  /** `stored`'s content was stopped again: counted, and once enough, the bulk area is told (a campaign pauses). */
  const afterStop = (stored: Reference, failure: ReferenceNotRendered, now: number): Effect.Effect<RenderAtDelivery> => {
    const reason = `render_failed: ${failure.message}`
    if (stored._tag === "campaign" && stored.origin === "test_send") return Effect.succeed({ _tag: "fail", reason })
    const content = contentOf(stored)
    if (!stopped(content, now)) return Effect.succeed({ _tag: "defer", reason })
    const after = `${reason} (stopped ${RENDER_STOPS_BEFORE_PAUSE} times)`
    // The bulk area's answer to the content stopped again (a campaign pauses); the delivery's own is decided here.
    return Effect.as(
      bulk.stoppedAgain(stored, new Date(now)),
      stored._tag === "sequence"
        ? { _tag: "defer", reason: `${after}; the step waits`, until: new Date(now + HOLD_RECHECK_MS) } as const
        : { _tag: "hold", reason: `${after}; the campaign is paused` } as const
    )
  }

  /** The contact's render of `stored`, or what the attempt does instead. */
  const render = (stored: Reference, accountId: string): Effect.Effect<RenderAtDelivery> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const waiting = stored._tag === "sequence" ? stops.get(contentOf(stored)) : undefined
      if (waiting !== undefined && waiting.waitUntil > now) {
        return { _tag: "defer", reason: `render_failed: this step's content was stopped ${RENDER_STOPS_BEFORE_PAUSE} times; it waits`, until: new Date(waiting.waitUntil) } as const
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
