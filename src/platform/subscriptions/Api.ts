/** POST /v1/client/subscriptions/change-plan and cancel-pending-change. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Forbidden, NotFound } from "../../http/errors.ts"
import { UsageRecord } from "../usage/Api.ts"
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

export const CancelPendingChangeRequest = Schema.Struct({
  password: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_PASSWORD_LENGTH))
}).annotations({ identifier: "CancelPendingChangeRequest" })

export class SubscriptionsGroup extends HttpApiGroup.make("subscriptions")
  .add(
    HttpApiEndpoint.post("changePlan", "/v1/client/subscriptions/change-plan")
      .setPayload(ChangePlanRequest)
      .addSuccess(ChangePlanResponse)
      .addError(Forbidden)
      .annotate(
        OpenApi.Description,
        "Upgrades apply at once with a prorated charge; downgrades wait for the next reset. Errors: " +
          "400 `unknown_package`, `same_package`, `package_not_selectable` (param package_id); 403 `incorrect_password`. " +
          "A downgrade replaces a pending one; GET /v1/client/usage shows the pending change."
      )
      .annotate(OpenApi.Summary, "Change the account's plan (upgrade now, downgrade at the next reset)")
  )
  .add(
    HttpApiEndpoint.post("cancelPendingChange", "/v1/client/subscriptions/cancel-pending-change")
      .setPayload(CancelPendingChangeRequest)
      .addSuccess(UsageRecord)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Withdraw the pending downgrade")
      .annotate(
        OpenApi.Description,
        "The account stays on its current package after the next reset. Any key of the account; the password as " +
          "change-plan asks it. Answers the usage record. Errors: 403 `incorrect_password`; 404 `not_found` when no change is pending."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Subscriptions")
{}
