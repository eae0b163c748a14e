/**
 * The text part generated from html (when a template has no `body_text`), and the preheader as
 * hidden inbox-preview text. Both work on the *source* when content is prepared, once: the
 * generated text is itself a Liquid template (placeholders survive the conversion, in text and in
 * link targets) rendered per contact like any other field.
 */
import { convert } from "html-to-text"

const KEEP_CASE = ["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({
  selector,
  // Upper-casing a heading would turn `{{ name }}` into `{{ NAME }}`, another variable.
  options: { uppercase: false }
}))

/** Plain text of an html source, its `{{ }}` and `{% %}` kept (no wrapping: it could split one). */
export const textFromHtml = (html: string): string =>
  convert(html, {
    wordwrap: false,
    selectors: [
      ...KEEP_CASE,
      { selector: "img", format: "skip" },
      { selector: "a", options: { hideLinkHrefIfSameAsText: true } }
    ]
  })

const HIDDEN = "display:none;font-size:1px;line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;mso-hide:all"
const BODY_OPEN = /<body\b[^>]*>/i

/**
 * The html with the preheader as its first, hidden element: the line inbox lists show after the
 * subject. `<` is escaped so the preheader cannot open a tag; its placeholders render escaped.
 */
export const withPreheader = (html: string, preheader: string | null | undefined): string => {
  if (preheader === null || preheader === undefined || preheader.trim() === "") return html
  const block = `<div style="${HIDDEN}">${preheader.replaceAll("<", "&lt;")}</div>`
  const body = BODY_OPEN.exec(html)
  if (body === null) return block + html
  const at = body.index + body[0].length
  return html.slice(0, at) + block + html.slice(at)
}
