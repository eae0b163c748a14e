/**
 * Bearer authentication for everything under /v1/. Missing or unknown tokens → 401 in the error
 * envelope; a revoked key stops working at once: lookups are cached for seconds, and every key
 * change empties the cache of every replica (src/platform/keys/key-cache.ts).
 * Authentication also records the key's `last_used_at` (at most once a minute, off the request's
 * path: see ApiKeys.authenticate).
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { ApiKeys, type Principal } from "../platform/keys/ApiKeys.ts"
import { Unauthorized, unauthorized } from "./errors.ts"

export class CurrentKey extends Context.Tag("herald/CurrentKey")<CurrentKey, Principal>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Unauthorized,
  provides: CurrentKey,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
HttpApiSecurity.annotate(OpenApi.Description, "API key: `Authorization: Bearer <token>`")
    )
  }
}) {}

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return {
      bearer: (token) =>
        keys.authenticate(Redacted.value(token)).pipe(
          // A database failure is a 500, never a 401: the key may be perfectly valid.
          Effect.orDie,
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(unauthorized()),
            onSome: Effect.succeed
          })),
          Effect.tap((principal) => Effect.annotateCurrentSpan("app", principal.keyId))
        )
    }
  })
)
