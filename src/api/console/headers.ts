/**
 * The headers of every response under /console/ (issue 28): the console's pages and assets (served
 * by the console's static routes) and its session routes. For anyone serving something there:
 * `withConsoleHeaders(response)`, or spread `CONSOLE_HEADERS`.
 *
 * - A strict CSP: scripts, styles, fonts and images from the appliance only, no inline script and
 *   no eval (the bundle is a file); `connect-src 'self'` for the API; `frame-src 'self'` for a
 *   message's HTML, which /v1 serves with its own, stricter CSP inside a sandboxed iframe;
 *   `frame-ancestors 'none'` so no other site frames the console (clickjacking); no <base> and no
 *   plugins; forms post only here.
 * - `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` (no console URL leaks to a
 *   link's target), and `Cache-Control: no-store` for what carries a session's data.
 */
import { HttpServerResponse } from "@effect/platform"

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'"
].join("; ")

export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // Older browsers that ignore frame-ancestors.
  "x-frame-options": "DENY",
  // No window this page opens (a message's link) can reach back into it.
  "cross-origin-opener-policy": "same-origin"
}

/** `response` with the console's headers (a static asset may add its own Cache-Control). */
export const withConsoleHeaders = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.setHeaders(response, CONSOLE_HEADERS)

/** The console's headers and `Cache-Control: no-store`: for answers that carry a session's data. */
export const withConsoleNoStoreHeaders = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeader(withConsoleHeaders(response), "cache-control", "no-store")
