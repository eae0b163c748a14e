/**
 * npm run bench:render — renders per second of a 20 KB template with 20 variables for 10,000
 * contacts through Herald's engine (src/bulk/render: prepared once, rendered per contact, with
 * the `missing` check), beside a bare loop of liquidjs (parse once, renderSync per contact) in
 * the same run. Target: Herald ≥ 80 % of the bare loop — the engine's cache decides the rate, not
 * Herald's wrapping.
 */
import { Either } from "effect"
import { Liquid } from "liquidjs"
import { contactScope, prepareContent, renderContent } from "../src/bulk/render/content.ts"
import { makeRenderEngine } from "../src/bulk/render/engine.ts"

const CONTACTS = 10_000
const VARIABLES = 20

const paragraph = (i: number) =>
  `<tr><td style="padding:8px;font-family:Arial">Dear {{ v${i % VARIABLES} }}, section ${i} of your newsletter: `
  + "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. ".repeat(2) + "</td></tr>\n"
let html = "<html><body><table>"
for (let i = 0; html.length < 20 * 1024; i++) html += paragraph(i)
html += "</table></body></html>"
const subject = "Hello {{ v0 }}, news for {{ v1 }}"
const text = "Hi {{ v0 }}\n" + Array.from({ length: VARIABLES }, (_, i) => `{{ v${i} }}`).join(" ")

const contacts = Array.from({ length: CONTACTS }, (_, n) =>
  Object.fromEntries(Array.from({ length: VARIABLES }, (_, i) => [`v${i}`, `value ${n}-${i} <&>`])))

const timed = (label: string, run: () => number) => {
  const started = process.hrtime.bigint()
  const bytes = run()
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const rate = CONTACTS / seconds
  console.log(`${label.padEnd(34)} ${rate.toFixed(0).padStart(8)} renders/s  (${seconds.toFixed(2)} s, ${(bytes / 1e6).toFixed(1)} MB out)`)
  return rate
}

const bare = () => {
  const htmlLiquid = new Liquid({ outputEscape: "escape" })
  const textLiquid = new Liquid()
  const parsed = { subject: textLiquid.parse(subject), html: htmlLiquid.parse(html), text: textLiquid.parse(text) }
  let bytes = 0
  for (const c of contacts) {
    bytes += textLiquid.renderSync(parsed.subject, c).length
    bytes += htmlLiquid.renderSync(parsed.html, c).length
    bytes += textLiquid.renderSync(parsed.text, c).length
  }
  return bytes
}

const herald = () => {
  const engine = makeRenderEngine()
  const prepared = Either.getOrThrow(prepareContent(engine, { subject, html, body_text: text }))
  let bytes = 0
  for (const c of contacts) {
    const out = Either.getOrThrow(renderContent(engine, prepared, contactScope(c, { email: "a@b.example" })))
    bytes += out.subject.length + (out.html?.length ?? 0) + out.text.length
  }
  return bytes
}

console.log(`template: ${(html.length / 1024).toFixed(1)} KB html, ${VARIABLES} variables, ${CONTACTS} contacts`)
// One warm-up each, then the measured runs alternate.
bare()
herald()
const bareRate = timed("bare liquidjs loop", bare)
const heraldRate = timed("Herald engine (prepare once)", herald)
console.log(`Herald / bare: ${((heraldRate / bareRate) * 100).toFixed(0)} % (target ≥ 80 %)`)
