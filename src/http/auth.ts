/**
 * Bearer authentication for everything under /v1/. Missing or unknown tokens → 401 in the error
 * envelope; a revoked key stops working at once: lookups are cached for seconds, and every key
 * change empties the cache of every replica (src/platform/keys/key-cache.ts).
 * Authentication also records the key's `last_used_at` (at most once a minute, off the request's
 * path: see ApiKeys.authenticate). Who a token is comes through the KeyLookup port
 * (key-lookup.ts), which the keys area implements: the kit imports no area.
 *
 * A client address with HERALD_AUTH_FAILURES_PER_MIN failures in its current minute (counted by
 * every process and replica together, in PostgreSQL: auth-failures.ts) is throttled until that
 * minute ends: throttling stops guesses, not customers (behind a reverse proxy they all
 * share one address). A valid key is served: its token is found in the key cache (no database
 * cost), or looked up because it was valid here recently, or within the address's small allowance
 * of lookups (auth-failures.ts). Every other token gets 429 `rate_limit_exceeded` with Retry-After,
 * without a database lookup past the allowance. Other addresses are not affected.
 *
 * The console's session cookie (issue 28) authenticates too, as the session's active key, through
 * the SessionLookup port (session-lookup.ts): only when the request has no Authorization header — a
 * Bearer header, even a wrong one, wins. A cookie request other than GET or HEAD must pass the CSRF
 * check (csrf.ts), else 403 `forbidden`. A session lookup is one indexed read by the digest of
 * 32 random bytes, as cheap as /health's, so cookies are not counted as failed authentications.
 */
import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest, OpenApi } from "@effect/platform"
import { Clock, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { AuthFailures } from "./auth-failures.ts"
import { recordAuthFailure } from "../lib/metrics.ts"
import { csrfRefusal, originOf } from "./csrf.ts"
import { Forbidden, forbidden, RateLimited, RateLimitedError, Unauthorized, unauthorized } from "./errors.ts"
import { KeyLookup, type Principal } from "./key-lookup.ts"
import { setBodyOwner, setResponseHeaders } from "./request-context.ts"
import { SESSION_COOKIE, SessionLookup } from "./session-lookup.ts"

export class CurrentKey extends Context.Tag("herald/CurrentKey")<CurrentKey, Principal>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(Unauthorized, Forbidden, RateLimited),
  provides: CurrentKey,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "API key: `Authorization: Bearer <token>`. The console's session cookie `herald_session` is accepted " +
          "too (as the session's active key) when no Authorization header is sent; with it, a request other " +
          "than GET or HEAD needs `X-Herald-CSRF` (the session's csrf_token) and the base URL's `Origin`, else 403."
      )
    )
  }
}) {}

/** The address a request came from: the TCP peer (a forwarded-for header is the client's to write). */
const clientAddress = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => Option.getOrElse(request.remoteAddress, () => "unknown")
)

/** The principal the body budget and logs know a request by, once it is authenticated. */
const admit = (principal: Principal) =>
  Effect.gen(function*() {
    // The body, read after this, takes its room in the budget as this key's and account's.
    yield* setBodyOwner({ _tag: "Key", accountId: principal.accountId, keyId: principal.keyId })
    yield* Effect.annotateCurrentSpan("app", principal.keyId)
    return principal
  })

/** A request carrying the console's session cookie and no Authorization header: the session's active key. */
const bySession = (sessionId: string) =>
  Effect.gen(function*() {
    const sessions = yield* SessionLookup
    const { baseUrl } = yield* AppConfig
    const request = yield* HttpServerRequest.HttpServerRequest
    const found = yield* Effect.orDie(sessions.authenticate(sessionId))
    if (Option.isNone(found)) return yield* Effect.fail(unauthorized("The console session has ended or is unknown; sign in again"))
    const refusal = csrfRefusal(request, found.value.csrfToken, originOf(baseUrl))
    if (Option.isSome(refusal)) return yield* Effect.fail(refusal.value)
    if (Option.isNone(found.value.principal)) {
      return yield* Effect.fail(forbidden("The session's key was revoked; choose another (PATCH /console/session)"))
    }
    return yield* admit(found.value.principal.value)
  })

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const keys = yield* KeyLookup
    const context = yield* Effect.context<SessionLookup | AppConfig>()
    const failures = yield* AuthFailures
    const authFailuresPerMin = failures.limit

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
          const request = yield* HttpServerRequest.HttpServerRequest
          const sessionId = request.headers["authorization"] === undefined ? request.cookies[SESSION_COOKIE] : undefined
          if (sessionId !== undefined && sessionId !== "") return yield* Effect.provide(bySession(sessionId), context)
          const address = yield* clientAddress
          const now = yield* Clock.currentTimeMillis
          // A token the cache does not know is looked up only if the appliance's count for the
          // address allows it (or its allowance does); `denied` when it did not.
          let denied = false
          const mayLookUp = Effect.tap(failures.mayLookUp(address, now, true), (allowed) => void (denied = !allowed))
          // A database failure is a 500, never a 401: the key may be perfectly valid.
          const principal = yield* Effect.orDie(keys.authenticateSparingly(Redacted.value(token), mayLookUp))
          if (Option.isSome(principal)) return yield* admit(principal.value)
          recordAuthFailure("api")
          // Refused without a lookup: no statement to count it (a flood costs the database nothing more).
          const throttledUntil = failures.refusedUntil(address, now)
          if (denied && throttledUntil !== undefined) return yield* refuse(throttledUntil, now)
          const window = yield* Effect.orDie(failures.record(address, now))
          // Past the limit (counted by every process): 429, as for one process's limit+1-th failure.
          return yield* (window.count > authFailuresPerMin ? refuse(window.end, now) : Effect.fail(unauthorized()))
        })
    }
  })
)
