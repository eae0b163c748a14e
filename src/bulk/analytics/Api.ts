/**
 * Campaign analytics: one campaign's figures (or its per-recipient detail as CSV) and the rates of
 * every campaign of the key over a recent period. Rates are fractions with 4 decimals, 0 when their
 * denominator is 0.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { NotFound, Unprocessable } from "../../http/errors.ts"

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
  opens_total: Schema.Int.annotations({ description: "Every load of the pixel, prefetching proxies included" }),
  clicks_unique: counts.clicks_unique,
  clicks_total: Schema.Int,
  bounces: counts.bounces,
  complaints: counts.complaints,
  unsubs: counts.unsubs,
  rates: Rates,
  top_links: Schema.Array(Schema.Struct({ url: Schema.String, clicks_unique: Schema.Int, clicks_total: Schema.Int }))
    .annotations({ description: "The 10 most clicked links" }),
  timeline: Schema.Array(Schema.Struct({
    at: Schema.String.annotations({ description: "Start of the bucket" }),
    delivered: Schema.Int,
    opens: Schema.Int.annotations({ description: "Every open in the bucket" }),
    clicks: Schema.Int.annotations({ description: "Every click in the bucket" })
  })).annotations({ description: "Hourly buckets over the first 72 hours from the campaign's start, then daily, up to the last with activity" }),
  detail_window_days: Schema.Int.annotations({ description: "90: how many days per-recipient open and click detail is kept; the counts are kept for ever" })
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
  period: Schema.Literal("24h", "7d", "30d").annotations({ description: "The window, ending now" })
})

export class AnalyticsGroup extends HttpApiGroup.make("analytics")
  .add(
    HttpApiEndpoint.get("campaign", "/v1/bulk/campaigns/:id/analytics").setPath(Schema.Struct({ id: Schema.String }))
      .setUrlParams(AnalyticsParams)
      .addSuccess(CampaignAnalytics)
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })))
      .addError(NotFound)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "A campaign's analytics; format=csv streams its per-recipient detail as text/csv")
  )
  .add(
    HttpApiEndpoint.get("rates", "/v1/bulk/analytics/rates").setUrlParams(RatesParams).addSuccess(RatesReport).addError(Unprocessable)
      .annotate(OpenApi.Summary, "Consolidated figures of every campaign of the key over the period, by event time")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Analytics")
{}
