/** GET /v1/client/usage: the usage record of the spec. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"

export const UsageRecord = Schema.Struct({
  subscriptions: Schema.Array(Schema.Struct({
    package_id: Schema.String,
    package_name: Schema.String,
    monthly_quota: Schema.Int,
    rate_per_min: Schema.Int,
    billing_period: Schema.String,
    started_at: Schema.String
  })),
  keys: Schema.Array(Schema.Struct({
    id: Schema.String,
    label: Schema.String,
    sent_this_period: Schema.Int.annotations({ description: "This key's own recipients this period" }),
    monthly_quota: Schema.Int.annotations({ description: "The account's quota, shared by its keys" }),
    quota_remaining: Schema.Int.annotations({ description: "What is left of the account's quota" })
  })),
  next_reset: Schema.String.annotations({ description: "When the monthly counters reset" }),
  pending_change: Schema.NullOr(Schema.Struct({
    package_id: Schema.String,
    effective_at: Schema.String.annotations({ description: "The next reset, which applies it" })
  })).annotations({
    description: "A downgrade waiting for the next reset (POST /v1/client/subscriptions/cancel-pending-change withdraws it), or null"
  }),
  overage: Schema.Struct({
    emails: Schema.Int.annotations({ description: "Emails sent past the quota this period (plans with overage)" }),
    amount_usd_cents: Schema.Int.annotations({ description: "Their price: emails × the plan's price per 1,000 / 1,000, rounded to the cent" })
  })
}).annotations({ identifier: "UsageRecord" })

export class UsageGroup extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("get", "/v1/client/usage").addSuccess(UsageRecord)
      .annotate(OpenApi.Summary, "The account's usage this period: plan, per-key sends and quota left, next reset, pending plan change, overage")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Usage")
{}
