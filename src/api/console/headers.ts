/**
 * The headers of every response under /console/ (issue 28): the console's pages and assets (served
 * by the console's static routes) and its session routes. For anyone serving something there:
 * `withConsoleHeaders(response)`, or spread `CONSOLE_HEADERS`.
 *
 * - A strict CSP for script: the appliance's files only, no inline script and no eval (the bundle is
 *   a file); `connect-src 'self'` for the API; `frame-src 'self'` for a message's HTML, which /v1
 *   serves with its own, stricter CSP inside a sandboxed iframe. Styles may be inline and images
 *   https: because the template editor's preview is a srcdoc frame, and a srcdoc document inherits
 *   this policy: a template's own <style> and remote images would be refused even when the marketer
 *   asks for them. That frame narrows it again with a policy of its own in the document (no remote
 *   image until asked; views/bulk/templates/preview-document.ts); the console itself renders tenant
 *   text as text, never as markup, so inline style grants no one else a way in;
 *   `frame-ancestors 'none'` so no other site frames the console (clickjacking); no <base> and no
 *   plugins; forms post only here.
 * - `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` (no console URL leaks to a
 *   link's target), and `Cache-Control: no-store` for what carries a session's data.
 */
import { HttpServerResponse } from "@effect/platform"

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https:",
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
