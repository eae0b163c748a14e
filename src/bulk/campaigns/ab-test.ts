/**
 * A campaign's A/B test (issue 30 item 12) from its start to its winner. The campaign stays
 * `sending` throughout (the spec's states; no new public state): only its fan-out stops at the end
 * of the test share until the winner is known.
 *
 * - start (`startAbTest`, in the transaction that moves it to `sending`): every variant's content
 *   is stored once, the recipients are frozen in random order, and the first `ab_test_size`
 *   positions — test_percent of them, rounded down to a multiple of the variants — are the test
 *   share, variant `(position - 1) % variants` each: an even split at random, written on the
 *   recipients' rows once. Fewer than 10 a variant → CampaignIncomplete (`ab_test.test_percent`),
 *   nothing frozen.
 * - fan-out (FanOut.ts): a batch never goes past the test share while there is no winner; a batch
 *   of the test share writes each variant's rows with its content (`writeAbBatch`); the batch that
 *   queues the last of the test share sets `ab_decide_at` (now + wait_minutes ×
 *   HERALD_AB_WAIT_UNIT_SECONDS). The rest's positions have no variant: they get the winner.
 * - decision (`decideDueWinners`, the campaigns actor's tick): one conditional UPDATE per due
 *   campaign (`ab_winner IS NULL AND status = 'sending'`), which computes the winner from the test
 *   share's unique rates as it sets it, so two replicas cannot decide twice or differently; a paused
 *   campaign is not due until it is resumed, a cancelled one never.
 *
 * No recipient gets two variants: a position is queued once (the fan-out's cursor), its variant
 * was written at the start, and the rest's variant is the one winner, decided once.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { writeCampaignBatch } from "../../mta/queue/campaign-batch.ts"
import type { QueueContext } from "../../mta/queue/enqueue.ts"
import { campaignDeliveriesByPosition, sharedContentSummary } from "../../mta/queue/read-models/campaign-progress.ts"
import type { TrackingUrls } from "../tracking/rewrite.ts"
import { footerOf } from "../settings/Settings.ts"
import { CampaignIncomplete, freeze } from "./freeze.ts"
import type { CampaignRow } from "./record.ts"
import { MIN_RECIPIENTS_PER_VARIANT, startableVariants } from "./variants.ts"

/** Campaigns whose winner is decided per tick. */
const DECISIONS_PER_TICK = 20

/** Freezes an A/B campaign and moves it to `sending` (its row locked by the caller); answers its total. */
export const startAbTest = (campaign: CampaignRow, now: Date, urls: TrackingUrls) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sources = yield* startableVariants(campaign)
    const footer = yield* footerOf(campaign.key_id)
    const { total, contentIds } = yield* freeze(campaign, sources[0]!, now, urls, footer, sources)
    const variants = sources.length
    const percent = campaign.ab_test!.test_percent
    const perVariant = Math.floor(Math.floor((total * percent) / 100) / variants)
    if (perVariant < MIN_RECIPIENTS_PER_VARIANT) {
      return yield* new CampaignIncomplete({
        message: `The test share (${percent}% of ${total} recipients) gives each of the ${variants} variants ${perVariant} recipients; `
          + `each needs at least ${MIN_RECIPIENTS_PER_VARIANT}: raise test_percent, use fewer variants or send to more contacts`,
        param: "ab_test.test_percent"
      })
    }
    const size = perVariant * variants
    yield* sql`UPDATE campaign_recipients SET variant = (position - 1) % ${variants}
      WHERE campaign_id = ${campaign.id} AND position <= ${size}`
    yield* sql`UPDATE campaigns SET status = 'sending', pause_reason = NULL, total_contacts = ${total}, content_id = ${contentIds[0]!},
        variant_content_ids = ${contentIds}::text[], ab_test_size = ${size}, from_email = coalesce(from_email, ${sources[0]!.from_email}),
        started_at = coalesce(started_at, ${now}), updated_at = ${now}
      WHERE id = ${campaign.id}`
    return total
  })

/** How many recipients the next batch may take: while there is no winner, none past the test share (0: waiting). */
export const batchRoom = (campaign: CampaignRow, batch: number): number =>
  campaign.ab_test_size === null || campaign.ab_winner !== null
    ? batch
    : Math.max(0, Math.min(batch, campaign.ab_test_size - campaign.queued_count))

/** The stored content `contentId` as a batch shares it. */
const sharedOf = (campaignId: string, contentId: string) =>
  Effect.map(sharedContentSummary(contentId), (summary) => {
    const found = Option.getOrThrowWith(summary, () => new Error(`campaign ${campaignId}: its content ${contentId} is not stored`))
    return { shared: { id: contentId, bytes: found.bytes }, subject: found.subject }
  })

/**
 * One batch (`after`, `through`] of an A/B campaign: in the test share, each variant's recipients
 * with its content; past it, everyone with the winner's. The batch that ends the test share starts the wait.
 */
export const writeAbBatch = (context: QueueContext, campaign: CampaignRow, range: { readonly after: number; readonly through: number; readonly count: number }, waitUnitMs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { after, through, count } = range
    const contents = campaign.variant_content_ids!
    const size = campaign.ab_test_size!
    if (after >= size) {
      const winner = yield* sharedOf(campaign.id, contents[campaign.ab_winner!]!)
      return yield* writeCampaignBatch(context, { campaignId: campaign.id, ...winner, after, through, count })
    }
    const groups = yield* sql<{ variant: number; count: number }>`SELECT variant, count(*)::integer AS count FROM campaign_recipients
      WHERE campaign_id = ${campaign.id} AND position > ${after} AND position <= ${through} GROUP BY variant ORDER BY variant`
    for (const group of groups) {
      const content = yield* sharedOf(campaign.id, contents[group.variant]!)
      yield* writeCampaignBatch(context, { campaignId: campaign.id, ...content, after, through, count: group.count, variant: group.variant })
    }
    if (through >= size) {
      const decideAt = new Date(context.now.getTime() + campaign.ab_test!.wait_minutes * waitUnitMs)
      yield* sql`UPDATE campaigns SET ab_decide_at = ${decideAt} WHERE id = ${campaign.id}`
    }
  })

/**
 * Per variant of one campaign (0 to `variants` - 1): `sent` (deliveries accepted), `opens_unique`
 * and `clicks_unique` (contacts, as the campaign's counts are), and their rates over `sent`. A
 * position past the test share counts for `winner` (null while there is none).
 */
export const variantFigures = (sql: SqlClient.SqlClient, campaignId: string, variants: number, winner: number | null) =>
  sql`SELECT v.idx, coalesce(s.sent, 0)::integer AS sent, coalesce(s.opens_unique, 0)::integer AS opens_unique,
      coalesce(s.clicks_unique, 0)::integer AS clicks_unique,
      coalesce(s.opens_unique::numeric / nullif(s.sent, 0), 0) AS open_rate,
      coalesce(s.clicks_unique::numeric / nullif(s.sent, 0), 0) AS click_rate
    FROM generate_series(0, ${variants - 1}::integer) AS v(idx)
    LEFT JOIN (
      SELECT coalesce(r.variant, ${winner}::integer) AS idx, count(*) FILTER (WHERE q.state = 'sent') AS sent,
        count(t.email) FILTER (WHERE t.opened) AS opens_unique,
        count(t.email) FILTER (WHERE cardinality(t.clicked_links) > 0) AS clicks_unique
      FROM (${campaignDeliveriesByPosition(sql, campaignId)}) q
      JOIN campaign_recipients r ON r.campaign_id = ${campaignId} AND r.position = q.position
      LEFT JOIN tracking_recipients t ON t.campaign_id = ${campaignId} AND t.delivery_id = q.delivery_id
      GROUP BY 1
    ) s ON s.idx = v.idx`

/**
 * Decides the winner of every due A/B campaign: the variant with the higher unique rate of its
 * metric in the test share, ties to the first. One conditional UPDATE each, guarded by `ab_winner
 * IS NULL` and `status = 'sending'` and computing the winner in the same statement: whichever
 * replica gets the row's lock first decides, the other finds it decided and changes nothing.
 * Answers how many were decided.
 */
export const decideDueWinners = (now: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const due = yield* sql<{ id: string; variants: number }>`SELECT id, jsonb_array_length(variants) AS variants FROM campaigns
      WHERE ab_winner IS NULL AND ab_decide_at <= ${now} AND status = 'sending' ORDER BY ab_decide_at LIMIT ${DECISIONS_PER_TICK}`
    let decided = 0
    for (const campaign of due) {
      const rows = yield* sql<{ ab_winner: number }>`UPDATE campaigns c SET ab_winner = (
          SELECT f.idx FROM (${variantFigures(sql, campaign.id, campaign.variants, null)}) f
          ORDER BY CASE WHEN c.ab_test->>'metric' = 'clicks' THEN f.click_rate ELSE f.open_rate END DESC, f.idx LIMIT 1
        ), updated_at = ${now}
        WHERE c.id = ${campaign.id} AND c.status = 'sending' AND c.ab_winner IS NULL AND c.ab_decide_at <= ${now}
        RETURNING c.ab_winner`
      if (rows[0] !== undefined) {
        decided++
        yield* Effect.logInfo(`campaign ${campaign.id}: A/B test decided, variant ${rows[0].ab_winner} goes to the rest`)
      }
    }
    return decided
  })
