/** POST /v1/client/subscriptions/change-plan. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Forbidden } from "../../http/errors.ts"
import { IdText, MAX_PASSWORD_LENGTH } from "../../http/bounds.ts"

export const ChangePlanRequest = Schema.Struct({
  package_id: IdText.pipe(Schema.minLength(1)),
  password: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_PASSWORD_LENGTH))
}).annotations({ identifier: "ChangePlanRequest" })

export const ChangePlanResponse = Schema.Struct({
  sub_id: Schema.String,
  type: Schema.Literal("upgrade", "downgrade"),
  proration: Schema.optional(Schema.Struct({
    amount_usd_cents: Schema.Int,
    days_charged: Schema.Int,
    cycle_days: Schema.Int
  })).annotations({ description: "Upgrades: the charge for the rest of the cycle at the new price" }),
  effective_at: Schema.optional(Schema.String).annotations({
    description: "Downgrades: when the new package takes effect (the next monthly reset)"
  })
}).annotations({ identifier: "ChangePlanResponse" })

export class SubscriptionsGroup extends HttpApiGroup.make("subscriptions")
  .add(
    HttpApiEndpoint.post("changePlan", "/v1/client/subscriptions/change-plan")
      .setPayload(ChangePlanRequest)
      .addSuccess(ChangePlanResponse)
      .addError(Forbidden)
      .annotate(
        OpenApi.Description,
        "Upgrades apply at once with a prorated charge; downgrades wait for the next reset. Errors: " +
          "400 unknown_package, same_package, package_not_selectable (param package_id); 403 incorrect_password."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Subscriptions")
{}
