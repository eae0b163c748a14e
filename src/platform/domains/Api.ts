/** Sending domains: /v1/client/domains (and the deprecated /v1/domains/{domain}/verify alias). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Conflict, NotFound, Unavailable } from "../../http/errors.ts"
import { isDomainName } from "../../lib/email.ts"
import { boundedText, MAX_DOMAIN_LENGTH } from "../../http/bounds.ts"

/** Room for spaces around a name and its trailing dot, which are dropped. */
const DOMAIN_PADDING = 47

export const DomainName = Schema.compose(Schema.String.pipe(Schema.maxLength(MAX_DOMAIN_LENGTH + DOMAIN_PADDING)), Schema.Trim).pipe(
  Schema.filter((s) => isDomainName(s) || "must be a domain name such as example.com"),
  Schema.annotations({ identifier: "DomainName", examples: ["example.com"] })
)

export const DomainPath = Schema.Struct({ domain: boundedText(MAX_DOMAIN_LENGTH + DOMAIN_PADDING) })

const dnsRecordFields = {
  purpose: Schema.Literal("verification", "dkim", "spf", "dmarc", "return_path").annotations({
    description: "verification: TXT proving the account owns the domain; dkim: the signing key; return_path: MX of " +
      "the envelope-sender subdomain; spf: that subdomain's SPF (none at the apex); dmarc: a suggested policy"
  }),
  type: Schema.Literal("TXT", "MX"),
  name: Schema.String,
  value: Schema.String,
  optional: Schema.Boolean.annotations({ description: "A suggestion: the domain is ready without it (the DMARC record)" })
}

export const DnsRecord = Schema.Struct(dnsRecordFields).annotations({ identifier: "DnsRecord" })
export type DnsRecord = typeof DnsRecord.Type

export const CheckedDnsRecord = Schema.Struct({
  ...dnsRecordFields,
  status: Schema.Literal("verified", "missing", "mismatch").annotations({
    description: "mismatch: a record of that kind is published with another value (see found)"
  }),
  found: Schema.Array(Schema.String).annotations({
    description: "The records of that kind found at the name (MX as `preference exchange`); empty when missing"
  })
}).annotations({ identifier: "CheckedDnsRecord" })

export const VerifiedBy = Schema.NullOr(Schema.Literal("dns", "operator")).annotations({
  description: "dns: the verification TXT record was found; operator: an operator trusted the domain without DNS " +
    "(not re-checked); null while unverified"
})

export const Domain = Schema.Struct({
  domain: Schema.String,
  verified: Schema.Boolean,
  verified_at: Schema.NullOr(Schema.String),
  verified_by: VerifiedBy,
  return_path_verified: Schema.Boolean.annotations({
    description: "The return-path MX is published: envelope senders use it, so SPF aligns for DMARC"
  }),
  records: Schema.Array(DnsRecord),
  created_at: Schema.String
}).annotations({ identifier: "Domain" })

export const VerifyResult = Schema.Struct({
  domain: Schema.String,
  verified: Schema.Boolean.annotations({ description: "The verification TXT record was found" }),
  verified_at: Schema.NullOr(Schema.String),
  records: Schema.Array(CheckedDnsRecord),
  ready: Schema.Boolean.annotations({ description: "The verification, DKIM and return-path MX records are all verified" })
}).annotations({ identifier: "DomainVerification" })

const verify = <const Name extends string>(name: Name, path: `/${string}`) =>
  HttpApiEndpoint.post(name, path)
    .setPath(DomainPath)
    .addSuccess(VerifyResult)
    .addError(NotFound)
    .addError(Unavailable)

export class DomainsGroup extends HttpApiGroup.make("domains")
  .add(
    HttpApiEndpoint.post("create", "/v1/client/domains")
      .setPayload(Schema.Struct({ domain: DomainName }))
      .addSuccess(Domain, { status: 201 })
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Register a sending domain; returns the DNS records to publish")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/client/domains").addSuccess(Schema.Struct({ items: Schema.Array(Domain) }))
      .annotate(OpenApi.Summary, "List the account's sending domains with their DNS records")
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/client/domains/:domain").setPath(DomainPath).addSuccess(Domain).addError(NotFound)
      .annotate(OpenApi.Summary, "A sending domain with its DNS records")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/client/domains/:domain")
      .setPath(DomainPath)
      .addSuccess(Schema.Struct({ domain: Schema.String, deleted: Schema.Literal(true) }))
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Remove a sending domain: mail from it is refused afterwards")
  )
  .add(
    verify("verify", "/v1/client/domains/:domain/verify").annotate(
      OpenApi.Summary,
      "Look up the verification TXT record (on success the domain is verified and may send) and report every record's state"
    )
  )
  .add(
    verify("verifyLegacy", "/v1/domains/:domain/verify")
      .annotate(OpenApi.Summary, "Deprecated alias of POST /v1/client/domains/{domain}/verify")
      .annotate(OpenApi.Deprecated, true)
      .annotate(
        OpenApi.Description,
        "Deprecated alias of POST /v1/client/domains/{domain}/verify, kept until 2027-11-01 (see the Sunset header)."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Domains")
{}
