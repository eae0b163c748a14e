/**
 * The port through which the message content view (MessageContent.ts) has a stored message
 * composed as it was sent (DESIGN "Layout": a lower area that must reach a higher one declares
 * the service). Composing needs the bulk area's work — a campaign's or sequence's render for its
 * contact in the render pool, its List-Unsubscribe headers, its tracking filled or undone, the
 * confirm and unsubscribe links redacted — so the bulk area implements it
 * (src/bulk/message-view-port.ts) and src/appliance.ts wires it.
 */
import { Context, Data, type Effect } from "effect"

/** One stored message, as the queue keeps it, with what composing it as sent needs. */
export interface StoredForView {
  readonly messageId: string
  readonly accountId: string
  /** The sending domain: the Message-ID's right side. */
  readonly fromDomain: string
  /** The Date it was sent with (the MTA composes every attempt with the message's created_at). */
  readonly createdAt: Date
  /** messages.content and message_contents.content (null: a row of an older version). */
  readonly own: unknown
  readonly shared: unknown
  /** Each attachment's decoded size, in order: `own` and `shared` hold a one-byte stand-in for their content. */
  readonly attachmentSizes: ReadonlyArray<number>
  /** A campaign message's one delivery: its tracking tokens name it. */
  readonly deliveryId: string | null
  /** Every recipient is the simulator's: the links stay live (tracked, confirm and unsubscribe usable). */
  readonly live: boolean
}

export interface ContentHeader {
  readonly name: string
  readonly value: string
}

export interface ContentAttachment {
  readonly filename: string
  readonly content_type: string
  /** Decoded bytes. */
  readonly size: number
  readonly content_id: string | null
}

/** The message as its recipient got it, without attachment bytes. */
export interface ComposedContent {
  readonly headers: ReadonlyArray<ContentHeader>
  readonly text: string | null
  readonly html: string | null
  readonly attachments: ReadonlyArray<ContentAttachment>
}

/**
 * Why the content was not shown: `busy` (every renderer taken: try again), or the message cannot
 * be composed at all (`failed`: it does not decode, or its content does not render — as its
 * delivery found).
 */
export class ContentNotComposed extends Data.TaggedError("ContentNotComposed")<{
  readonly kind: "busy" | "failed"
  readonly message: string
}> {}

export interface MessageComposingShape {
  readonly compose: (stored: StoredForView) => Effect.Effect<ComposedContent, ContentNotComposed>
}

export class MessageComposing extends Context.Tag("herald/transactional/MessageComposing")<MessageComposing, MessageComposingShape>() {}
