/**
 * What one admitted send body costs in heap while the send handler holds it (docs/operating.md "Memory"):
 * the raw text, the value parsed within bounds (src/http/bounded-json.ts), the decoded and
 * canonical request, and the attachment size check, all held at once as the handler holds them,
 * for the worst bodies of MAX_JSON_MB that pass the bounds. Prints, per body, its size, the heap
 * it holds, and that over its size: the ratio sizes the body budget against the heap cap.
 *
 *   node --expose-gc --import tsx bench/body-heap.ts [MAX_JSON_MB, default 15]
 */
import { Either } from "effect"
import { jsonBoundsProblem, maxJsonNodes, parseBoundedJson } from "../src/http/bounded-json.ts"
import { checkAttachmentSizes } from "../src/transactional/limits.ts"
import { canonicalize } from "../src/transactional/normalize.ts"
import { decodeSendRequest } from "../src/transactional/request.ts"

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with node --expose-gc --import tsx bench/body-heap.ts")
const MB = 1024 * 1024
const maxBytes = Number(process.argv[2] ?? "15") * MB

const base = {
  from: { email: "hello@example.com" },
  subject: "Hello",
  content: [{ type: "text/plain", value: "hi" }]
}
const withPadding = (body: Record<string, unknown>, padChar = "x", inserted = "") => {
  const text = JSON.stringify(body).replace("\"@@\"", inserted)
  const room = maxBytes - text.length - 20
  return `${text.slice(0, -1)},"pad":"${padChar.repeat(Math.floor(room / Buffer.byteLength(padChar)))}"}`
}
const oneRecipient = { personalizations: [{ to: [{ email: "a@example.org" }] }], ...base }

/** The worst bodies of `maxBytes` within the bounds, each as the handler would receive them. */
const bodies: Array<[string, () => string]> = [
  ["attachments (base64, MAX_JSON_MB of it)", () => {
    const text = JSON.stringify({ ...oneRecipient, attachments: [{ filename: "a.bin", content: "" }] })
    const b64 = Math.floor((maxBytes - text.length) / 4) * 4
    return text.replace("\"content\":\"\"}", `"content":"${"QUJD".repeat(b64 / 4)}"}`)
  }],
  // Each `{}` but the first counts twice (its brace and the comma before it).
  [`empty objects up to the value bound (${maxJsonNodes(maxBytes)} values) + padding`, () =>
    withPadding({ ...oneRecipient, extra: "@@" }, "x", `[${"{},".repeat(maxJsonNodes(maxBytes) / 2 - 20)}{}]`)],
  ["10,000 recipients (HERALD_MAX_REQUEST_RECIPIENTS) + padding", () =>
    withPadding({
      ...base,
      personalizations: Array.from({ length: 1000 }, (_, p) => ({
        to: Array.from({ length: 10 }, (_, r) => ({ email: `user-${p}-${r}@example.org`, name: `User ${p} ${r}` }))
      }))
    })]
]

const heapUsed = () => {
  gc()
  gc()
  // Node keeps a large decoded body as an external string: off the V8 heap, but memory all the same.
  const { external, heapUsed } = process.memoryUsage()
  return heapUsed + external
}

const kept: Array<unknown> = []

/** The heap one body holds through the handler's steps, and its size; nothing is kept after. */
const measure = (name: string, make: () => string) => {
  const before = heapUsed()
  let text: string | undefined = make()
  const raw = Buffer.from(text, "utf8").toString("utf8")
  text = undefined
  const size = Buffer.byteLength(raw)
  if (jsonBoundsProblem(raw) !== undefined) throw new Error(`${name}: outside the bounds`)
  const parsed = parseBoundedJson(raw)
  if (Either.isLeft(parsed)) throw new Error(`${name}: ${parsed.left.message}`)
  const decoded = decodeSendRequest(parsed.right, { maxRequestRecipients: 10_000 })
  if (Either.isLeft(decoded)) throw new Error(`${name}: ${decoded.left.message}`)
  const canonical = canonicalize(decoded.right)
  checkAttachmentSizes(canonical, { maxAttachmentBytes: maxBytes, maxTotalBytes: maxBytes })
  // All of it held at once, as at the handler's peak (the parsed value lives until decoding ends).
  kept.push(raw, parsed, decoded, canonical)
  const held = heapUsed() - before
  kept.length = 0
  return { size, held }
}

console.log(`MAX_JSON_MB = ${maxBytes / MB}`)
console.log("body | MB | held MB (heap + external) | held / size")
for (const [name, make] of bodies) {
  const { held, size } = measure(name, make)
  console.log(`${name} | ${(size / MB).toFixed(1)} | ${(held / MB).toFixed(1)} | ${(held / size).toFixed(2)}`)
}
