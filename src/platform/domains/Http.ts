import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { DomainsGroup } from "./Api.ts"
import { conflict, notFound, UnavailableError, validationFailed } from "../../http/errors.ts"
import { setResponseHeaders } from "../../http/request-context.ts"
import { Domains } from "./Domains.ts"

/** RFC 9745 Deprecation (the date it was deprecated) and RFC 8594 Sunset (when it goes). */
export const LEGACY_VERIFY_DEPRECATED = new Date("2026-11-01T00:00:00Z")
export const LEGACY_VERIFY_SUNSET = new Date("2027-11-01T00:00:00Z")

const lookupErrors = {
  DomainNotFound: (e: { domain: string }) => Effect.fail(notFound(`Domain ${e.domain} is not registered for this account`)),
  SqlError: Effect.die
}

const verifyErrors = {
  ...lookupErrors,
  VerificationRecordMissing: (e: { domain: string; expected: string }) =>
    Effect.fail(
      validationFailed(`No TXT record "${e.expected}" found at ${e.domain}; publish it and try again`, "domain")
    ),
  VerificationDnsError: (e: { domain: string; code: string }) =>
    Effect.fail(new UnavailableError({
      type: "api_error",
      code: "dns_lookup_failed",
      message: `The DNS lookup of ${e.domain} failed (${e.code}); try again later`
    }))
}

export const DomainsHttpLive = HttpApiBuilder.group(groupApi(DomainsGroup), "domains", (handlers) =>
  Effect.gen(function*() {
    const domains = yield* Domains
    const config = yield* AppConfig
    const verify = (domain: string) =>
      Effect.flatMap(CurrentKey, (me) => domains.verify(me.accountId, domain)).pipe(Effect.catchTags(verifyErrors))
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentKey, (me) => domains.create(me.accountId, payload.domain)).pipe(
          Effect.catchTags({
            DomainExists: (e) => Effect.fail(conflict(`Domain ${e.domain} is already registered`, "domain_exists")),
            SqlError: Effect.die
          })
        ))
      .handle("list", () =>
        Effect.flatMap(CurrentKey, (me) => domains.list(me.accountId)).pipe(
          Effect.map((items) => ({ items })),
          Effect.orDie
        ))
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => domains.get(me.accountId, path.domain)).pipe(Effect.catchTags(lookupErrors)))
      .handle("remove", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => domains.remove(me.accountId, path.domain)).pipe(
          Effect.catchTags(lookupErrors)
        ))
      .handle("verify", ({ path }) => verify(path.domain))
      .handle("verifyLegacy", ({ path }) =>
        setResponseHeaders({
          Deprecation: `@${Math.floor(LEGACY_VERIFY_DEPRECATED.getTime() / 1000)}`,
          Sunset: LEGACY_VERIFY_SUNSET.toUTCString(),
          Link: `<${config.baseUrl}/v1/client/domains/${encodeURIComponent(path.domain)}/verify>; rel="successor-version"`
        }).pipe(Effect.zipRight(verify(path.domain))))
  }))
