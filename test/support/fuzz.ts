/**
 * Hostile requests for the route fuzz test (test/http/fuzz.test.ts): the routes come from the
 * served OpenAPI documents (so a new endpoint is fuzzed without anyone listing it), the values from
 * fast-check (the copy `effect` ships as `FastCheck`: the same library, no second version).
 *
 * What a stranger or a careless client can send, in each place a route reads: path parameters,
 * query parameters and bodies made of long strings, NUL and lone surrogates, percent-escapes that
 * decode to nothing valid, huge and negative numbers, wrong types, deep nesting and bodies that are
 * not JSON at all. Bodies keep the operation's own property names half of the time, so that the
 * values reach the handlers' decoders and not only the JSON parser.
 */
import { FastCheck as fc } from "effect"

export interface Operation {
  readonly method: string
  /** The OpenAPI path, with `{name}` placeholders. */
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<string>
  /** Property names of the JSON body's schema (empty when it has none or is not an object). */
  readonly bodyProperties: ReadonlyArray<string>
  readonly acceptsCsv: boolean
}

// OpenAPI documents are untyped JSON here; each access below checks what it reads.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

const resolve = (document: Json, schema: Json): Json => {
  let current = schema
  for (let hops = 0; current !== undefined && typeof current.$ref === "string" && hops < 20; hops++) {
    const path = (current.$ref as string).replace(/^#\//, "").split("/")
    current = path.reduce((node: Json, key) => node?.[key], document)
  }
  return current
}

const propertiesOf = (document: Json, schema: Json): Array<string> => {
  const resolved = resolve(document, schema)
  if (resolved === undefined) return []
  const own = Object.keys(resolved.properties ?? {})
  const alternatives = [...(resolved.anyOf ?? []), ...(resolved.oneOf ?? []), ...(resolved.allOf ?? [])]
  return [...new Set([...own, ...alternatives.flatMap((s: Json) => propertiesOf(document, s))])]
}

/** Every operation of one OpenAPI document. */
export const operationsOf = (document: Json): Array<Operation> =>
  Object.entries(document.paths ?? {}).flatMap(([path, item]: [string, Json]) =>
    Object.entries(item)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map(([method, operation]: [string, Json]) => {
        const parameters: Array<Json> = [...(item.parameters ?? []), ...(operation.parameters ?? [])]
          .map((p: Json) => resolve(document, p))
        const content = resolve(document, operation.requestBody)?.content ?? {}
        return {
          method: method.toUpperCase(),
          path,
          pathParams: parameters.filter((p) => p.in === "path").map((p) => p.name as string),
          queryParams: parameters.filter((p) => p.in === "query").map((p) => p.name as string),
          bodyProperties: propertiesOf(document, content["application/json"]?.schema),
          acceptsCsv: Object.keys(content).some((type) => type.includes("csv"))
        }
      }))

/** Text PostgreSQL cannot store, text no decoder expects, and text that is simply too long. */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.constantFrom("\u0000", "a\u0000b", "\ud800", "x\udfffy", "\ud83d", "\uffff", "../../etc/passwd", "' OR 1=1 --",
    "{{ x | append: x }}", "{% for i in (1..99999) %}{% endfor %}", "=cmd|' /C calc'!A0", "<script>alert(1)</script>",
    "a@b", "@", "%", "%00", "1e400", "-1", "", " ", "null", "[]"),
  fc.tuple(fc.constantFrom("A", "é", "\u0000", "😀"), fc.constantFrom(1_000, 70_000, 300_000))
    .map(([unit, count]) => unit.repeat(count))
)

const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, -1e308, 5e-324, 0.5)
)

/** A JSON value of any type, nested a little. */
const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    hostileText,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(hostileText.filter((k) => k.length < 100), tie("value"), { maxKeys: 4 }),
    fc.constantFrom(1_000, 20_000).map((n) => Array.from({ length: n }, (_, i) => `item${i}`))
  )
})).value

/** Raw body text: deep nesting, broken JSON, JSON that is not an object. */
const hostileRawBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(100, 5_000, 100_000).map((depth) => `${"[".repeat(depth)}${"]".repeat(depth)}`),
  fc.constantFrom(100, 5_000).map((depth) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`),
  fc.constantFrom("{", "{\"a\":}", "[1,2", "\u0000", "{\"a\":\"\\u0000\"}", "{\"a\":\"\\ud800\"}", "1e99999", "\"x\"", "null"),
  hostileValue.map((v) => JSON.stringify(v) ?? "null")
)

const hostileCsv: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(10, 5_000).map((columns) =>
    `${Array.from({ length: columns }, (_, i) => (i === 0 ? "email" : `c${i}`)).join(",")}\na@example.com\n`),
  fc.array(fc.array(hostileText.filter((t) => t.length < 2_000), { maxLength: 5 }), { maxLength: 20 })
    .map((rows) => ["email,first_name,tags", ...rows.map((cells) => cells.join(","))].join("\n")),
  fc.constantFrom("email\n\"unclosed", "email,tags\na@example.com,\u0000x", "\ufeffemail\r\nb@example.com\r\n")
)

/**
 * A path segment as it goes on the wire. encodeURIComponent throws on a lone surrogate, so those
 * are written as the bytes a careless client sends (CESU-8), which no UTF-8 decoder accepts.
 */
export const pathSegment = (text: string): string =>
  Array.from(text).map((ch) => {
    const code = ch.codePointAt(0)!
    if (code >= 0xd800 && code <= 0xdfff) {
      return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`).join("")
    }
    return encodeURIComponent(ch)
  }).join("")

export interface HostileRequest {
  readonly path: string
  readonly contentType: string | undefined
  readonly body: string | undefined
}

/** One hostile request for `operation`. */
export const hostileRequest = (operation: Operation): fc.Arbitrary<HostileRequest> => {
  // Node answers 431 and closes the socket for a request head past 16 KB, before Herald sees it,
  // and the client then sees a reset, not the answer: URLs stay under that.
  const urlText = hostileText.filter((t) => t.length < 1_000)
  const segments = fc.tuple(...operation.pathParams.map(() => urlText))
  const query = fc.array(
    fc.tuple(fc.oneof(fc.constantFrom(...(operation.queryParams.length > 0 ? operation.queryParams : ["x"])), urlText), urlText),
    { maxLength: 3 }
  )
  const shapedBody = fc.dictionary(
    operation.bodyProperties.length > 0 ? fc.constantFrom(...operation.bodyProperties) : hostileText,
    hostileValue,
    { maxKeys: 5 }
  ).map((o) => JSON.stringify(o))
  const body: fc.Arbitrary<{ contentType: string | undefined; body: string | undefined }> = operation.method === "GET"
    ? fc.constant({ contentType: undefined, body: undefined })
    : fc.oneof(
      shapedBody.map((b) => ({ contentType: "application/json", body: b })),
      hostileRawBody.map((b) => ({ contentType: "application/json", body: b })),
      ...(operation.acceptsCsv ? [hostileCsv.map((b) => ({ contentType: "text/csv", body: b }))] : [])
    )
  return fc.tuple(segments, query, body).map(([values, pairs, { body, contentType }]) => {
    let path = operation.path
    operation.pathParams.forEach((name, i) => (path = path.replace(`{${name}}`, pathSegment(values[i]!) || "%20")))
    const search = pairs.map(([k, v]) => `${pathSegment(k)}=${pathSegment(v)}`).join("&")
    return { path: search === "" ? path : `${path}?${search}`, contentType, body }
  })
}
