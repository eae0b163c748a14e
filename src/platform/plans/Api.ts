/** GET /v1/client/plans: the plans a client can choose between (and the legacy one, marked). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"

export const PlanView = Schema.Struct({
  id: Schema.String.annotations({ description: "The package_id" }),
  name: Schema.String,
  billing_model: Schema.String,
  price_usd_cents: Schema.Int,
  monthly_quota: Schema.Int,
  rate_per_min: Schema.Int,
  overage: Schema.Struct({
    offered: Schema.Boolean,
    price_usd_cents_per_1000: Schema.NullOr(Schema.Int),
    price_usd_cents_per_email: Schema.NullOr(Schema.Number).annotations({
      description: "The same price per email (a fraction of a cent); the charge is rounded once per period"
    })
  }),
  features: Schema.Array(Schema.String),
  selectable: Schema.Boolean
}).annotations({ identifier: "Plan" })

export class PlansGroup extends HttpApiGroup.make("plans")
  .add(
    HttpApiEndpoint.get("list", "/v1/client/plans")
      .addSuccess(Schema.Struct({ items: Schema.Array(PlanView) }))
      .annotate(OpenApi.Summary, "Plans (packages) with their prices, quotas, rates, overage and features")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Plans")
{}
