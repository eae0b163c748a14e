/**
 * The console's CSRF defence (issue 28), shared by /v1 (auth.ts) and /console/session: a request
 * authenticated by the session cookie, other than GET or HEAD, must carry `X-Herald-CSRF` equal to
 * the session's token AND an `Origin` equal to HERALD_BASE_URL's origin. SameSite=Strict already
 * keeps the cookie off other sites' requests; these two hold even where it does not (an old
 * browser, a sibling subdomain): a page of another origin can neither read the token nor forge the
 * Origin header. A safe method changes nothing and needs neither.
 */
import { timingSafeEqual } from "node:crypto"
import type { HttpServerRequest } from "@effect/platform"
import { Option } from "effect"
import { type ForbiddenError, forbidden } from "./errors.ts"
import { CSRF_HEADER } from "./session-lookup.ts"

const SAFE_METHODS = new Set(["GET", "HEAD"])

const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given, "utf8")
  const b = Buffer.from(expected, "utf8")
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The origin (scheme://host[:port]) of HERALD_BASE_URL, as browsers write it in `Origin`. */
export const originOf = (baseUrl: string): string => new URL(baseUrl).origin

/** Why `request`, authenticated by a session whose token is `csrfToken`, is refused; none when it may go on. */
export const csrfRefusal = (
  request: HttpServerRequest.HttpServerRequest,
  csrfToken: string,
  allowedOrigin: string
): Option.Option<ForbiddenError> => {
  if (SAFE_METHODS.has(request.method)) return Option.none()
  const token = request.headers[CSRF_HEADER]
  if (token === undefined || !sameSecret(token, csrfToken)) {
    return Option.some(forbidden("A request with the console's session cookie must carry the session's X-Herald-CSRF token"))
  }
  if (request.headers["origin"] !== allowedOrigin) {
    return Option.some(forbidden(`A request with the console's session cookie must come from ${allowedOrigin} (its Origin header)`))
  }
  return Option.none()
}
