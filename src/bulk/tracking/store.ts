/**
 * What opens and clicks leave behind: the owner of `campaign_links`, `campaign_tracking`,
 * `campaign_tracking_hours`, `tracking_recipients` and `tracking_hits` (migration 0024).
 *
 * The endpoints only log a hit (ingest.ts); the `tracking-aggregator` actor takes batches of them
 * out of the log and counts them into these tables (fold.ts `foldHits`), one transaction per batch.
 * Here: the links, a campaign's delete, and the 90-day prune of the detail.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { pruneOpensAndClicks } from "../contacts/engagement.ts"
import { dropCampaignHits } from "./ingest.ts"
import { deleteCampaignWindows, pruneWindows } from "./windows.ts"

/** Per-recipient detail is kept this long (spec "Tracking detail retention"; analytics' detail_window_days). */
export const DETAIL_WINDOW_DAYS = 90
const DAY_MS = 86_400_000

/**
 * The campaign's tracked links (index → URL, as `rewriteForTracking` returned them), written when
 * its content is frozen. Called again for the same campaign (a resumed freeze), it keeps the first.
 */
export const recordCampaignLinks = (campaignId: string, links: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    links.length === 0
      ? Effect.void
      : sql`INSERT INTO campaign_links ${sql.insert(links.map((url, i) => ({ campaign_id: campaignId, link_index: i, url })))}
          ON CONFLICT DO NOTHING`
  ).pipe(Effect.asVoid)

/** The URL of link `linkIndex` of the campaign, if the campaign has it. */
export const linkUrl = (campaignId: string, linkIndex: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ url: string }>`SELECT url FROM campaign_links WHERE campaign_id = ${campaignId} AND link_index = ${linkIndex}`
  ).pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => r.url)))

/** Every link of the campaign, index → URL (none yet: its content is not frozen, or it is gone). */
export const campaignLinkUrls = (campaignId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ link_index: number; url: string }>`SELECT link_index, url FROM campaign_links WHERE campaign_id = ${campaignId}`
  ).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.link_index, r.url]))))

/**
 * A campaign's tracking detail, when the campaign itself is deleted: its hits, repeat windows and
 * links go; the counters (`campaign_tracking`, the hourly buckets) and each contact's first-open
 * and first-click markers stay, as aggregate counters do indefinitely (issue 30 item 4: the key's
 * rates keep counting a deleted campaign), the markers' times pruned after 90 days like every other detail.
 */
export const deleteCampaignTracking = (campaignId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* dropCampaignHits(campaignId)
      yield* deleteCampaignWindows(campaignId)
      yield* sql`DELETE FROM tracking_hits WHERE campaign_id = ${campaignId}`
      yield* sql`DELETE FROM campaign_links WHERE campaign_id = ${campaignId}`
    })))

/**
 * Forgets the per-recipient detail older than DETAIL_WINDOW_DAYS at `now`: the opens and clicks
 * themselves, the first-open and first-click times, the contacts' open and click facts, the
 * repeat windows of tokens not counted since (windows.ts). The counters, the hourly timeline and the first-per-contact markers stay, so the counts stay right
 * and a late open is not "first" again.
 */
export const pruneTrackingDetail = (now: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      const before = new Date(now.getTime() - DETAIL_WINDOW_DAYS * DAY_MS)
      const [gone] = yield* sql<{ n: number }>`WITH gone AS (DELETE FROM tracking_hits WHERE at < ${before} RETURNING 1)
        SELECT count(*)::integer AS n FROM gone`
      yield* sql`UPDATE tracking_recipients SET first_opened_at = NULL WHERE first_opened_at < ${before}`
      yield* sql`UPDATE tracking_recipients SET first_clicked_at = NULL WHERE first_clicked_at < ${before}`
      yield* pruneOpensAndClicks(before)
      yield* pruneWindows(before)
      return { before, hits: gone?.n ?? 0 }
    }))
