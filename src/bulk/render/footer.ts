/**
 * The footer the law asks of bulk mail (issue 30 item 9; CAN-SPAM: an unsubscribe link and the
 * sender's postal address): added at render time to each part of a campaign's or sequence step's
 * content that does not read `{{ unsubscribe_url }}` itself — each part on its own, so an html
 * part with its own link and a text part without one gets the footer in the text only. Before the
 * last `</body>` in html (at the end without one), at the end of the text.
 *
 * The footer is appended to the stored (already tracking-rewritten) source when it is rendered,
 * so its links carry no tracking placeholder: never tracked. Its sources are the key's
 * (`footer_html`, `footer_text`: engine templates checked when saved) or the defaults below; the
 * postal address is the variable `postal_address`. Pure: the render worker and the main thread
 * both load it.
 */
import type { ContentSource } from "./content.ts"

/** A key's footer as stored with the content: its two sources and the address they show. */
export interface Footer {
  readonly html: string
  readonly text: string
  readonly postal_address: string
}

export const DEFAULT_FOOTER_HTML =
  "<p style=\"margin:24px 0 0;font-size:12px;line-height:18px;color:#6b7280\">{{ postal_address }}<br>"
  + "<a href=\"{{ unsubscribe_url }}\" style=\"color:#6b7280\">Unsubscribe</a></p>"
export const DEFAULT_FOOTER_TEXT = "--\n{{ postal_address }}\nUnsubscribe: {{ unsubscribe_url }}"

/** A part that names the variable anywhere (`{{ unsubscribe_url }}`, `{% if unsubscribe_url %}`) carries its own link. */
const READS_UNSUBSCRIBE = /\bunsubscribe_url\b/

export const readsUnsubscribe = (source: string): boolean => READS_UNSUBSCRIBE.test(source)

const beforeBody = (html: string, footer: string): string => {
  const at = html.toLowerCase().lastIndexOf("</body>")
  return at < 0 ? `${html}${footer}` : `${html.slice(0, at)}${footer}${html.slice(at)}`
}

/** `parts` with the footer in each part that has no unsubscribe link of its own; unchanged without a footer. */
export const withFooter = (parts: ContentSource, footer: Footer | undefined): ContentSource => {
  if (footer === undefined) return parts
  return {
    ...parts,
    html: parts.html === "" || readsUnsubscribe(parts.html) ? parts.html : beforeBody(parts.html, footer.html),
    // No text part: the engine makes it from the html, footer included.
    body_text: readsUnsubscribe(parts.body_text) || (parts.body_text === "" && parts.html !== "") ? parts.body_text : `${parts.body_text.replace(/\s+$/, "")}\n\n${footer.text}`
  }
}
