/**
 * The operator's platform lists over HTTP, under /v1/admin (admin keys only; documented in the
 * platform document, left out of /docs.json): every suppression list — the platform's, which
 * applies to every account, and each account's own — and the block list of recipient domains.
 * The same service calls as `herald suppressions …` and `herald blocked-domains …`.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AdminAuthentication } from "../../http/admin-auth.ts"
import { Conflict, Forbidden, NotFound } from "../../http/errors.ts"
import { EmailAddress, isDomainName } from "../../lib/email.ts"
import { Reason } from "./Api.ts"
import { normalizeDomain } from "./BlockedDomains.ts"
import { boundedText, IdText, MAX_DOMAIN_LENGTH, MAX_EMAIL_LENGTH, QueryText, queryInt } from "../../http/bounds.ts"

/** REST conventions: limit 1..200 (default 50), offset ≥ 0. */
const Page = {
  limit: Schema.optionalWith(queryInt(1, 200), { default: () => 50 }),
  offset: Schema.optionalWith(queryInt(0), { default: () => 0 })
}

export const Scope = Schema.Literal("platform", "account").annotations({
  description: "platform: the list that applies to every account; account: the list of account_id"
})

/** Which list: `scope=account` needs `account_id`, `scope=platform` takes none. */
const ScopeParams = {
  scope: Scope,
  account_id: Schema.optional(IdText)
}

export const AdminSuppression = Schema.Struct({
  email: Schema.String,
  scope: Scope,
  account_id: Schema.NullOr(Schema.String),
  reason: Reason,
  source: Schema.NullOr(Schema.String),
  created_at: Schema.String
}).annotations({ identifier: "AdminSuppression" })

export const DomainName = Schema.String.pipe(
  Schema.maxLength(MAX_DOMAIN_LENGTH + 47),
  Schema.filter((s) => isDomainName(normalizeDomain(s)) || "must be a domain name such as example.com"),
  Schema.annotations({ identifier: "DomainName", description: "A domain name; stored in lower case without a trailing dot" })
)

export const BlockedDomain = Schema.Struct({
  domain: Schema.String,
  reason: Schema.String,
  created_at: Schema.String
}).annotations({ identifier: "BlockedDomain" })

const pageOf = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Struct({ total: Schema.Int, limit: Schema.Int, offset: Schema.Int, items: Schema.Array(item) })

export class AdminSuppressionsGroup extends HttpApiGroup.make("adminSuppressions")
  .add(
    HttpApiEndpoint.get("list", "/v1/admin/suppressions")
      .setUrlParams(Schema.Struct({ ...ScopeParams, email: Schema.optional(QueryText), ...Page }))
      .addSuccess(pageOf(AdminSuppression))
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "List one suppression list, newest first (email: substring filter)")
  )
  .add(
    HttpApiEndpoint.post("add", "/v1/admin/suppressions")
      .setPayload(Schema.Struct({
        email: EmailAddress,
        scope: Scope,
        account_id: Schema.optional(Schema.NullOr(IdText)),
        reason: Schema.optionalWith(Reason, { default: () => "manual" as const })
      }))
      .addSuccess(AdminSuppression, { status: 201 })
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Suppress an address on the platform list or an account's (reason defaults to manual)")
      .annotate(OpenApi.Description, "Sends to the address get item status `suppressed`. An address already on that list → 409 conflict.")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/admin/suppressions/:email")
      .setPath(Schema.Struct({ email: boundedText(MAX_EMAIL_LENGTH) }))
      .setUrlParams(Schema.Struct(ScopeParams))
      .addSuccess(Schema.Struct({ email: Schema.String, deleted: Schema.Literal(true) }))
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Take an address off the platform list or an account's")
  )
  .middleware(AdminAuthentication)
  .annotate(OpenApi.Title, "Admin: suppressions")
{}

export class AdminBlockedDomainsGroup extends HttpApiGroup.make("adminBlockedDomains")
  .add(
    HttpApiEndpoint.get("list", "/v1/admin/blocked-domains")
      .setUrlParams(Schema.Struct({ domain: Schema.optional(QueryText), ...Page }))
      .addSuccess(pageOf(BlockedDomain))
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "List the blocked recipient domains in name order (domain: substring filter)")
  )
  .add(
    HttpApiEndpoint.post("add", "/v1/admin/blocked-domains")
      .setPayload(Schema.Struct({
        domain: DomainName,
        reason: Schema.optional(boundedText(500, { trim: true, minLength: 1 }))
      }))
      .addSuccess(BlockedDomain, { status: 201 })
      .addError(Forbidden)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Block a recipient domain: sends to it get item status `rejected` (exact match)")
      .annotate(OpenApi.Description, "A domain already blocked → 409 conflict.")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/admin/blocked-domains/:domain")
      .setPath(Schema.Struct({ domain: boundedText(MAX_DOMAIN_LENGTH + 47) }))
      .addSuccess(Schema.Struct({ domain: Schema.String, deleted: Schema.Literal(true) }))
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Unblock a recipient domain")
  )
  .middleware(AdminAuthentication)
  .annotate(OpenApi.Title, "Admin: blocked recipient domains")
{}
