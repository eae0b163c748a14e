/**
 * The bulk area's side of the message content view's port (src/transactional/messages/content-port.ts):
 * a stored message composed again as it was sent, in the render pool (src/bulk/render/message-view.ts).
 *
 * A campaign or sequence message is rendered for its contact exactly as delivery renders it
 * (delivery-port.ts `referenceRender`, the same engine call), with the same List-Unsubscribe
 * headers. Then, by whom the view may act for:
 * - every recipient the simulator's (`live`): the message as delivered — a campaign's tracking
 *   tokens filled for its delivery, the confirm and unsubscribe links working, so double opt-in and
 *   unsubscribe can be tried from the console;
 * - anyone else: a campaign's links back to their own URLs and its pixel gone
 *   (tracking/rewrite.ts `untrackHtml`), and the confirm and unsubscribe tokens redacted, in the
 *   headers too (message-view.ts `redactLinks`).
 *
 * Nothing here writes: the render is the engine's alone — not delivery's render-at-delivery, so a
 * view stopped at the deadline counts no render stop and pauses nothing — and no open, click or
 * send is recorded.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer } from "effect"
import { AppConfig } from "../config/app-config.ts"
import type { RenderedReference } from "../mta/compose/BulkContent.ts"
import { decodeStoredMessage, type StoredMessage } from "../mta/queue/StoredMessage.ts"
import {
  type ComposedContent,
  type ContentAttachment,
  ContentNotComposed,
  MessageComposing,
  type StoredForView
} from "../transactional/messages/content-port.ts"
import { type BulkLinks, referenceComposing, referenceRender } from "./delivery-port.ts"
import { PublicTokens } from "./public/tokens.ts"
import type { RenderFailed } from "./render/errors.ts"
import type { ViewedAttachment, ViewTask } from "./render/message-view.ts"
import { RenderEngine } from "./render/RenderEngine.ts"
import { untrackHtml } from "./tracking/rewrite.ts"
import { campaignLinkUrls } from "./tracking/store.ts"

type Reference = Extract<StoredMessage, { readonly _tag: "campaign" | "sequence" }>

const notComposed = (e: RenderFailed) => new ContentNotComposed({ kind: e.busy === true ? "busy" : "failed", message: e.message })

interface StoredAttachment {
  readonly filename: string
  readonly content_id: string | null
  readonly size: number
}

/** The stored attachments (their content a stand-in: MessageContent.ts) with their decoded sizes. */
const storedAttachments = (stored: StoredMessage, sizes: ReadonlyArray<number>): ReadonlyArray<StoredAttachment> =>
  (stored._tag !== "structured" && stored._tag !== "system") || "mime_base64" in stored.message
    ? []
    : (stored.message.attachments ?? []).map((a, i) => ({ filename: a.filename, content_id: a.content_id ?? null, size: sizes[i] ?? 0 }))

/** The parser's attachments with the stored sizes (matched by filename and content id: the MIME tree orders them its own way). */
const sized = (viewed: ReadonlyArray<ViewedAttachment>, sizes: ReadonlyArray<StoredAttachment>): ReadonlyArray<ContentAttachment> => {
  if (sizes.length === 0) return viewed
  const left = [...sizes]
  return viewed.map((a) => {
    const i = left.findIndex((s) => s.filename === a.filename && s.content_id === a.content_id)
    const size = i < 0 ? a.size : left.splice(i, 1)[0]!.size
    return { ...a, size }
  })
}

export const MessageComposingLive = Layer.effect(
  MessageComposing,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const engine = yield* RenderEngine
    const sql = yield* SqlClient.SqlClient
    const links: BulkLinks = { tokens: yield* PublicTokens, baseUrl: config.baseUrl, bounceDomain: config.bounceDomain }
    const composing = referenceComposing(links)

    /** A campaign's own message: tracked for its delivery when live, untracked otherwise; everything else as rendered. */
    const tracked = (stored: Reference, html: string | null, m: StoredForView): Effect.Effect<string | null> => {
      if (stored._tag !== "campaign" || stored.origin !== "campaign" || html === null) return Effect.succeed(html)
      if (m.live && m.deliveryId !== null) {
        return Effect.succeed(composing.track(html, { deliveryId: m.deliveryId, campaignId: stored.campaign_id }))
      }
      return campaignLinkUrls(stored.campaign_id).pipe(
        Effect.map((urls) => untrackHtml(html, urls)),
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.orDie
      )
    }

    /** A reference's contact render, as delivery makes it, and its headers. */
    const personalize = (stored: Reference, m: StoredForView) =>
      Effect.gen(function*() {
        const { content, scope } = referenceRender(stored, links, m.accountId)
        const rendered = yield* Effect.mapError(engine.render(m.accountId, content, scope), notComposed)
        const html = yield* tracked(stored, rendered.html, m)
        const reference: RenderedReference = { subject: rendered.subject, text: rendered.text, html }
        return { rendered: reference, referenceHeaders: composing.headers(stored, m.accountId) }
      })

    const compose = (m: StoredForView): Effect.Effect<ComposedContent, ContentNotComposed> =>
      Effect.gen(function*() {
        const decoded = decodeStoredMessage(m.own, m.shared)
        if (Either.isLeft(decoded)) return yield* new ContentNotComposed({ kind: "failed", message: decoded.left })
        const stored = decoded.right
        const reference = stored._tag === "campaign" || stored._tag === "sequence" ? yield* personalize(stored, m) : {}
        const task: ViewTask = {
          op: "view",
          stored,
          messageId: m.messageId,
          sendingDomain: m.fromDomain,
          date: m.createdAt.toISOString(),
          ...reference,
          redact: m.live ? null : { baseUrl: config.baseUrl, bounceDomain: config.bounceDomain }
        }
        const viewed = yield* Effect.mapError(engine.view(m.accountId, task), notComposed)
        return { ...viewed, attachments: sized(viewed.attachments, storedAttachments(stored, m.attachmentSizes)) }
      })

    return { compose }
  })
)
