/** The account's suppression list: /v1/client/suppressions. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { NotFound } from "../../http/errors.ts"
import { EmailAddress } from "../../lib/email.ts"
import { boundedText, MAX_EMAIL_LENGTH, QueryText, queryInt } from "../../http/bounds.ts"

export const Reason = Schema.Literal("bounce", "complaint", "unsubscribe", "manual")

export const Suppression = Schema.Struct({
  email: Schema.String,
  reason: Reason,
  source: Schema.NullOr(Schema.String),
  created_at: Schema.String
}).annotations({ identifier: "Suppression" })

export const Page = {
  limit: Schema.optionalWith(queryInt(1, 1000), { default: () => 100 }),
  offset: Schema.optionalWith(queryInt(0), { default: () => 0 })
}

export class SuppressionsGroup extends HttpApiGroup.make("suppressions")
  .add(
    HttpApiEndpoint.get("list", "/v1/client/suppressions")
      .setUrlParams(Schema.Struct({ email: Schema.optional(QueryText), reason: Schema.optional(Reason), ...Page }))
      .addSuccess(Schema.Struct({
        total: Schema.Int,
        limit: Schema.Int,
        offset: Schema.Int,
        items: Schema.Array(Suppression)
      }))
      .annotate(OpenApi.Summary, "List the account's suppressions (email: substring filter; reason: exact)")
  )
  .add(
    HttpApiEndpoint.post("add", "/v1/client/suppressions")
      .setPayload(Schema.Struct({
        email: EmailAddress,
        reason: Schema.optionalWith(Reason, { default: () => "manual" as const })
      }))
      .addSuccess(Suppression, { status: 201 })
      .annotate(OpenApi.Summary, "Suppress an address for this account (reason defaults to manual)")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/client/suppressions/:email")
      .setPath(Schema.Struct({ email: boundedText(MAX_EMAIL_LENGTH) }))
      .addSuccess(Schema.Struct({ email: Schema.String, deleted: Schema.Literal(true) }))
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Take an address off the account's suppression list")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Suppressions")
{}
