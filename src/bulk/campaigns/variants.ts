/**
 * A campaign's A/B variants (issue 30 item 12) as saved and as sent: 2–4 variants, each a subject
 * and optionally its own content (html, body_text or mjml, a preheader) or its own template; a
 * variant with a subject alone takes the campaign's template's content. With variants the
 * campaign's own inline content fields (subject, html, body_text, mjml, preheader) are refused: the
 * variants are its content. `ab_test` says how the test runs (ab-test.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { MessageContent } from "../templates/fields.ts"
import { CampaignIncomplete, checkStartable, contentSource } from "./freeze.ts"
import type { CampaignFields, CampaignRow, CampaignVariant, VariantInput } from "./record.ts"

/** The fewest recipients a variant may get in the test share: below it a rate says nothing (400 at send). */
export const MIN_RECIPIENTS_PER_VARIANT = 10

/** The campaign's own content fields a campaign with variants may not have (its variants carry them). */
const TOP_LEVEL_CONTENT = ["subject", "html", "body_text", "mjml", "preheader"] as const
const VARIANT_INLINE = ["html", "body_text", "mjml", "preheader"] as const

/** What is wrong with the variants of `fields` as they would be saved, if anything: the message and the field. */
export const variantsProblem = (fields: CampaignFields): { readonly message: string; readonly param: string } | undefined => {
  if (fields.variants === null) {
    return fields.ab_test === null ? undefined : { message: "ab_test needs variants (2 to 4)", param: "variants" }
  }
  if (fields.ab_test === null) return { message: "A campaign with variants needs ab_test {test_percent, metric, wait_minutes}", param: "ab_test" }
  const own = TOP_LEVEL_CONTENT.find((k) => fields[k] !== null)
  if (own !== undefined) {
    return { message: `A campaign with variants takes its content from them: ${own} belongs in each variant (or send variants: null)`, param: own }
  }
  for (const [i, variant] of fields.variants.entries()) {
    const inline = VARIANT_INLINE.find((k) => variant[k] !== null)
    if (variant.template_id !== null && inline !== undefined) {
      return { message: "Give a variant template_id or its own content, not both", param: `variants[${i}].${inline}` }
    }
    if (variant.subject.trim() === "") return { message: "Each variant needs a subject", param: `variants[${i}].subject` }
  }
  return undefined
}

/** Variant `i` with every field present (the API leaves the optional ones out). */
export const completeVariant = (variant: VariantInput): CampaignVariant => ({
  subject: variant.subject,
  template_id: variant.template_id ?? null,
  html: variant.html ?? null,
  body_text: variant.body_text ?? null,
  mjml: variant.mjml ?? null,
  preheader: variant.preheader ?? null
})

/**
 * Variant `index`'s content now, as the freeze stores it and a preview shows it: its own template's
 * (read as it is at this moment), its own inline content, or the campaign's template's; always its
 * own subject, and the campaign's sender fields over the template's.
 */
export const variantSource = (campaign: CampaignRow, index: number) =>
  Effect.gen(function*() {
    const variant = campaign.variants![index]!
    const base = yield* contentSource(campaign)
    if (variant.template_id !== null) {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<MessageContent>`SELECT subject, html, body_text, preheader, vars, from_email, from_name, reply_to
        FROM templates WHERE id = ${variant.template_id} AND key_id = ${campaign.key_id}`
      const template = rows[0]
      if (template === undefined) {
        return yield* new CampaignIncomplete({ message: `The template ${variant.template_id} no longer exists`, param: `variants[${index}].template_id` })
      }
      const fromEmail = campaign.from_email ?? template.from_email ?? base.from_email
      const source: MessageContent = {
        ...template,
        subject: variant.subject,
        from_email: fromEmail,
        from_name: campaign.from_email !== null ? campaign.from_name : campaign.from_name ?? template.from_name ?? base.from_name,
        reply_to: campaign.reply_to ?? template.reply_to ?? base.reply_to
      }
      return source
    }
    const own = variant.html !== null || variant.body_text !== null
    const source: MessageContent = own
      ? { ...base, subject: variant.subject, html: variant.html ?? "", body_text: variant.body_text ?? "", preheader: variant.preheader }
      : { ...base, subject: variant.subject, preheader: variant.preheader ?? base.preheader }
    return source
  })

/** Every variant's content, each checked as a campaign's is before it starts (a missing part names its variant). */
export const startableVariants = (campaign: CampaignRow) =>
  Effect.flatMap(Effect.forEach(campaign.variants!, (_, i) =>
    Effect.gen(function*() {
      const source = yield* variantSource(campaign, i)
      const fromEmail = yield* checkStartable(campaign, source).pipe(
        Effect.mapError((e) =>
          e.param === "subject" || e.param === "html" ? new CampaignIncomplete({ message: `Variant ${i}: ${e.message}`, param: `variants[${i}].${e.param}` }) : e
        )
      )
      return { ...source, from_email: fromEmail }
    })), (sources) =>
    // One campaign, one sender: its messages, quota and domain checks name one address.
    sources.some((s) => s.from_email.toLowerCase() !== sources[0]!.from_email.toLowerCase())
      ? Effect.fail(new CampaignIncomplete({ message: "The variants' templates send from different addresses: set from_email on the campaign", param: "from_email" }))
      : Effect.succeed(sources))
