/**
 * A campaign as one contact will get it, before it is sent (issue 30 item 7):
 *
 * - preview: the subject, html and text the contact would get — the campaign's content now (its
 *   template's, read as it is at this moment, or its own), placed and completed as the freeze
 *   stores it (freeze.ts `contentParts`), rendered with the contact's variables and their own
 *   unsubscribe link. Links untracked: tracking is written into the stored copy only when sending
 *   starts, and this reads the source.
 * - test-send: the same render sent to 1–5 addresses through the one test-send path of templates
 *   (src/bulk/templates/TestSend.ts `deliver`: `[Test]` subject, no tracking, no events, the
 *   send's refusals, a suppressed address refused, the quota charged, one count in the window).
 *   The unsubscribe link is redacted (`/u/redacted`, the pages' plain 404): a test reader must not
 *   unsubscribe the contact whose variables the test borrowed.
 *
 * `variant` names one of a campaign's A/B variants (variants.ts `variantSource`: what its freeze
 * stores for that variant); without it, an A/B campaign shows its first. A campaign without
 * variants, or an index past its last, → 400 `param: variant`.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { ContactNotFound, type Owner } from "../contacts/Contacts.ts"
import { PublicTokens } from "../public/tokens.ts"
import { unsubscribeToken, unsubscribeUrl } from "../public/unsubscribe-link.ts"
import { contactScope, type Contact } from "../render/content.ts"
import { withFooter } from "../render/footer.ts"
import { REDACTED } from "../render/message-view.ts"
import { footerOf } from "../settings/Settings.ts"
import { RenderEngine } from "../render/RenderEngine.ts"
import { NoSender, TestSend } from "../templates/TestSend.ts"
import { Campaigns } from "./Campaigns.ts"
import { variantSource } from "./variants.ts"
import { CampaignIncomplete, contentParts, contentSource } from "./freeze.ts"

export interface PreviewRequest {
  readonly contact: string
  readonly variant?: number | undefined
}

export interface TestSendRequest {
  readonly to: ReadonlyArray<string>
  readonly contact?: string | undefined
  readonly variant?: number | undefined
}

/** A variant the campaign does not have (`count`: how many it has, 0 without an A/B test). */
export class NoSuchVariant extends Data.TaggedError("NoSuchVariant")<{ readonly variant: number; readonly count: number }> {}

export class CampaignPreview extends Effect.Service<CampaignPreview>()("herald/CampaignPreview", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const campaigns = yield* Campaigns
    const engine = yield* RenderEngine
    const testSend = yield* TestSend
    const tokens = yield* PublicTokens
    const { baseUrl } = yield* AppConfig

    /** The key's contact by id or address (an `@` tells them apart), its variables. */
    const contactOf = (owner: Owner, ref: string) =>
      Effect.gen(function*() {
        const byRef = ref.includes("@") ? sql`lower(email) = ${ref.toLowerCase()}` : sql`id = ${ref}`
        const rows = yield* sql<{ email: string; name: string | null; metadata: Record<string, unknown> }>`
          SELECT email, name, metadata FROM contacts WHERE key_id = ${owner.keyId} AND ${byRef}`
        if (rows[0] === undefined) return yield* new ContactNotFound({ ref })
        return rows[0] as Contact & { readonly email: string }
      })

    /** The campaign's content for `contact`, with `unsubscribe` as its link; the sender it would come from. */
    const renderFor = (owner: Owner, id: string, variant: number | undefined, contact: Contact, unsubscribe: string) =>
      Effect.gen(function*() {
        const row = yield* campaigns.find(owner, id)
        const count = row.variants?.length ?? 0
        if (variant !== undefined && variant >= count) return yield* new NoSuchVariant({ variant, count })
        const source = yield* (count === 0 ? contentSource(row) : variantSource(row, variant ?? 0)).pipe(Effect.provideService(SqlClient.SqlClient, sql))
        // The footer as delivery adds it (a key without a postal address previews without one: its send is refused).
        const footer = yield* footerOf(owner.keyId).pipe(
          Effect.catchTag("PostalAddressMissing", () => Effect.succeed(undefined)),
          Effect.provideService(SqlClient.SqlClient, sql)
        )
        const parts = withFooter(contentParts(source), footer)
        const scope = { ...contactScope(source.vars, contact, unsubscribe), ...(footer === undefined ? {} : { postal_address: footer.postal_address }) }
        const rendered = yield* engine.render(owner.accountId, parts, scope)
        return { rendered, source }
      })

    const preview = (owner: Owner, id: string, body: PreviewRequest) =>
      Effect.gen(function*() {
        const contact = yield* contactOf(owner, body.contact)
        const link = unsubscribeUrl(baseUrl, unsubscribeToken(tokens, { accountId: owner.accountId, email: contact.email, source: id }))
        const { rendered } = yield* renderFor(owner, id, body.variant, contact, link)
        return { subject: rendered.subject, html: rendered.html ?? "", body_text: rendered.text }
      })

    const send = (owner: Owner, id: string, body: TestSendRequest, requestId: string) =>
      Effect.gen(function*() {
        const contact = body.contact === undefined ? { email: body.to[0]! } : yield* contactOf(owner, body.contact)
        const { rendered, source } = yield* renderFor(owner, id, body.variant, contact, unsubscribeUrl(baseUrl, REDACTED))
        if (source.from_email === null) return yield* new NoSender()
        const messageIds = yield* testSend.deliver(owner, {
          fromEmail: source.from_email,
          fromName: source.from_name ?? undefined,
          replyTo: source.reply_to,
          subject: rendered.subject,
          text: rendered.text,
          html: rendered.html
        }, body.to, requestId)
        return { ok: true as const, message_ids: messageIds, to: body.to }
      })

    return { preview, send } as const
  })
}) {}

export { CampaignIncomplete }
