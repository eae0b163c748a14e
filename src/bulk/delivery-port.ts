/**
 * The bulk area's side of delivery's BulkContent port (src/mta/compose/BulkContent.ts): what a
 * campaign or sequence message needs, per contact, to be composed by the MTA.
 *
 * - render: the stored content's subject, html and text over the contact's variables (over the
 *   content's `vars`), with `{{ unsubscribe_url }}` pointing at the contact's unsubscribe page and
 *   the key's footer in each part without one (src/bulk/render/footer.ts), in a render worker
 *   (src/bulk/render/RenderEngine.ts);
 * - headers: `List-Unsubscribe` and `List-Unsubscribe-Post` naming the campaign or sequence
 *   (src/bulk/public/unsubscribe-link.ts);
 * - track: the recipient's open and click tokens in place of the placeholders the campaign's
 *   frozen html holds (src/bulk/tracking/rewrite.ts);
 * - stoppedAgain: a campaign whose content keeps being stopped at the render deadline pauses
 *   (src/bulk/campaigns/Control.ts); a sequence step's waiting subscriptions hold
 *   (src/bulk/sequences/hold-render-failed.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { BulkContent, type BulkContentShape, type Reference, ReferenceNotRendered } from "../mta/compose/BulkContent.ts"
import { pauseForRenderFailure } from "./campaigns/Control.ts"
import { holdRenderFailed } from "./sequences/hold-render-failed.ts"
import { PublicTokens, type makeTokens } from "./public/tokens.ts"
import { unsubscribeHeaders, unsubscribeToken, unsubscribeUrl } from "./public/unsubscribe-link.ts"
import type { ContentSource } from "./render/content.ts"
import { withFooter } from "./render/footer.ts"
import type { Scope } from "./render/engine.ts"
import type { RenderFailed } from "./render/errors.ts"
import { RenderEngine } from "./render/RenderEngine.ts"
import { fillTracking } from "./tracking/rewrite.ts"
import { recipientTokens } from "./tracking/tokens.ts"

/** Where one appliance's bulk links point, and the tokens that name their recipients. */
export interface BulkLinks {
  readonly tokens: ReturnType<typeof makeTokens>
  readonly baseUrl: string
  readonly bounceDomain: string
}

const whoOf = (stored: Reference, accountId: string) =>
  ({ accountId, email: stored.to.email, source: stored._tag === "campaign" ? stored.campaign_id : stored.sequence_id })

/**
 * What one contact's campaign or sequence message is rendered from: the stored content's subject,
 * html and text, and the contact's variables over the content's `vars`, with `{{ unsubscribe_url }}`
 * pointing at the contact's unsubscribe page.
 */
export const referenceRender = (
  stored: Reference,
  links: BulkLinks,
  accountId: string
): { readonly content: ContentSource; readonly scope: Scope } => {
  const message = stored.message
  const unsubscribe_url = unsubscribeUrl(links.baseUrl, unsubscribeToken(links.tokens, whoOf(stored, accountId)))
  const footer = message.footer
  const scope = { ...message.vars, ...stored.variables, unsubscribe_url, ...(footer === undefined ? {} : { postal_address: footer.postal_address }) }
  // The footer joins the stored (tracked) source here, at render time: its links carry no tracking placeholder.
  const content = withFooter({
    subject: message.subject,
    html: message.content.find((c) => c.type === "text/html")?.value ?? "",
    body_text: message.content.find((c) => c.type === "text/plain")?.value ?? ""
  }, footer)
  return { content, scope }
}

/** The port's pure part: a reference's header fields and a campaign delivery's tracked html. */
export const referenceComposing = (links: BulkLinks): Pick<BulkContentShape, "headers" | "track"> => {
  const where = { baseUrl: links.baseUrl, bounceDomain: links.bounceDomain }
  return {
    headers: (stored, accountId) => unsubscribeHeaders(links.tokens, where, whoOf(stored, accountId)),
    track: (html, target) => fillTracking(html, recipientTokens(links.tokens, target))
  }
}

/** A render's failure as delivery reads it (BulkContent's ReferenceNotRendered). */
const notRendered = (failure: RenderFailed) =>
  new ReferenceNotRendered({
    kind: failure.busy === true ? "busy" : failure.outOfTime === true ? "stopped" : "content",
    message: failure.message
  })

export const BulkContentLive = Layer.effect(
  BulkContent,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const engine = yield* RenderEngine
    const sql = yield* SqlClient.SqlClient
    const links: BulkLinks = { tokens: yield* PublicTokens, baseUrl: config.baseUrl, bounceDomain: config.bounceDomain }
    return {
      ...referenceComposing(links),
      render: (stored, accountId) => {
        const { content, scope } = referenceRender(stored, links, accountId)
        return Effect.mapError(engine.render(accountId, content, scope), notRendered)
      },
      // A sequence's step goes on waiting in the MTA (render-at-delivery.ts): nothing of the sequence changes.
      stoppedAgain: (stored, now, contactId) =>
        (stored._tag === "campaign"
          ? Effect.as(pauseForRenderFailure(stored.campaign_id, now), true)
          : Effect.map(holdRenderFailed({ sequenceId: stored.sequence_id, stepId: stored.step, contactId }, now), (held) => held > 0))
          .pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie)
    }
  })
)
