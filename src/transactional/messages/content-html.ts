/**
 * The HTML part of a message served alone (GET /v1/mail/messages/{id}/content/html), for the
 * console's `<iframe sandbox="allow-popups allow-popups-to-escape-sandbox">`: tenant-written HTML
 * on the API's origin, so the answer itself forbids what the frame's sandbox forbids too.
 *
 * - `Content-Security-Policy`: nothing loads (`default-src 'none'`: no script, frame, font, fetch
 *   or form target) but inline styles and `data:` / `cid:` images; `https:` images only when the
 *   viewer asks (`images=1`), since a remote image tells its sender the message was read.
 * - `X-Content-Type-Options: nosniff`: a browser never reads it as anything but text/html.
 * - Links open in a new tab: `<base target="_blank">` goes first in the document (after a doctype,
 *   so the document keeps its mode). A browser takes the first base element with a target, so the
 *   message's own `<base>` cannot change it; an anchor's own `target` attribute still wins, and a
 *   navigation inside the frame stays in its sandbox.
 */

/**
 * The policy of the html answer (`images`: remote images allowed too, as a mail client loads them
 * when asked: https:, and http: for what mail still carries; a console served over https has the
 * browser upgrade or refuse those itself).
 */
export const contentSecurityPolicy = (images: boolean) =>
  `default-src 'none'; style-src 'unsafe-inline'; img-src data: cid:${images ? " https: http:" : ""}`

const BASE = "<base target=\"_blank\">"

/** Comments and a doctype that may open the document: the base element goes after them. */
const PROLOGUE = /^\uFEFF?(?:\s|<!--[\s\S]*?-->)*(?:<!doctype[^>]*>)?/i

/** `html` with `<base target="_blank">` first (see the module comment). */
export const withLinksInNewTab = (html: string): string => {
  const prologue = PROLOGUE.exec(html)?.[0] ?? ""
  // Without a doctype the comments stay after the base: they decide nothing.
  const at = /<!doctype/i.test(prologue) ? prologue.length : 0
  return html.slice(0, at) + BASE + html.slice(at)
}

/** The answer's header fields besides its type. */
export const htmlHeaders = (images: boolean): Record<string, string> => ({
  "content-security-policy": contentSecurityPolicy(images),
  "x-content-type-options": "nosniff"
})
