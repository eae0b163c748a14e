/** Operator endpoints under /v1/admin (admin keys only; not in the public /docs.json). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Conflict, Forbidden, NotFound } from "../../http/errors.ts"
import { EmailAddress } from "../../lib/email.ts"
import { CreatedKey, CreateKeyRequest } from "../keys/Api.ts"

export const CreateAccountRequest = Schema.Struct({
  name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)),
  email: EmailAddress,
  password: Schema.String.pipe(Schema.minLength(8, { message: () => "password must be at least 8 characters" })),
  package_id: Schema.optional(Schema.String)
}).annotations({ identifier: "CreateAccountRequest" })

export const Account = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  email: Schema.String,
  is_admin: Schema.Boolean,
  status: Schema.String,
  package_id: Schema.NullOr(Schema.String),
  created_at: Schema.String
}).annotations({ identifier: "Account" })

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
      .setPath(Schema.Struct({ id: Schema.String }))
      .setPayload(CreateKeyRequest)
      .addSuccess(CreatedKey, { status: 201 })
      .addError(Forbidden)
      .addError(NotFound)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Admin")
{}
