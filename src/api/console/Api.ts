/**
 * The console's session routes (issue 28), the only backend the console has beyond /v1: sign-in,
 * the session's account and keys, the key switch and sign-out. Part of the served API (errors in
 * the envelope, bodies bounded by their schemas) but of no public document: they are the
 * console's, not a client's (scripts use keys). docs/console.md "Console sign-in".
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { boundedText, IdText, MAX_EMAIL_LENGTH, MAX_PASSWORD_LENGTH } from "../../http/bounds.ts"
import { Forbidden, RateLimited, Unauthorized } from "../../http/errors.ts"
import { SESSION_COOKIE } from "../../http/session-lookup.ts"
import type { ConsoleSession } from "../../platform/accounts/sessions.ts"

export class CurrentSession extends Context.Tag("herald/CurrentConsoleSession")<CurrentSession, ConsoleSession>() {}

/** The session cookie, for the routes that act on the session itself (not as its key: that is /v1's). */
export class ConsoleSessionAuth extends HttpApiMiddleware.Tag<ConsoleSessionAuth>()("ConsoleSessionAuth", {
  failure: Schema.Union(Unauthorized, Forbidden),
  provides: CurrentSession,
  security: {
    cookie: HttpApiSecurity.apiKey({ in: "cookie", key: SESSION_COOKIE }).pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "The console's session cookie, set by POST /console/session")
    )
  }
}) {}

// A sign-in takes any bounded string: a malformed email or a short password is simply wrong (401),
// never a 400 that would say more about it than a wrong one.
export const SignInRequest = Schema.Struct({
  email: boundedText(MAX_EMAIL_LENGTH),
  password: boundedText(MAX_PASSWORD_LENGTH)
}).annotations({ identifier: "ConsoleSignIn" })

export const SwitchKeyRequest = Schema.Struct({ active_key_id: IdText }).annotations({ identifier: "ConsoleSwitchKey" })

export const SessionResponse = Schema.Struct({
  account: Schema.Struct({ id: Schema.String, name: Schema.String, email: Schema.String, is_admin: Schema.Boolean }),
  keys: Schema.Array(Schema.Struct({ id: Schema.String, label: Schema.String })),
  active_key_id: Schema.String,
  csrf_token: Schema.String.annotations({ description: "Echo it in X-Herald-CSRF on every request other than GET or HEAD" })
}).annotations({ identifier: "ConsoleSession" })

export class ConsoleGroup extends HttpApiGroup.make("console")
  .add(
    HttpApiEndpoint.post("signIn", "/console/session")
      .setPayload(SignInRequest)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Unauthorized)
      .addError(Forbidden)
      .addError(RateLimited)
      .annotate(OpenApi.Summary, "Sign in: 204 and the session cookie; 401 for a wrong email or password alike; 429 when throttled")
  )
  .add(
    HttpApiEndpoint.get("session", "/console/session")
      .addSuccess(SessionResponse)
      .middleware(ConsoleSessionAuth)
      .annotate(OpenApi.Summary, "The signed-in account, its active keys, the session's active key and CSRF token")
  )
  .add(
    HttpApiEndpoint.patch("switchKey", "/console/session")
      .setPayload(SwitchKeyRequest)
      .addSuccess(SessionResponse)
      .middleware(ConsoleSessionAuth)
      .annotate(OpenApi.Summary, "Act as another of the account's active keys (400 for any other key)")
  )
  .add(
    HttpApiEndpoint.del("signOut", "/console/session")
      .addSuccess(HttpApiSchema.NoContent)
      .middleware(ConsoleSessionAuth)
      .annotate(OpenApi.Summary, "Sign out: the session ends on every replica")
  )
  .annotate(OpenApi.Title, "Console")
{}
