/**
 * Bearer authentication for everything under /v1/. Missing or unknown tokens → 401 in the error
 * envelope; a revoked key stops working at once: lookups are cached for seconds, and every key
 * change empties the cache of every replica (src/platform/keys/key-cache.ts).
 * Authentication also records the key's `last_used_at` (at most once a minute, off the request's
 * path: see ApiKeys.authenticate). Who a token is comes through the KeyLookup port
 * (key-lookup.ts), which the keys area implements: the kit imports no area.
 *
 * A client address with HERALD_AUTH_FAILURES_PER_MIN failures in its current minute is throttled
 * until that minute ends: throttling stops guesses, not customers (behind a reverse proxy they all
 * share one address). A valid key is served: its token is found in the key cache (no database
 * cost), or looked up because it was valid here recently, or within the address's small allowance
 * of lookups (auth-failures.ts). Every other token gets 429 `rate_limit_exceeded` with Retry-After,
 * without a database lookup past the allowance. Other addresses are not affected.
 */
import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest, OpenApi } from "@effect/platform"
import { Clock, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { makeAuthFailures } from "./auth-failures.ts"
import { RateLimited, RateLimitedError, Unauthorized, unauthorized } from "./errors.ts"
import { KeyLookup, type Principal } from "./key-lookup.ts"
import { setBodyOwner, setResponseHeaders } from "./request-context.ts"

export class CurrentKey extends Context.Tag("herald/CurrentKey")<CurrentKey, Principal>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(Unauthorized, RateLimited),
  provides: CurrentKey,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "API key: `Authorization: Bearer <token>`")
    )
  }
}) {}

/** The address a request came from: the TCP peer (a forwarded-for header is the client's to write). */
const clientAddress = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => Option.getOrElse(request.remoteAddress, () => "unknown")
)

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const keys = yield* KeyLookup
    const { authFailuresPerMin } = yield* AppConfig
    const failures = makeAuthFailures(authFailuresPerMin)

    const refuse = (until: number, now: number) =>
      Effect.zipRight(
        setResponseHeaders({ "Retry-After": String(Math.max(1, Math.ceil((until - now) / 1000))) }),
        Effect.fail(
          new RateLimitedError({
            type: "rate_limit_error",
            code: "rate_limit_exceeded",
            message: `Too many failed authentications from this address (HERALD_AUTH_FAILURES_PER_MIN is ` +
              `${authFailuresPerMin} a minute); try again after ${new Date(until).toISOString()}`
          })
        )
      )

    return {
      bearer: (token) =>
        Effect.gen(function*() {
          const address = yield* clientAddress
          const now = yield* Clock.currentTimeMillis
          const until = failures.refusedUntil(address, now)
          const identify = until === undefined
            ? keys.authenticate(Redacted.value(token))
            : keys.authenticateSparingly(Redacted.value(token), () => failures.takeLookup(address, now))
          // A database failure is a 500, never a 401: the key may be perfectly valid.
          const principal = yield* Effect.orDie(identify)
          if (Option.isNone(principal)) {
            failures.record(address, now)
            return yield* (until === undefined ? Effect.fail(unauthorized()) : refuse(until, now))
          }
          // The body, read after this, takes its room in the budget as this key's and account's.
          yield* setBodyOwner({ _tag: "Key", accountId: principal.value.accountId, keyId: principal.value.keyId })
          yield* Effect.annotateCurrentSpan("app", principal.value.keyId)
          return principal.value
        })
    }
  })
)
