/**
 * npm run bench:render — renders per second of a 20 KB template with 20 variables for 10,000
 * contacts through Herald's engine (src/bulk/render: prepared once, rendered per contact, with
 * the `missing` check), beside a bare loop of liquidjs (parse once, renderSync per contact) in
 * the same run. Target: Herald ≥ 80 % of the bare loop — the engine's cache decides the rate, not
 * Herald's wrapping. Then the render deadline against the largest legitimate inputs (below).
 */
import { Either } from "effect"
import { Liquid } from "liquidjs"
import { contactScope, prepareContent, renderContent } from "../src/bulk/render/content.ts"
import { makeRenderEngine } from "../src/bulk/render/engine.ts"
import { makeTaskRunner, type RenderTask } from "../src/bulk/render/tasks.ts"

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

// The render deadline (HERALD_RENDER_TIMEOUT_MS, 30,000 ms by default) against the largest
// legitimate input, timed through the render workers' own task runner (src/bulk/render/tasks.ts,
// in this thread: the same code a worker runs): a 512 KB template with realistic Liquid
// (conditions, loops over metadata, filters) prepared (parsed, its text part generated) and
// rendered cold, and an MJML newsletter of 2,000 elements (MAX_MJML_ELEMENTS) compiled.
const DEADLINE_MS = 30_000
const section = (i: number) =>
  `<tr><td style="padding:8px">{% if metadata.plan == "pro" %}<b>{{ name | upcase }}</b>{% else %}{{ name | default: "friend" }}{% endif %}, `
  + `item ${i}: {{ metadata.items[${i % 10}] | escape }} — {% for tag in metadata.tags %}<i>{{ tag | capitalize }}</i>{% unless forloop.last %}, {% endunless %}{% endfor %} `
  + `{{ "now" | date: "%Y-%m-%d" }} ${"lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(3)}</td></tr>\n`
let bigHtml = "<html><body><table>"
for (let i = 0; bigHtml.length < 500 * 1024; i++) bigHtml += section(i)
bigHtml += "</table></body></html>"
const bigScope = contactScope({}, {
  email: "ada@example.com",
  name: "Ada",
  metadata: { plan: "pro", items: Array.from({ length: 10 }, (_, i) => `thing ${i} <&>`), tags: ["news", "offers", "events"] }
})
const mjmlSource = `<mjml><mj-body>${
  Array.from({ length: 499 }, (_, i) =>
    `<mj-section><mj-column><mj-text>Story ${i}: {{ name }} ${"words ".repeat(40)}</mj-text><mj-button href="https://example.com/{{ email }}">Read</mj-button></mj-column></mj-section>`).join("")
}</mj-body></mjml>`
const run = makeTaskRunner({ parseCharacters: 1_500_000, renderMs: DEADLINE_MS, memory: 16_000_000 })
const timedTask = async (label: string, task: RenderTask) => {
  const started = performance.now()
  const answer = await run(task)
  const ms = performance.now() - started
  if (answer._tag === "failed") throw new Error(`${label}: ${answer.error.message}`)
  console.log(`${label.padEnd(52)} ${ms.toFixed(0).padStart(6)} ms  (${((ms / DEADLINE_MS) * 100).toFixed(1)} % of the ${DEADLINE_MS} ms deadline)`)
}
console.log(`\ndeadline: a ${(bigHtml.length / 1024).toFixed(0)} KB template, an MJML source of ${(mjmlSource.match(/<mj-[a-z]/g) ?? []).length} elements (${(mjmlSource.length / 1024).toFixed(0)} KB)`)
const big = { subject: "Hi {{ name }}", html: bigHtml, body_text: "" }
await timedTask("512 KB template: prepare + first render (cold)", { op: "content", key: "big", content: big, scope: bigScope })
await timedTask("512 KB template: one more contact (cached)", { op: "content", key: "big", scope: bigScope })
await timedTask("MJML, 2,000 elements: first compile (loads MJML)", { op: "mjml", source: mjmlSource })
await timedTask("MJML, 2,000 elements: compile", { op: "mjml", source: mjmlSource })
