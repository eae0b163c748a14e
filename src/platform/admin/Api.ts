/** Operator endpoints under /v1/admin (admin keys only; not in the public /docs.json). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AdminAuthentication } from "../../http/admin-auth.ts"
import { Conflict, Forbidden, NotFound } from "../../http/errors.ts"
import { EmailAddress } from "../../lib/email.ts"
import { Domain, DomainPath } from "../domains/Api.ts"
import { CreatedKey, CreateKeyRequest } from "../keys/Api.ts"
import { boundedText, IdText, MAX_NAME_LENGTH, MAX_PASSWORD_LENGTH, queryInt } from "../../http/bounds.ts"

export const CreateAccountRequest = Schema.Struct({
  name: boundedText(MAX_NAME_LENGTH, { trim: true, minLength: 1 }),
  email: EmailAddress,
  password: Schema.String.pipe(
    Schema.minLength(8, { message: () => "password must be at least 8 characters" }),
    Schema.maxLength(MAX_PASSWORD_LENGTH)
  ),
  package_id: Schema.optional(IdText)
}).annotations({ identifier: "CreateAccountRequest" })

export const Account = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  email: Schema.String,
  is_admin: Schema.Boolean,
  status: Schema.String,
  package_id: Schema.NullOr(Schema.String),
  sending_paused_reason: Schema.NullOr(Schema.String),
  rate_per_min_override: Schema.NullOr(Schema.Int),
  monthly_quota_override: Schema.NullOr(Schema.Int),
  created_at: Schema.String
}).annotations({ identifier: "Account" })

const AccountId = Schema.Struct({ id: IdText })

const accountAction = <const Name extends string>(name: Name, path: `/${string}`, summary: string) =>
  HttpApiEndpoint.post(name, path).setPath(AccountId).addSuccess(Account).addError(Forbidden).addError(NotFound)
    .annotate(OpenApi.Summary, summary)

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createAccount", "/v1/admin/accounts")
      .setPayload(CreateAccountRequest)
      .addSuccess(Account, { status: 201 })
      .addError(Forbidden)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Create an account; without package_id it has no plan (30 sends/min, 1,000/month)")
  )
  .add(
    HttpApiEndpoint.post("createAccountKey", "/v1/admin/accounts/:id/keys")
      .setPath(Schema.Struct({ id: IdText }))
      .setPayload(CreateKeyRequest)
      .addSuccess(CreatedKey, { status: 201 })
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Create a key for an account; its token is shown only in this response")
  )
  .add(
    HttpApiEndpoint.get("listAccounts", "/v1/admin/accounts")
      .setUrlParams(Schema.Struct({
        limit: Schema.optionalWith(queryInt(1, 200), { default: () => 50 }),
        offset: Schema.optionalWith(queryInt(0), { default: () => 0 })
      }))
      .addSuccess(Schema.Struct({ total: Schema.Int, limit: Schema.Int, offset: Schema.Int, items: Schema.Array(Account) }))
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "Accounts, oldest first, a page at a time (limit ≤ 200, default 50; offset); total counts them all")
  )
  .add(
    HttpApiEndpoint.get("getAccount", "/v1/admin/accounts/:id").setPath(AccountId).addSuccess(Account).addError(Forbidden).addError(NotFound)
      .annotate(OpenApi.Summary, "One account")
  )
  .add(accountAction("suspend", "/v1/admin/accounts/:id/suspend", "Suspend: sends refused, scheduled sends discarded"))
  .add(accountAction("unsuspend", "/v1/admin/accounts/:id/unsuspend", "Lift a suspension"))
  .add(accountAction("unpause", "/v1/admin/accounts/:id/unpause", "Lift a reputation pause of sending"))
  .add(
    HttpApiEndpoint.put("assignPlan", "/v1/admin/accounts/:id/plan")
      .setPath(AccountId)
      .setPayload(Schema.Struct({ package_id: IdText }))
      .addSuccess(Account)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Put the account on a plan now (no proration, not charged; a new cycle starts; recorded as a plan change)")
  )
  .add(
    HttpApiEndpoint.patch("setLimits", "/v1/admin/accounts/:id/limits")
      .setPath(AccountId)
      .setPayload(Schema.Struct({
        rate_per_min: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.positive()))),
        monthly_quota: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.nonNegative())))
      }))
      .addSuccess(Account)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(
        OpenApi.Summary,
        "Per-account overrides of the plan's rate_per_min and monthly_quota: a field left out is kept, null clears it"
      )
  )
  .add(
    HttpApiEndpoint.post("trustDomain", "/v1/admin/accounts/:id/domains/:domain/trust")
      .setPath(Schema.Struct({ id: IdText, domain: DomainPath.fields.domain }))
      .addSuccess(Domain)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(
        OpenApi.Summary,
        "Mark an account's registered domain verified without DNS (verified_by: operator; not re-checked; logged as a warning)"
      )
  )
  .middleware(AdminAuthentication)
  .annotate(OpenApi.Title, "Admin")
{}
