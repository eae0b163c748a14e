/**
 * The headers of every console page and asset (#28 "Strict CSP on console pages (no inline
 * script), frame-ancestors 'none'"). Temporary home: src/api/console/headers.ts (another part of
 * #28) brings the shared helper; when it lands, static.ts uses it and this file goes.
 *
 * `frame-src 'self'` is for the message view's sandboxed iframe of a message's HTML, which is
 * served by the appliance with its own, stricter CSP.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'"
].join("; ")

export const consoleHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin"
}
