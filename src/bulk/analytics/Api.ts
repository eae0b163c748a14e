/**
 * Campaign analytics: one campaign's figures (or its per-recipient detail as CSV) and the rates of
 * every campaign of the key over a recent period. Rates are fractions with 4 decimals, 0 when their
 * denominator is 0. What an open and a click are (the repeat window) is said in OPENS_AND_CLICKS.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { NotFound, Unprocessable } from "../../http/errors.ts"
import { IdText } from "../../http/bounds.ts"

/** The definition the totals, the timeline and top_links count by (src/bulk/tracking/windows.ts). */
const OPENS_AND_CLICKS = "An open (a click) is a fetch of a recipient's pixel (of one of its links) that is not within "
  + "HERALD_TRACKING_REPEAT_SECONDS (60 s by default) of that token's last counted fetch: a reload, a client fetching twice or a "
  + "replayed token counts once per window. opens_total, clicks_total, the timeline and top_links count opens and clicks so "
  + "defined; the _unique counts are contacts, as before. Per-recipient detail (the engagement history, the message timeline) "
  + "keeps at most 50 opens or clicks per token; the counts go on."

const Rates = Schema.Struct({
  open: Schema.Number.annotations({ description: "opens_unique / delivered" }),
  ctr: Schema.Number.annotations({ description: "clicks_unique / delivered" }),
  ctor: Schema.Number.annotations({ description: "clicks_unique / opens_unique" }),
  bounce: Schema.Number.annotations({ description: "bounces / (delivered + bounces)" }),
  complaint: Schema.Number.annotations({ description: "complaints / delivered" }),
  unsub: Schema.Number.annotations({ description: "unsubs / delivered" })
}).annotations({ identifier: "AnalyticsRates", description: "Fractions with 4 decimals; each 0 when its denominator is 0" })

const counts = {
  delivered: Schema.Int.annotations({ description: "Accepted by the far side and not bounced since" }),
  opens_unique: Schema.Int.annotations({ description: "Contacts who opened (human opens; prefetching proxies do not count)" }),
  clicks_unique: Schema.Int.annotations({ description: "Contacts who clicked" }),
  bounces: Schema.Int,
  complaints: Schema.Int,
  unsubs: Schema.Int.annotations({ description: "Contacts who unsubscribed through this campaign's link (once per contact)" })
}

export const CampaignAnalytics = Schema.Struct({
  campaign_id: Schema.String,
  delivered: counts.delivered,
  opens_unique: counts.opens_unique,
  opens_total: Schema.Int.annotations({
    description: "Opens, prefetching proxies included: loads of the pixel, each token's repeats within the repeat window not counted"
  }),
  clicks_unique: counts.clicks_unique,
  clicks_total: Schema.Int.annotations({ description: "Clicks: each token's repeats within the repeat window not counted" }),
  bounces: counts.bounces,
  complaints: counts.complaints,
  unsubs: counts.unsubs,
  rates: Rates,
  top_links: Schema.Array(Schema.Struct({ url: Schema.String, clicks_unique: Schema.Int, clicks_total: Schema.Int }))
    .annotations({ description: "The 10 most clicked links; clicks_total counted as the campaign's" }),
  timeline: Schema.Array(Schema.Struct({
    at: Schema.String.annotations({ description: "Start of the bucket" }),
    delivered: Schema.Int,
    opens: Schema.Int.annotations({ description: "Opens in the bucket, counted as opens_total" }),
    clicks: Schema.Int.annotations({ description: "Clicks in the bucket, counted as clicks_total" })
  })).annotations({ description: "Hourly buckets over the first 72 hours from the campaign's start, then daily, up to the last with activity" }),
  detail_window_days: Schema.Int.annotations({ description: "90: how many days per-recipient open and click detail is kept; the counts are kept for ever" }),
  variants: Schema.Array(Schema.Struct({
    index: Schema.Int,
    subject: Schema.String,
    sent: Schema.Int.annotations({ description: "Deliveries of this variant accepted by the far side (the winner's include the rest's)" }),
    opens_unique: Schema.Int,
    clicks_unique: Schema.Int,
    open_rate: Schema.Number.annotations({ description: "opens_unique / sent, 4 decimals" }),
    click_rate: Schema.Number.annotations({ description: "clicks_unique / sent, 4 decimals" })
  })).annotations({ description: "An A/B campaign's variants (issue 30 item 12); empty for a campaign with one content" }),
  winner: Schema.NullOr(Schema.Int).annotations({
    description: "The index of the variant sent to the rest; null while the test waits (and for a campaign without variants)"
  })
}).annotations({ identifier: "CampaignAnalytics" })

const AnalyticsParams = Schema.Struct({
  format: Schema.optionalWith(Schema.Literal("json", "csv"), { default: () => "json" as const }).annotations({
    description: "csv: per-recipient detail (email,status,sent_at,first_opened_at,first_clicked_at); status is queued, deferred, "
      + "delivered, bounced or failed; first_* are empty once the 90-day detail is pruned"
  })
})

export const RatesReport = Schema.Struct({
  period: Schema.Literal("24h", "7d", "30d"),
  from: Schema.String,
  to: Schema.String,
  ...counts,
  rates: Rates
}).annotations({ identifier: "AnalyticsRatesReport" })

const RatesParams = Schema.Struct({
  period: Schema.optionalWith(Schema.Literal("24h", "7d", "30d"), { default: () => "30d" as const })
    .annotations({ description: "The window, ending now; the last 30 days when left out" })
})

export class AnalyticsGroup extends HttpApiGroup.make("analytics")
  .add(
    HttpApiEndpoint.get("campaign", "/v1/bulk/campaigns/:id/analytics").setPath(Schema.Struct({ id: IdText }))
      .setUrlParams(AnalyticsParams)
      .addSuccess(CampaignAnalytics)
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })))
      .addError(NotFound)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "A campaign's analytics; format=csv streams its per-recipient detail as text/csv")
      .annotate(OpenApi.Description, OPENS_AND_CLICKS)
  )
  .add(
    HttpApiEndpoint.get("rates", "/v1/bulk/analytics/rates").setUrlParams(RatesParams).addSuccess(RatesReport).addError(Unprocessable)
      .annotate(OpenApi.Summary, "Consolidated figures of every campaign of the key over the period, by event time")
      .annotate(OpenApi.Description, OPENS_AND_CLICKS)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Analytics")
{}
