/**
 * The public pages (confirm, unsubscribe; DESIGN "Public pages and tokens"): plain HTML with no
 * script, every value escaped, framed by nobody, posting only to themselves. A GET shows a page
 * with buttons (POST forms), so a link scanner that opens the link changes nothing.
 */
import { HttpServerResponse } from "@effect/platform"
import { escapeHtml } from "../../lib/html.ts"

export const PUBLIC_PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer"
} as const

const STYLE = "body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}" +
  "button{font-size:1rem;padding:.5rem 1.25rem}"

/** A button: a form of its own posting `fields` (hidden) to `action`. */
export interface PageButton {
  readonly action: string
  readonly label: string
  readonly fields?: Readonly<Record<string, string>>
}

const formOf = (button: PageButton) =>
  [
    `<form method="post" action="${escapeHtml(button.action)}">`,
    ...Object.entries(button.fields ?? {}).map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`),
    `<button type="submit">${escapeHtml(button.label)}</button>`,
    "</form>"
  ].join("\n")

/**
 * A page titled `title` with `paragraphs` (text, escaped here) and, optionally, a button posting to
 * `action` (`buttons`: more of them, each its own form, after it).
 */
export const publicPage = (
  options: {
    readonly title: string
    readonly paragraphs: ReadonlyArray<string>
    readonly button?: PageButton
    readonly buttons?: ReadonlyArray<PageButton>
    readonly status?: number
  }
) => {
  const { title, paragraphs, button, buttons = [], status = 200 } = options
  const form = [...(button === undefined ? [] : [button]), ...buttons].map(formOf).join("\n")
  const html = [
    "<!doctype html>",
    `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>`,
    `<h1>${escapeHtml(title)}</h1>`,
    ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    form,
    "</body></html>"
  ].join("\n")
  return HttpServerResponse.html(html).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders(PUBLIC_PAGE_HEADERS)
  )
}

/** What every bad, tampered or expired token gets: a plain 404 page that says nothing about why. */
export const invalidLinkPage = () =>
  publicPage({
    title: "This link is not valid",
    paragraphs: ["The link may be incomplete or out of date. Nothing was changed."],
    status: 404
  })
