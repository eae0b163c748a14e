/**
 * Authentication for /v1/admin: the bearer key must belong to an admin account. A middleware, not
 * a check inside each handler, so that a non-admin key is refused (403) before its request body is
 * decoded: an invalid body must not earn a 400 from an endpoint the caller may not use at all.
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Effect, Layer, Schema } from "effect"
import { Authentication, CurrentKey } from "./auth.ts"
import { Forbidden, forbidden, RateLimited, Unauthorized } from "./errors.ts"

export class AdminAuthentication extends HttpApiMiddleware.Tag<AdminAuthentication>()("AdminAuthentication", {
  failure: Schema.Union(Unauthorized, Forbidden, RateLimited),
  provides: CurrentKey,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "An admin account's API key: `Authorization: Bearer <token>`")
    )
  }
}) {}

export const AdminAuthenticationLive = Layer.effect(
  AdminAuthentication,
  Effect.map(Authentication, (authentication) => ({
    bearer: (token) =>
      authentication.bearer(token).pipe(
        Effect.filterOrFail((principal) => principal.isAdmin, () => forbidden("This endpoint is for administrators"))
      )
  }))
)
