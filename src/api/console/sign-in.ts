/**
 * `POST /console/session`: an account's email and password for a session cookie (issue 28).
 *
 * - A wrong email and a wrong password answer the same 401 in the same time: an unknown email is
 *   checked against a dummy hash of the same cost, and a suspended account's is checked before
 *   it is refused (its 403 comes only with the right password, which tells a guesser nothing).
 * - Failures are counted per client address and per email, by every process together
 *   (sign-in-throttle.ts); past either
 *   limit, 429 with Retry-After and no password check. Bearer clients behind the same address
 *   are not affected: their failures are counted elsewhere (src/http/auth-failures.ts).
 * - A password check is scrypt with 32 MiB: at most MAX_CONCURRENT_CHECKS run at once, and a
 *   sign-in that finds them all busy gets 429 at once (never a queue without bound).
 * - A browser's sign-in must come from the console's own origin: an `Origin` header other than
 *   HERALD_BASE_URL's is refused (403), so another site cannot sign a visitor in to an account of
 *   its choosing (login CSRF). A script sends no Origin and is not affected.
 * - The session acts as the account's first active key (one labelled "console" is made for an
 *   account without any); each sign-in makes a new session id.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { originOf } from "../../http/csrf.ts"
import { forbidden, RateLimitedError, unauthorized } from "../../http/errors.ts"
import { setResponseHeaders } from "../../http/request-context.ts"
import { SESSION_COOKIE } from "../../http/session-lookup.ts"
import { makeDummyPasswordHash, verifyPassword } from "../../platform/accounts/passwords.ts"
import { ConsoleSessions } from "../../platform/accounts/sessions.ts"
import { ApiKeys } from "../../platform/keys/ApiKeys.ts"
import { CONSOLE_HEADERS } from "./headers.ts"
import { makeSignInThrottle } from "./sign-in-throttle.ts"

/** Password checks at once: each scrypt holds 32 MiB and a core for about 50 ms (issue 28: two). */
export const MAX_CONCURRENT_CHECKS = 2
/** What a sign-in that found every check busy is told to wait: a check takes a tenth of that. */
const BUSY_RETRY_AFTER_S = 1
/** The label of the key made for an account that signs in without one. */
export const CONSOLE_KEY_LABEL = "console"

const tooMany = (retryAfterSeconds: number, message: string) =>
  Effect.zipRight(
    setResponseHeaders({ "Retry-After": String(retryAfterSeconds) }),
    Effect.fail(new RateLimitedError({ type: "rate_limit_error", code: "rate_limit_exceeded", message }))
  )

const wrongCredentials = () => unauthorized("The email or password is wrong")

/** The session cookie: HttpOnly, SameSite=Strict, for the whole origin, Secure when the base URL is https. */
export const sessionCookie = (response: HttpServerResponse.HttpServerResponse, value: string, baseUrl: string, maxAge?: number) =>
  HttpServerResponse.setCookie(response, SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: "strict",
    path: "/",
    secure: baseUrl.startsWith("https:"),
    ...(maxAge === undefined ? {} : { maxAge })
  }).pipe(Effect.orDie)

export const makeSignIn = Effect.gen(function*() {
  const sessions = yield* ConsoleSessions
  const keys = yield* ApiKeys
  const { baseUrl, consoleSigninFailuresPerAddress } = yield* AppConfig
  const throttle = makeSignInThrottle(consoleSigninFailuresPerAddress)
  const allowedOrigin = originOf(baseUrl)
  const checks = yield* Effect.makeSemaphore(MAX_CONCURRENT_CHECKS)
  const dummyHash = yield* makeDummyPasswordHash

  /** The account the email and password sign in to, or none; the same work whichever is wrong. */
  const check = (email: string, password: string) =>
    Effect.gen(function*() {
      const account = yield* sessions.credentialsOf(email)
      const hash = Option.match(account, { onNone: () => dummyHash, onSome: (a) => a.password_hash })
      const right = yield* verifyPassword(password, hash)
      return right ? account : Option.none()
    })

  /** The key the new session acts as: the account's first active one, or a new one. */
  const keyFor = (accountId: string) =>
    Effect.gen(function*() {
      const [first] = yield* keys.list(accountId)
      if (first !== undefined) return first.id
      return (yield* keys.install(accountId, CONSOLE_KEY_LABEL)).id
    })

  return (payload: { readonly email: string; readonly password: string }) =>
    Effect.gen(function*() {
      yield* setResponseHeaders({ ...CONSOLE_HEADERS, "cache-control": "no-store" })
      const request = yield* HttpServerRequest.HttpServerRequest
      const origin = request.headers["origin"]
      if (origin !== undefined && origin !== allowedOrigin) {
        return yield* Effect.fail(forbidden(`A sign-in from a browser must come from ${allowedOrigin} (its Origin header)`))
      }
      const address = Option.getOrElse(request.remoteAddress, () => "unknown")
      const now = yield* Clock.currentTimeMillis
      const until = yield* throttle.refusedUntil(address, payload.email, now)
      if (until !== undefined) {
        return yield* tooMany(
          Math.max(1, Math.ceil((until - now) / 1000)),
          `Too many failed sign-ins from this address or for this account; try again after ${new Date(until).toISOString()}`
        )
      }
      const checked = yield* checks.withPermitsIfAvailable(1)(check(payload.email, payload.password))
      if (Option.isNone(checked)) {
        return yield* tooMany(BUSY_RETRY_AFTER_S, "Too many sign-ins at once; try again in a second")
      }
      if (Option.isNone(checked.value)) {
        yield* throttle.failed(address, payload.email, yield* Clock.currentTimeMillis)
        return yield* Effect.fail(wrongCredentials())
      }
      const account = checked.value.value
      yield* throttle.succeeded(payload.email)
      if (account.status !== "active") return yield* Effect.fail(forbidden("The account is suspended", "account_suspended"))
      const session = yield* sessions.start(account.id, yield* keyFor(account.id))
      return yield* sessionCookie(HttpServerResponse.empty({ status: 204 }), session.sessionId, baseUrl)
    }).pipe(Effect.catchTag("SqlError", Effect.die))
})
