/**
 * Campaign analytics (issue 20 "Analytics"), a read model over what the owners keep:
 *
 * - sends and bounces: the campaign's deliveries (`messages.campaign_id`); `delivered` is a
 *   delivery the far side accepted and that has not bounced since (state `sent`: a late DSN turns
 *   it `bounced`), so the two never overlap;
 * - opens and clicks: the tracking store's counters, per-link counts and hourly buckets, kept for
 *   ever (src/bulk/tracking/store.ts), and its per-recipient first open and click, whose times are
 *   detail pruned after 90 days — the counts stay, the CSV's first_* columns go empty;
 * - complaints and unsubscribes: the address facts that name the campaign (`contact_engagement`
 *   with `campaign_id`, kept for ever), each address once per campaign.
 *
 * The rates endpoint sums the same sources over every campaign of the key by event time: the
 * acceptance (delivered), the bounce, the first human open and first click of each contact, the
 * complaint and the unsubscribe.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect, Schema, Stream } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { ExportDatabase } from "../../db/export-database.ts"
import { campaignOutcomeCounts, campaignRecipientDeliveries, deliveredByHour, outcomeCountsWithin } from "../../mta/queue/read-models/analytics-counts.ts"
import { withStatementTimeout } from "../../db/statement-timeout.ts"
import type { Owner } from "../templates/Templates.ts"
import { type HourCounts, ratesOf, timelineOf } from "./figures.ts"
import { DETAIL_WINDOW_DAYS } from "../tracking/store.ts"
import { variantFigures } from "../campaigns/ab-test.ts"

export class AnalyticsCampaignNotFound extends Data.TaggedError("AnalyticsCampaignNotFound")<{ readonly id: string }> {}

/** The periods of GET /v1/bulk/analytics/rates and their length. */
export const RATE_PERIODS = { "24h": 1, "7d": 7, "30d": 30 } as const
export type RatePeriod = keyof typeof RATE_PERIODS

/** How many links top_links shows. */
export const TOP_LINKS = 10

/** One row of the per-recipient CSV. */
export interface RecipientDetail {
  readonly email: string
  readonly status: string
  readonly sent_at: string | null
  readonly first_opened_at: string | null
  readonly first_clicked_at: string | null
}

const DAY_MS = 86_400_000
const iso = (d: Date | null) => (d === null ? null : d.toISOString())

/** A row of the export's statement (the queue's recipients with their tracking detail), decoded where it leaves the database. */
const RecipientRow = Schema.Struct({
  email: Schema.String,
  state: Schema.String,
  sent_at: Schema.NullOr(Schema.DateFromSelf),
  first_opened_at: Schema.NullOr(Schema.DateFromSelf),
  first_clicked_at: Schema.NullOr(Schema.DateFromSelf)
})

const decodeRecipientRow = (row: unknown) =>
  Effect.map(Schema.decodeUnknown(RecipientRow)(row), (r): RecipientDetail => ({
    email: r.email,
    status: r.state === "sent" ? "delivered" : r.state,
    sent_at: iso(r.sent_at),
    first_opened_at: iso(r.first_opened_at),
    first_clicked_at: iso(r.first_clicked_at)
  }))
const int = (v: unknown) => Number(v ?? 0)

export class Analytics extends Effect.Service<Analytics>()("herald/Analytics", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const exports = yield* ExportDatabase
    const { queryTimeoutMs } = yield* AppConfig
    /** A campaign's figures are read by id: nothing to narrow but the request itself. */
    const campaignDeadline = withStatementTimeout(sql, queryTimeoutMs, {
      message: `The campaign's analytics took longer than ${queryTimeoutMs} ms to read; try again later`
    })

    const campaignOf = (owner: Owner, id: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ id: string; started_at: Date | null; variants: ReadonlyArray<{ subject: string }> | null; ab_winner: number | null }>`
          SELECT id, started_at, variants, ab_winner FROM campaigns
          WHERE id = ${id} AND key_id = ${owner.keyId}`
        if (rows[0] === undefined) return yield* new AnalyticsCampaignNotFound({ id })
        return rows[0]
      })

    /** Complaints and unsubscribes of the campaigns `campaigns` selects, each address once per campaign. */
    const factCounts = (campaigns: unknown, window: unknown = sql`true`) =>
      Effect.map(
        sql<{ complaints: string; unsubs: string }>`SELECT
            count(DISTINCT (campaign_id, email)) FILTER (WHERE type = 'complained') AS complaints,
            count(DISTINCT (campaign_id, email)) FILTER (WHERE type = 'unsubscribed') AS unsubs
          FROM contact_engagement WHERE campaign_id IN (${campaigns}) AND type IN ('complained', 'unsubscribed') AND ${window}`,
        (rows) => ({ complaints: int(rows[0]?.complaints), unsubs: int(rows[0]?.unsubs) })
      )

    const analytics = (owner: Owner, id: string) =>
      Effect.gen(function*() {
        const campaign = yield* campaignOf(owner, id)
        const outcomes = yield* campaignOutcomeCounts(id)
        const [tracking] = yield* sql<Record<"opens_total" | "opens_unique" | "clicks_total" | "clicks_unique", string>>`
          SELECT opens_total, opens_unique, clicks_total, clicks_unique FROM campaign_tracking WHERE campaign_id = ${id}`
        const facts = yield* factCounts(sql`SELECT ${id}::text`)
        const links = yield* sql<{ url: string; clicks_unique: string; clicks_total: string }>`
          SELECT url, clicks_unique, clicks_total FROM campaign_links WHERE campaign_id = ${id} AND clicks_total > 0
          ORDER BY clicks_unique DESC, clicks_total DESC, link_index LIMIT ${TOP_LINKS}`
        const hours = campaign.started_at === null ? [] : yield* sql<{ hour: Date; delivered: string; opens: string; clicks: string }>`
          SELECT hour, sum(delivered) AS delivered, sum(opens) AS opens, sum(clicks) AS clicks FROM (
            ${deliveredByHour(sql, id)}
            UNION ALL
            SELECT hour, 0, opens, clicks FROM campaign_tracking_hours WHERE campaign_id = ${id}
          ) h GROUP BY hour ORDER BY hour`
        const counts = {
          delivered: outcomes.delivered,
          opens_unique: int(tracking?.opens_unique),
          clicks_unique: int(tracking?.clicks_unique),
          bounces: outcomes.bounces,
          complaints: facts.complaints,
          unsubs: facts.unsubs
        }
        return {
          campaign_id: id,
          delivered: counts.delivered,
          opens_unique: counts.opens_unique,
          opens_total: int(tracking?.opens_total),
          clicks_unique: counts.clicks_unique,
          clicks_total: int(tracking?.clicks_total),
          bounces: counts.bounces,
          complaints: counts.complaints,
          unsubs: counts.unsubs,
          rates: ratesOf(counts),
          top_links: links.map((l) => ({ url: l.url, clicks_unique: int(l.clicks_unique), clicks_total: int(l.clicks_total) })),
          timeline: campaign.started_at === null ? [] : timelineOf(
            campaign.started_at,
            hours.map((h): HourCounts => ({ hour: h.hour, delivered: int(h.delivered), opens: int(h.opens), clicks: int(h.clicks) }))
          ),
          detail_window_days: DETAIL_WINDOW_DAYS,
          variants: yield* variantsOf(id, campaign.variants, campaign.ab_winner),
          winner: campaign.ab_winner
        }
      }).pipe(campaignDeadline)

    /** An A/B campaign's figures per variant (src/bulk/campaigns/ab-test.ts `variantFigures`); none for one content. */
    const variantsOf = (id: string, variants: ReadonlyArray<{ subject: string }> | null, winner: number | null) =>
      variants === null ? Effect.succeed([]) : Effect.map(
        sql<{ idx: number; sent: number; opens_unique: number; clicks_unique: number; open_rate: string; click_rate: string }>`
          ${variantFigures(sql, id, variants.length, winner)} ORDER BY v.idx`,
        (rows) => rows.map((r) => ({
          index: r.idx,
          subject: variants[r.idx]?.subject ?? "",
          sent: r.sent,
          opens_unique: r.opens_unique,
          clicks_unique: r.clicks_unique,
          open_rate: Math.round(Number(r.open_rate) * 10_000) / 10_000,
          click_rate: Math.round(Number(r.click_rate) * 10_000) / 10_000
        }))
      )

    /**
     * The campaign's recipients (one delivery each), by address, read through a cursor (the CSV
     * export, as the audit log's): `sent_at` when the far side accepted it (kept also when a DSN
     * came later), the first human open and first click while their detail is kept. On the
     * exports' own pool, one export of the account at a time (src/db/export-database.ts).
     */
    const recipients = (owner: Owner, id: string) =>
      Effect.flatMap(campaignOf(owner, id), () =>
        exports.open(owner.accountId, sql`
          SELECT q.email, q.state, q.sent_at, r.first_opened_at, r.first_clicked_at
          FROM (${campaignRecipientDeliveries(sql, id)}) q
          LEFT JOIN tracking_recipients r ON r.campaign_id = ${id} AND r.email = lower(q.email)
          ORDER BY lower(q.email) COLLATE "C", q.delivery_id`, {
          message: `The campaign's recipients took longer than ${queryTimeoutMs} ms to start reading; try again later`
        }).pipe(Effect.map(Stream.mapEffect((row) => Effect.orDie(decodeRecipientRow(row))))))

    /** Every campaign of the key over the last `period`, by event time. */
    const rates = (owner: Owner, period: RatePeriod) =>
      Effect.gen(function*() {
        const to = new Date(yield* Clock.currentTimeMillis)
        const from = new Date(to.getTime() - RATE_PERIODS[period] * DAY_MS)
        // The key's deleted campaigns too: their aggregate counters are kept (issue 30 item 4).
        const mine = sql`SELECT id FROM campaigns WHERE key_id = ${owner.keyId} UNION ALL SELECT id FROM deleted_campaigns WHERE key_id = ${owner.keyId}`
        const outcomes = yield* outcomeCountsWithin(mine, from, to)
        const [firsts] = yield* sql<{ opens: string; clicks: string }>`SELECT
            count(*) FILTER (WHERE first_opened_at > ${from} AND first_opened_at <= ${to}) AS opens,
            count(*) FILTER (WHERE first_clicked_at > ${from} AND first_clicked_at <= ${to}) AS clicks
          FROM tracking_recipients WHERE campaign_id IN (${mine})`
        const facts = yield* factCounts(mine, sql`at > ${from} AND at <= ${to}`)
        const counts = {
          delivered: outcomes.delivered,
          opens_unique: int(firsts?.opens),
          clicks_unique: int(firsts?.clicks),
          bounces: outcomes.bounces,
          complaints: facts.complaints,
          unsubs: facts.unsubs
        }
        return { period, from: from.toISOString(), to: to.toISOString(), ...counts, rates: ratesOf(counts) }
      }).pipe(withStatementTimeout(sql, queryTimeoutMs, {
        param: "period",
        message: `The rates over ${period} took longer than ${queryTimeoutMs} ms to read: ask for a shorter period`
      }))

    return { analytics, recipients, rates } as const
  })
}) {}
