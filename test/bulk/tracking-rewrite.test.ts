/**
 * The link rewriter as tables: every exclusion of the spec, what is rewritten (quoting, case,
 * entities, repeats), byte-identity of everything else, the pixel's place, and the per-recipient
 * fill by substitution. Pure: no database.
 */
import { Option } from "effect"
import { describe, expect, it } from "vitest"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { HUMAN_PROXIES, isMachineOpen } from "../../src/bulk/tracking/machine-opens.ts"
import { classifyHref, fillTracking, rewriteForTracking } from "../../src/bulk/tracking/rewrite.ts"
import { readClickToken, readOpenToken, recipientTokens } from "../../src/bulk/tracking/tokens.ts"

const urls = { trackUrl: "https://t.example.com", baseUrl: "https://mail.example.com" }
const PIXEL = `<img src="https://t.example.com/o/__herald_open__" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0" />`
const click = (i: number) => `https://t.example.com/c/__herald_click_${i}_`

describe("which hrefs are tracked", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["https://example.org/pricing", "track"],
    ["http://example.org/", "track"],
    ["  HTTPS://Example.org/a b  ", "track"],
    ["mailto:ada@example.org", "not_http"],
    ["tel:+4722334455", "not_http"],
    ["javascript:alert(1)", "not_http"],
    ["java\tscript:alert(1)", "not_http"],
    ["JavaScript:void(0)", "not_http"],
    ["sms:+4722", "not_http"],
    ["/relative/path", "not_http"],
    ["//example.org/protocol-relative", "not_http"],
    ["", "not_http"],
    ["#top", "anchor"],
    ["#", "anchor"],
    ["{{ unsubscribe_url }}", "placeholder"],
    ["{{unsubscribe_url}}", "placeholder"],
    ["https://example.org/?u={{ contact.id }}", "placeholder"],
    ["https://example.org/{% if vip %}vip{% endif %}", "placeholder"],
    ["https://mail.example.com/u/abc.def", "unsubscribe"],
    ["https://t.example.com/c/abc.def", "tracking_domain"],
    ["https://t.example.com/anything", "tracking_domain"],
    ["https://mail.example.com/docs", "track"],
    ["http://", "invalid"]
  ]
  it.each(cases)("%j → %s", (href, expected) => {
    const verdict = classifyHref(href, urls)
    expect(verdict._tag === "track" ? "track" : verdict.reason).toBe(expected)
  })

  it("keeps the unsubscribe, anchor, mailto, tel, javascript, placeholder and tracking links byte for byte", () => {
    const body = [
      `<a href="mailto:a@example.org">m</a>`,
      `<a href='tel:+47'>t</a>`,
      `<a href="javascript:void(0)">j</a>`,
      `<a href="#section">s</a>`,
      `<a href="{{ unsubscribe_url }}">unsubscribe</a>`,
      `<a href="https://mail.example.com/u/tok.en">unsubscribe</a>`,
      `<a href="https://t.example.com/c/x.y">already</a>`,
      `<a href="https://x.example/?id={{ contact.id }}">personal</a>`,
      `<a name="x">no href</a>`
    ].join("\n")
    const out = rewriteForTracking(body, urls)
    expect(out.links).toEqual([])
    expect(out.html).toBe(body + PIXEL)
  })
})

describe("rewriting", () => {
  it("rewrites http(s) anchors only, keeping every other byte of the document", () => {
    const html = `<!doctype html>\n<html><head><title>T &amp; C</title><style>a{color:red}</style></head>\n` +
      `<body class="x"><p>Hi {{ name }},</p>\n<a  class = "btn"  href = "https://example.org/a?x=1&amp;y=2" >A</a>\n` +
      `<A HREF='http://example.org/b'>B</A> <a href=https://example.org/c>C</a>\n` +
      `<img src="https://example.org/logo.png"> <link href="https://example.org/style.css">\n` +
      `<a href="https://example.org/a?x=1&y=2">A again</a>\n<!-- <a href="https://example.org/comment"> </body> -->\n` +
      `<script>var s = '<a href="https://example.org/script">';</script>\n</body>\n</html>\n`
    const out = rewriteForTracking(html, urls)
    expect(out.links).toEqual(["https://example.org/a?x=1&y=2", "http://example.org/b", "https://example.org/c"])
    const expected = html
      .replace(`"https://example.org/a?x=1&amp;y=2"`, `"${click(0)}"`)
      .replace(`'http://example.org/b'`, `'${click(1)}'`)
      .replace(`href=https://example.org/c>`, `href="${click(2)}">`)
      .replace(`"https://example.org/a?x=1&y=2"`, `"${click(0)}"`)
      .replace(`</script>\n</body>`, `</script>\n${PIXEL}</body>`)
    expect(out.html).toBe(expected)
  })

  it("follows only the first href of a tag, as browsers do", () => {
    const out = rewriteForTracking(`<a href="https://one.example/" href="https://two.example/">x</a>`, urls)
    expect(out.links).toEqual(["https://one.example/"])
    expect(out.html).toBe(`<a href="${click(0)}" href="https://two.example/">x</a>${PIXEL}`)
  })

  it.each([
    ["no body: at the end of the content", `<p>Hello</p>`, `<p>Hello</p>${PIXEL}`],
    ["before </body>", `<html><body><p>x</p></body></html>`, `<html><body><p>x</p>${PIXEL}</body></html>`],
    ["upper-case </BODY>", `<BODY>x</BODY >`, `<BODY>x${PIXEL}</BODY >`],
    ["before </html> when </body> is left out", `<html><body>x</html>`, `<html><body>x${PIXEL}</html>`],
    ["empty content", ``, PIXEL]
  ])("places the pixel %s", (_, html, expected) => {
    expect(rewriteForTracking(html, urls).html).toBe(expected)
  })

  it("handles a track URL with a trailing slash and a path", () => {
    const out = rewriteForTracking(`<a href="https://example.org">x</a>`, { trackUrl: "https://example.com/t/", baseUrl: urls.baseUrl })
    expect(out.html).toContain(`href="https://example.com/t/c/__herald_click_0_"`)
    expect(out.html).toContain(`src="https://example.com/t/o/__herald_open__"`)
  })
})

describe("per-recipient fill", () => {
  const tokens = makeTokens("test-secret")

  it("substitutes each placeholder with the recipient's tokens, which name the delivery and the link", () => {
    const { html } = rewriteForTracking(`<body><a href="https://a.example/">a</a><a href="https://b.example/">b</a><a href="https://a.example/">a</a></body>`, urls)
    const filled = fillTracking(html, recipientTokens(tokens, { deliveryId: "dlv_1", campaignId: "cp_1" }))
    expect(filled).not.toContain("__herald_")
    const clicks = [...filled.matchAll(/https:\/\/t\.example\.com\/c\/([A-Za-z0-9_.-]+)"/g)].map((m) => m[1]!)
    expect(clicks).toHaveLength(3)
    expect(clicks[0]).toBe(clicks[2])
    expect(clicks.map((t) => Option.getOrThrow(readClickToken(tokens, t, Date.now())).linkIndex)).toEqual([0, 1, 0])
    const open = /\/o\/([A-Za-z0-9_.-]+)"/.exec(filled)![1]!
    expect(Option.getOrThrow(readOpenToken(tokens, open, Date.now()))).toEqual({ deliveryId: "dlv_1", campaignId: "cp_1" })
    // Another recipient's tokens differ; an open token is no click token and vice versa.
    const other = fillTracking(html, recipientTokens(tokens, { deliveryId: "dlv_2", campaignId: "cp_1" }))
    expect(other).not.toBe(filled)
    expect(Option.isNone(readClickToken(tokens, open, Date.now()))).toBe(true)
    expect(Option.isNone(readOpenToken(tokens, clicks[0]!, Date.now()))).toBe(true)
  })

  it("leaves a document without placeholders as it is", () => {
    expect(fillTracking("<p>plain</p>", recipientTokens(tokens, { deliveryId: "d", campaignId: "c" }))).toBe("<p>plain</p>")
  })
})

describe("machine opens", () => {
  it.each([
    ["Mozilla/5.0", true],
    ["", true],
    [undefined, true],
    ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0 Safari/537.36", true],
    ["Googlebot/2.1 (+http://www.google.com/bot.html)", true],
    ["Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)", false],
    ["Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)", false],
    ["YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html", false],
    ["Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17328; Pro)", false]
  ])("%j → machine %s", (ua, machine) => {
    expect(isMachineOpen(ua)).toBe(machine)
  })

  it("names the proxies it deliberately counts as people", () => {
    expect(HUMAN_PROXIES).toEqual(["GoogleImageProxy", "YahooMailProxy"])
  })
})
