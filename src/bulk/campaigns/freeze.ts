/**
 * What is fixed when a campaign's sending starts (DESIGN "One rendering engine"; issue 20
 * "Fan-out"): its content, stored once as the shared part of all its messages (`message_contents`),
 * and its recipients, one row per address in `campaign_recipients`, numbered for the fan-out's
 * cursor. Runs inside the transaction that moves the campaign to `sending`, its row locked.
 *
 * Recipients (DESIGN "Sendable"): contacts of the campaign's key that are `active`, whose address
 * is on no suppression list (the account's or the platform's), and — with `list_ids` — members of
 * one of the lists, confirmed where that list requires confirmation; a segment narrows them (its
 * rules compiled by src/bulk/segments/rules.ts), and a segment alone runs over every contact of
 * the key. Each address once: a key's contacts are unique by address (contacts_key_email).
 *
 * The key's footer (its postal address: issue 30 item 9) is stored with the content, outside the
 * tracked html: delivery adds it at render time to each part without `{{ unsubscribe_url }}`.
 *
 * Tracking (issue 20 "Tracking"): the stored HTML is rewritten for tracking here, once per
 * campaign (src/bulk/tracking/rewrite.ts), and its tracked links recorded for the click endpoint;
 * each delivery fills in its recipient's tokens when it is composed (src/mta/compose/compose.ts).
 */
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Data, Effect } from "effect"
import type { CampaignContent } from "../../mta/queue/StoredMessage.ts"
import { storeSharedContent } from "../../mta/queue/enqueue.ts"
import { confirmedMembership } from "../lists/sendable.ts"
import { compileRules, type SegmentRules } from "../segments/rules.ts"
import { rewriteForTracking, type TrackingUrls } from "../tracking/rewrite.ts"
import { recordCampaignLinks } from "../tracking/store.ts"
import { textFromHtml, withPreheader } from "../render/text.ts"
import type { MessageContent } from "../templates/fields.ts"
import type { ContentSource } from "../render/content.ts"
import type { Footer } from "../render/footer.ts"
import type { CampaignRow } from "./record.ts"

/** The campaign cannot start as it is: what is missing, and the field to fix (400 validation_failed). */
export class CampaignIncomplete extends Data.TaggedError("CampaignIncomplete")<{ readonly message: string; readonly param: string }> {}

type Source = MessageContent

/** The campaign's content now: its template's (read as it is at this moment) or its own. */
export const contentSource = (campaign: CampaignRow) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (campaign.template_id === null) {
      const own: Source = {
        subject: campaign.subject ?? "",
        html: campaign.html ?? "",
        body_text: campaign.body_text ?? "",
        preheader: campaign.preheader,
        vars: {},
        from_email: campaign.from_email,
        from_name: campaign.from_name,
        reply_to: campaign.reply_to
      }
      return own
    }
    const rows = yield* sql<Source>`SELECT subject, html, body_text, preheader, vars, from_email, from_name, reply_to
      FROM templates WHERE id = ${campaign.template_id} AND key_id = ${campaign.key_id}`
    const template = rows[0]
    if (template === undefined) return yield* new CampaignIncomplete({ message: `The template ${campaign.template_id} no longer exists`, param: "template_id" })
    // The campaign's sender fields win over the template's.
    return {
      ...template,
      from_email: campaign.from_email ?? template.from_email,
      from_name: campaign.from_email !== null ? campaign.from_name : campaign.from_name ?? template.from_name,
      reply_to: campaign.reply_to ?? template.reply_to
    }
  })

/** What a campaign must have to start; the sender address it sends from. */
export const checkStartable = (campaign: CampaignRow, source: Source) =>
  Effect.gen(function*() {
    if (source.from_email === null) {
      return yield* new CampaignIncomplete({ message: "No sender: set from_email on the campaign or its template", param: "from_email" })
    }
    if (source.subject.trim() === "") return yield* new CampaignIncomplete({ message: "The campaign has no subject", param: "subject" })
    if (source.html === "" && source.body_text === "") {
      return yield* new CampaignIncomplete({ message: "The campaign has no content: give html, body_text or mjml", param: "html" })
    }
    if (campaign.list_ids.length === 0 && campaign.segment_id === null) {
      return yield* new CampaignIncomplete({ message: "A campaign needs list_ids or a segment_id", param: "list_ids" })
    }
    return source.from_email
  })

/**
 * The stored campaign message: the engine's sources, the preheader placed into the html and the
 * text part generated from the html source when there is none (as prepareContent would), so the
 * delivery renders exactly what a preview of the campaign shows.
 */
export const frozenContent = (source: Source & { readonly from_email: string }, footer?: Footer): CampaignContent => {
  const parts = contentParts(source)
  return {
    ...(footer === undefined ? {} : { footer }),
    from: source.from_name === null || source.from_name === "" ? { email: source.from_email } : { email: source.from_email, name: source.from_name },
    ...(source.reply_to === null ? {} : { reply_to: { email: source.reply_to } }),
    subject: parts.subject,
    content: [
      { type: "text/plain", value: parts.body_text },
      ...(parts.html === "" ? [] : [{ type: "text/html" as const, value: parts.html }])
    ],
    vars: source.vars
  }
}

/** The parts as stored and rendered at delivery: the preheader placed, the text part made from the html when there is none. */
export const contentParts = (source: Source): ContentSource => ({
  subject: source.subject,
  html: source.html === "" ? "" : withPreheader(source.html, source.preheader),
  body_text: source.body_text !== "" || source.html === "" ? source.body_text : textFromHtml(source.html)
})

/**
 * `frozenContent` with its HTML part rewritten for tracking (pixel and click placeholders), and the
 * tracked links by index. A campaign without HTML is not tracked: there is nowhere to put a pixel.
 */
export const trackedContent = (
  content: CampaignContent,
  urls: TrackingUrls,
  prior: ReadonlyArray<string> = []
): { readonly content: CampaignContent; readonly links: ReadonlyArray<string> } => {
  let links: ReadonlyArray<string> = prior
  const parts = content.content.map((part) => {
    if (part.type !== "text/html") return part
    const tracked = rewriteForTracking(part.value, urls, prior)
    links = tracked.links
    return { ...part, value: tracked.html }
  })
  return { content: { ...content, content: parts }, links }
}

/**
 * Freezes the recipients and the content (rewritten for tracking); answers how many recipients
 * there are. With `variants` (an A/B test, ab-test.ts) each variant's content is stored, their
 * links in one table, and the recipients are numbered in random order, so that the test share
 * (the first positions) is a random sample; `contentId` is then the first variant's.
 */
export const freeze = (
  campaign: CampaignRow,
  source: Source & { readonly from_email: string },
  now: Date,
  urls: TrackingUrls,
  footer: Footer,
  variants?: ReadonlyArray<Source & { readonly from_email: string }>
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    let narrowed: Fragment = sql`TRUE`
    if (campaign.segment_id !== null) {
      const rows = yield* sql<{ rules: SegmentRules }>`SELECT rules FROM segments WHERE id = ${campaign.segment_id} AND key_id = ${campaign.key_id}`
      if (rows[0] === undefined) return yield* new CampaignIncomplete({ message: `The segment ${campaign.segment_id} no longer exists`, param: "segment_id" })
      narrowed = compileRules(sql, { keyId: campaign.key_id, now }, rows[0].rules)
    }
    const onLists = campaign.list_ids.length === 0 ? sql`TRUE` : sql`EXISTS (
      SELECT 1 FROM list_memberships m JOIN lists l ON l.id = m.list_id
      WHERE m.contact_id = c.id AND m.list_id = ANY(${[...campaign.list_ids]}::text[]) AND l.key_id = c.key_id
        AND ${confirmedMembership(sql, sql`l.require_confirmation`)})`
    const [counted] = yield* sql<{ total: number }>`
      WITH frozen AS (
        INSERT INTO campaign_recipients (campaign_id, position, contact_id, email, name, metadata)
        SELECT ${campaign.id}, row_number() OVER (ORDER BY ${variants === undefined ? sql`c.created_at, c.id` : sql`random()`}), c.id, c.email, c.name, c.metadata
        FROM contacts c
        WHERE c.key_id = ${campaign.key_id} AND c.status = 'active'
          AND NOT EXISTS (SELECT 1 FROM suppressions s
            WHERE s.email = lower(c.email) AND (s.account_id = c.account_id OR s.account_id IS NULL))
          AND ${onLists} AND ${narrowed}
        RETURNING 1
      )
      SELECT count(*)::integer AS total FROM frozen`
    let links: ReadonlyArray<string> = []
    const contentIds: Array<string> = []
    for (const each of variants ?? [source]) {
      const tracked = trackedContent(frozenContent(each, footer), urls, links)
      links = tracked.links
      contentIds.push((yield* storeSharedContent(campaign.account_id, tracked.content, now)).id)
    }
    yield* recordCampaignLinks(campaign.id, links)
    return { total: counted?.total ?? 0, contentId: contentIds[0]!, contentIds }
  })
