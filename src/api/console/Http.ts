/**
 * The console's session routes (Api.ts): the session middleware (the cookie, and the CSRF check
 * for PATCH and DELETE, the same as /v1's: src/http/csrf.ts) and the four handlers.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { csrfRefusal, originOf } from "../../http/csrf.ts"
import { unauthorized, validationFailed } from "../../http/errors.ts"
import { groupApi } from "../../http/group-api.ts"
import { setResponseHeaders } from "../../http/request-context.ts"
import { ConsoleSessions } from "../../platform/accounts/sessions.ts"
import { ConsoleGroup, ConsoleSessionAuth, CurrentSession } from "./Api.ts"
import { CONSOLE_HEADERS } from "./headers.ts"
import { makeSignIn, sessionCookie } from "./sign-in.ts"

/** Every answer of these routes carries a session's data or cookie: the console's headers, never cached. */
const consoleAnswerHeaders = setResponseHeaders({ ...CONSOLE_HEADERS, "cache-control": "no-store" })

export const ConsoleSessionAuthLive = Layer.effect(
  ConsoleSessionAuth,
  Effect.gen(function*() {
    const sessions = yield* ConsoleSessions
    const { baseUrl } = yield* AppConfig
    const allowedOrigin = originOf(baseUrl)
    return {
      cookie: (sessionId) =>
        Effect.gen(function*() {
          yield* consoleAnswerHeaders
          const id = Redacted.value(sessionId)
          const found = id === "" ? Option.none() : yield* Effect.orDie(sessions.find(id))
          if (Option.isNone(found)) return yield* Effect.fail(unauthorized("Not signed in, or the session has ended; sign in again"))
          const refusal = csrfRefusal(yield* HttpServerRequest.HttpServerRequest, found.value.csrfToken, allowedOrigin)
          if (Option.isSome(refusal)) return yield* Effect.fail(refusal.value)
          return found.value
        })
    }
  })
)

export const ConsoleHttpLive = HttpApiBuilder.group(groupApi(ConsoleGroup), "console", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* ConsoleSessions
    const { baseUrl } = yield* AppConfig
    const signIn = yield* makeSignIn
    return handlers
      .handle("signIn", ({ payload }) => signIn(payload))
      .handle("session", () => Effect.flatMap(CurrentSession, sessions.view).pipe(Effect.orDie))
      .handle("switchKey", ({ payload }) =>
        Effect.flatMap(CurrentSession, (session) => sessions.switchKey(session, payload.active_key_id)).pipe(
          Effect.flatMap(sessions.view),
          Effect.catchTags({
            SessionKeyNotAllowed: () =>
              Effect.fail(validationFailed("active_key_id must be one of the account's active keys", "active_key_id")),
            SqlError: Effect.die
          })
        ))
      .handle("signOut", () =>
        Effect.flatMap(CurrentSession, sessions.end).pipe(
          Effect.orDie,
          // The browser forgets the cookie too; the row is what ends the session everywhere.
          Effect.zipRight(sessionCookie(HttpServerResponse.empty({ status: 204 }), "", baseUrl, 0))
        ))
  })).pipe(Layer.provide(ConsoleSessionAuthLive))
