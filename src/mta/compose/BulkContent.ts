/**
 * The port through which delivery reaches bulk's per-recipient work (DESIGN "Layout": a lower area
 * that must reach a higher one declares the service, the higher one provides it). A campaign or
 * sequence message is stored as a reference (src/mta/queue/StoredMessage.ts): one content shared
 * by every contact, and the contact's variables. What turns that into the contact's message —
 * the Liquid render, the unsubscribe link and headers, the tracking tokens — and what a campaign
 * does when its content cannot be rendered are the bulk area's; delivery only asks.
 *
 * The bulk area implements it (src/bulk/delivery-port.ts) and src/appliance.ts wires it. An
 * appliance without it cannot deliver references; every other message needs nothing of it.
 */
import { Context, Data, type Effect } from "effect"
import type { StoredMessage } from "../queue/StoredMessage.ts"

/** One contact's campaign or sequence message, as stored. */
export type Reference = Extract<StoredMessage, { readonly _tag: "campaign" | "sequence" }>

/** The contact's render of a reference's content. */
export interface RenderedReference {
  readonly subject: string
  /** Null when the content has no html part. */
  readonly html: string | null
  readonly text: string
}

/**
 * Why a reference was not rendered, which decides what delivery does with it
 * (src/mta/compose/render-at-delivery.ts):
 * - `content`: the content's own failure (syntax, a limit): the same every time;
 * - `stopped`: the render was stopped at its deadline or ran out of memory: a loaded machine may
 *   be the cause, so it is counted per content;
 * - `busy`: every renderer was taken, or the appliance is shutting down: not the content's doing.
 */
export class ReferenceNotRendered extends Data.TaggedError("ReferenceNotRendered")<{
  readonly kind: "content" | "stopped" | "busy"
  readonly message: string
}> {}

/** Whose open and click tokens a campaign delivery's links carry. */
export interface TrackingTarget {
  readonly deliveryId: string
  readonly campaignId: string
}

export interface BulkContentShape {
  /** The contact's render of `stored` (its variables over the content's, with its own `unsubscribe_url`). */
  readonly render: (stored: Reference, accountId: string) => Effect.Effect<RenderedReference, ReferenceNotRendered>
  /** The header fields the appliance adds to the contact's message (List-Unsubscribe, List-Unsubscribe-Post); they override the stored ones. */
  readonly headers: (stored: Reference, accountId: string) => Readonly<Record<string, string>>
  /** A campaign delivery's rendered html with the recipient's tracking tokens in place of the placeholders frozen into it. */
  readonly track: (html: string, target: TrackingTarget) => string
  /**
   * `stored`'s content was stopped again, enough times (RENDER_STOPS_BEFORE_PAUSE) that rendering
   * it for the next recipient is not worth its deadline: a campaign pauses, a sequence step's
   * waiting subscriptions (only `contactId`'s when given) are paused, each with `render_failed`.
   * Answers whether anything now holds the delivery (false: a step with no subscription left to hold).
   */
  readonly stoppedAgain: (stored: Reference, now: Date, contactId?: string) => Effect.Effect<boolean>
}

export class BulkContent extends Context.Tag("herald/mta/BulkContent")<BulkContent, BulkContentShape>() {}
