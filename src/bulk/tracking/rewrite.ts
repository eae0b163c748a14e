/**
 * Open and click tracking of a campaign's HTML (spec "Open and click tracking"; DESIGN "One
 * rendering engine"): rewritten once per campaign when its content is frozen, then filled per
 * recipient by plain string substitution at delivery time (`fillTracking`), so a 100,000-contact
 * campaign parses its HTML once, not 100,000 times.
 *
 * `rewriteForTracking` parses with htmlparser2 (a real tokenizer: a `</body>` inside a comment or a
 * script, an `href` inside a comment, entities in attribute values are what a browser sees) and
 * splices only the `href` values it rewrites, located by the parser's start and end indexes, and
 * the pixel; every other byte of the document stays as it was written.
 *
 * Rewritten: the first `href` of each `<a>` whose value (entities decoded, outer whitespace
 * trimmed, as a browser reads it) is an absolute http:// or https:// URL. Not rewritten:
 * `mailto:`, `tel:`, `javascript:` and any other scheme or relative reference (only http(s) is
 * rewritten, so a `java\tscript:` spelling cannot slip through), in-page anchors (`#…`), an href
 * holding a template tag (`{{…}}`, `{%…%}`: unresolved until delivery, so it is never tracked —
 * this covers `{{ unsubscribe_url }}`), the `/u/` unsubscribe pages of HERALD_BASE_URL, and URLs
 * already on the tracking host.
 *
 * The rewritten HTML holds placeholders, not tokens: `{track_url}/c/<CLICK_MARK><index>_` for
 * link `index` of `links`, and `{track_url}/o/<OPEN_MARK>` in the pixel. They contain no `{`, `%`
 * or `&`, so the template engine passes them through untouched and no attribute quoting changes.
 */
import { Parser } from "htmlparser2"

/** What a campaign stores: its HTML with placeholders, and its tracked links (index → URL). */
export interface TrackedHtml {
  readonly html: string
  /** The distinct tracked URLs, by link index (the same URL twice is one link). */
  readonly links: ReadonlyArray<string>
}

export interface TrackingUrls {
  /** HERALD_TRACK_URL (AppConfig.trackUrl). */
  readonly trackUrl: string
  /** HERALD_BASE_URL (AppConfig.baseUrl): its `/u/` links are the unsubscribe page. */
  readonly baseUrl: string
}

const CLICK_MARK = "__herald_click_"
const OPEN_MARK = "__herald_open__"

const withoutSlash = (url: string) => url.replace(/\/+$/, "")

/** The URL link `index` points at in the stored HTML (filled per recipient by `fillTracking`). */
const clickPlaceholder = (trackUrl: string, index: number) => `${withoutSlash(trackUrl)}/c/${CLICK_MARK}${index}_`

/** The 1×1 image: dimensions as attributes and styles (clients honour one or the other), no alt text to show. */
const pixel = (trackUrl: string) =>
  `<img src="${withoutSlash(trackUrl)}/o/${OPEN_MARK}" width="1" height="1" alt="" ` +
  `style="display:block;width:1px;height:1px;border:0;margin:0;padding:0" />`

export type HrefVerdict =
  | { readonly _tag: "track"; readonly url: string }
  | { readonly _tag: "keep"; readonly reason: "not_http" | "anchor" | "placeholder" | "unsubscribe" | "tracking_domain" | "invalid" }

const parseUrl = (value: string): URL | undefined => {
  try {
    return new URL(value)
  } catch {
    return undefined
  }
}

/** Whether an href (as the parser decoded it) is tracked, and why not when it is kept. */
export const classifyHref = (raw: string, urls: TrackingUrls): HrefVerdict => {
  const value = raw.trim()
  if (value.includes("{{") || value.includes("{%")) return { _tag: "keep", reason: "placeholder" }
  if (value.startsWith("#")) return { _tag: "keep", reason: "anchor" }
  if (!/^https?:\/\//i.test(value)) return { _tag: "keep", reason: "not_http" }
  const url = parseUrl(value)
  if (url === undefined) return { _tag: "keep", reason: "invalid" }
  const track = parseUrl(urls.trackUrl)
  if (track !== undefined && url.host === track.host) return { _tag: "keep", reason: "tracking_domain" }
  const base = parseUrl(urls.baseUrl)
  if (base !== undefined && url.origin === base.origin && url.pathname.startsWith(`${withoutSlash(base.pathname)}/u/`)) {
    return { _tag: "keep", reason: "unsubscribe" }
  }
  return { _tag: "track", url: value }
}

interface Splice {
  readonly start: number
  readonly end: number
  readonly text: string
}

/** The value's span inside an attribute's source text `source` (`href = "…"`, `href='…'`, `href=…`), relative to it. */
const valueSpan = (source: string, quote: string | null | undefined): { readonly start: number; readonly end: number } | undefined => {
  const equals = source.indexOf("=")
  if (equals < 0) return undefined
  if (quote === "\"" || quote === "'") {
    const open = source.indexOf(quote, equals)
    return open < 0 ? undefined : { start: open + 1, end: source.length - 1 }
  }
  let start = equals + 1
  while (start < source.length && /\s/.test(source[start]!)) start++
  return { start, end: source.length }
}

/**
 * The campaign's HTML with its links and pixel ready for `fillTracking` (see the module comment);
 * `links` continues `prior` (the same URL keeps its index), so several contents share one link table.
 */
export const rewriteForTracking = (html: string, urls: TrackingUrls, prior: ReadonlyArray<string> = []): TrackedHtml => {
  const splices: Array<Splice> = []
  // `prior`: the links of a campaign's other contents (A/B variants), so one index names one URL across them all.
  const links: Array<string> = [...prior]
  const indexOf = new Map<string, number>(prior.map((url, i) => [url, i]))
  let inAnchor = false
  let hrefSeen = false
  let bodyEnd = -1
  let htmlEnd = -1

  const parser: Parser = new Parser({
    onopentagname(name) {
      inAnchor = name === "a"
      hrefSeen = false
    },
    onattribute(name, value, quote) {
      if (!inAnchor || name !== "href" || hrefSeen) return
      // A browser follows the first href of a tag and ignores the others.
      hrefSeen = true
      const verdict = classifyHref(value, urls)
      if (verdict._tag === "keep") return
      // For an attribute the parser's indexes span its source: name to end of value (exclusive).
      const start = parser.startIndex
      const span = valueSpan(html.slice(start, parser.endIndex), quote)
      if (span === undefined) return
      let index = indexOf.get(verdict.url)
      if (index === undefined) {
        index = links.length
        links.push(verdict.url)
        indexOf.set(verdict.url, index)
      }
      const placeholder = clickPlaceholder(urls.trackUrl, index)
      // An unquoted value gains quotes: the placeholder is safe either way, quotes keep it obvious.
      const text = quote === "\"" || quote === "'" ? placeholder : `"${placeholder}"`
      splices.push({ start: start + span.start, end: start + span.end, text })
    },
    onopentag() {
      inAnchor = false
    },
    onclosetag(name, isImplied) {
      if (isImplied) return
      // Only a written end tag is a place in the source; the last one wins (the pixel goes last).
      if (name === "body") bodyEnd = parser.startIndex
      if (name === "html") htmlEnd = parser.startIndex
    }
  }, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true })
  parser.end(html)

  const at = bodyEnd >= 0 ? bodyEnd : htmlEnd >= 0 ? htmlEnd : html.length
  splices.push({ start: at, end: at, text: pixel(urls.trackUrl) })
  splices.sort((a, b) => a.start - b.start)

  let out = ""
  let from = 0
  for (const s of splices) {
    out += html.slice(from, s.start) + s.text
    from = s.end
  }
  return { html: out + html.slice(from), links }
}

/** The per-recipient tokens `fillTracking` puts in place of the placeholders. */
export interface RecipientTokens {
  readonly open: string
  readonly click: (index: number) => string
}

const PLACEHOLDER = /__herald_(?:open__|click_(\d+)_)/g

/**
 * One recipient's HTML: each placeholder of `rewriteForTracking` replaced by that recipient's
 * token. A string substitution over the rendered HTML (no parsing), one token per link minted once.
 */
export const fillTracking = (html: string, tokens: RecipientTokens): string => {
  const clicks = new Map<number, string>()
  return html.replace(PLACEHOLDER, (_, index: string | undefined) => {
    if (index === undefined) return tokens.open
    const i = Number(index)
    let token = clicks.get(i)
    if (token === undefined) {
      token = tokens.click(i)
      clicks.set(i, token)
    }
    return token
  })
}

const escapeAttribute = (url: string) => url.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/**
 * A campaign's rendered HTML as it was before tracking (the message content view for a recipient
 * it must not act for): each click placeholder back to its link's URL (`links` by index, as
 * campaign_links keeps them), the pixel gone. Placeholders are found whatever the tracking host
 * was when the campaign was frozen; a link no longer known keeps its placeholder's host and path,
 * which the tracking route answers with its plain 404.
 */
export const untrackHtml = (html: string, links: ReadonlyMap<number, string>): string =>
  html
    .replace(/<img src="[^"<>]*\/o\/__herald_open__"[^>]*\/>/g, "")
    .replace(/[^\s"'<>]*\/c\/__herald_click_(\d+)_/g, (placeholder, index: string) => {
      const url = links.get(Number(index))
      return url === undefined ? placeholder : escapeAttribute(url)
    })
