/**
 * A campaign's or sequence step's message rendered for its contact at delivery, in a render
 * worker (src/bulk/render/RenderEngine.ts), and what the attempt does when that fails.
 *
 * - The content's own failure (syntax, a Liquid limit): the delivery fails (5.6.0), as it will
 *   every time.
 * - A render stopped at its deadline or out of memory (`outOfTime`): on a loaded machine a sound
 *   template can be slow, so the delivery is tried again later (4.3.0) — but only until one content
 *   has been stopped RENDER_STOPS_BEFORE_PAUSE times. Then, instead of every recipient paying the
 *   deadline again for the queue's 120 h: the campaign pauses with `pause_reason: render_failed`
 *   (its deliveries are held, `resume` tries again), a sequence step's deliveries wait
 *   HOLD_RECHECK_MS without rendering (each try costs nothing until then), and a campaign's
 *   test-send fails at once (`render_failed`).
 * - Busy (every worker taken, the line full, shutting down): not the content's doing; tried again
 *   later, not counted.
 *
 * Stops are counted in memory, per content, by this process: a restart or another replica pays at
 * most three deadlines more before it pauses too.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { RenderedContent } from "../../bulk/render/content.ts"
import type { RenderFailed } from "../../bulk/render/errors.ts"
import type { RenderEngine } from "../../bulk/render/RenderEngine.ts"
import { type BulkRendering, type Reference, referenceRender } from "./compose.ts"
import { HOLD_RECHECK_MS } from "../queue/delivery-checks.ts"

/** Render stops (deadline or memory) of one content before its campaign pauses or its step waits. */
export const RENDER_STOPS_BEFORE_PAUSE = 3
/** Contents whose stops are remembered, at most (the oldest forgotten first). */
const CONTENTS_TRACKED = 10_000

export type RenderAtDelivery =
  | { readonly _tag: "rendered"; readonly rendered: RenderedContent }
  /** Fails for good: the content's own failure, or a test-send's stopped render. */
  | { readonly _tag: "fail"; readonly reason: string }
  /** Tried again later, at the retry schedule's time or at `until`. */
  | { readonly _tag: "defer"; readonly reason: string; readonly until?: Date | undefined }
  /** The campaign was paused (render_failed): the delivery is held with it. */
  | { readonly _tag: "hold"; readonly reason: string }

const contentOf = (stored: Reference) => (stored._tag === "campaign" ? `campaign:${stored.campaign_id}` : `sequence:${stored.sequence_id}:${stored.step}`)

export const makeRenderAtDelivery = (engine: RenderEngine, sql: SqlClient.SqlClient) => {
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

  const pauseCampaign = (id: string, now: Date) =>
    sql`UPDATE campaigns SET status = 'paused', pause_reason = 'render_failed', updated_at = ${now}
      WHERE id = ${id} AND status IN ('sending', 'scheduled')`.pipe(Effect.orDie, Effect.asVoid)

  const afterStop = (stored: Reference, failure: RenderFailed, now: number): Effect.Effect<RenderAtDelivery> => {
    const reason = `render_failed: ${failure.message}`
    if (stored._tag === "campaign" && stored.origin === "test_send") return Effect.succeed({ _tag: "fail", reason })
    const content = contentOf(stored)
    if (!stopped(content, now)) return Effect.succeed({ _tag: "defer", reason })
    const after = `${reason} (stopped ${RENDER_STOPS_BEFORE_PAUSE} times)`
    if (stored._tag === "sequence") {
      return Effect.succeed({ _tag: "defer", reason: `${after}; the step waits`, until: new Date(now + HOLD_RECHECK_MS) })
    }
    return Effect.as(pauseCampaign(stored.campaign_id, new Date(now)), { _tag: "hold", reason: `${after}; the campaign is paused` } as const)
  }

  /** The contact's render of `stored`, or what the attempt does instead. */
  const render = (stored: Reference, bulk: BulkRendering): Effect.Effect<RenderAtDelivery> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const waiting = stored._tag === "sequence" ? stops.get(contentOf(stored)) : undefined
      if (waiting !== undefined && waiting.waitUntil > now) {
        return { _tag: "defer", reason: `render_failed: this step's content was stopped ${RENDER_STOPS_BEFORE_PAUSE} times; it waits`, until: new Date(waiting.waitUntil) } as const
      }
      const { content, scope } = referenceRender(stored, bulk)
      return yield* engine.render(bulk.accountId, content, scope).pipe(
        Effect.map((rendered): RenderAtDelivery => ({ _tag: "rendered", rendered })),
        Effect.catchAll((failure): Effect.Effect<RenderAtDelivery> =>
          failure.busy === true
            ? Effect.succeed({ _tag: "defer", reason: failure.message })
            : failure.outOfTime === true
            ? afterStop(stored, failure, now)
            : Effect.succeed({ _tag: "fail", reason: `render_failed: ${failure.message}` }))
      )
    })

  return { render } as const
}
