/**
 * Walks served OpenAPI documents and names every request field without a bound: a string without
 * `maxLength` (or an enum, a const, or an anchored pattern of bounded length), an array without
 * `maxItems`, an open object (a map, free-form JSON) without its serialised size (`x-max-bytes`)
 * and, when its values may nest, its depth (`x-max-depth`). What a bound is comes from
 * src/http/bounds.ts; this walk is how a new endpoint that forgets one fails `npm test`.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

export interface Unbounded {
  readonly operation: string
  readonly field: string
  readonly problem: string
}

/** True for a pattern anchored at both ends whose repetitions all have an upper bound. */
const boundedPattern = (pattern: string): boolean =>
  pattern.startsWith("^") && pattern.endsWith("$") && !/[*+]|\{\d+,\}/.test(pattern.replace(/\\./g, ""))

const resolve = (doc: Json, schema: Json): Json => {
  let current = schema
  const seen = new Set<string>()
  while (current !== null && typeof current === "object" && typeof current.$ref === "string") {
    if (seen.has(current.$ref)) return {}
    seen.add(current.$ref)
    const path = (current.$ref as string).replace(/^#\//, "").split("/").map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    current = path.reduce((node: Json, key) => node?.[key], doc)
  }
  return current ?? {}
}

/** Whether a schema's values may hold objects or arrays (free-form or declared). */
const mayNest = (doc: Json, schema: Json): boolean => {
  const s = resolve(doc, schema)
  if (s === true || Object.keys(s).length === 0) return true
  if (s.type === "object" || s.type === "array") return true
  return ["anyOf", "oneOf", "allOf"].some((k) => Array.isArray(s[k]) && s[k].some((m: Json) => mayNest(doc, m)))
}

/** The unbounded places of one schema, `field` being where it sits (`metadata`, `contacts[]`). */
export const unboundedIn = (doc: Json, schema: Json, field: string, out: Array<{ field: string; problem: string }>, depth = 0): void => {
  if (depth > 40) return
  const s = resolve(doc, schema)
  if (s === true || s === undefined || (typeof s === "object" && Object.keys(s).filter((k) => k !== "description" && k !== "title").length === 0)) {
    out.push({ field, problem: "accepts any JSON value without a bound" })
    return
  }
  if (s.enum !== undefined || s.const !== undefined) return
  // A whole value bounded by its serialised size: what it holds is within that.
  if (typeof s["x-max-bytes"] === "number" && (!mayNestBeyond(doc, s) || typeof s["x-max-depth"] === "number")) return
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (Array.isArray(s[key])) s[key].forEach((member: Json) => unboundedIn(doc, member, field, out, depth + 1))
  }
  const types: ReadonlyArray<string> = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type]
  if (types.includes("string") && s.maxLength === undefined && !(typeof s.pattern === "string" && boundedPattern(s.pattern))) {
    out.push({ field, problem: "string without maxLength" })
  }
  if (types.includes("array")) {
    if (s.maxItems === undefined) out.push({ field, problem: "array without maxItems" })
    if (s.items !== undefined) unboundedIn(doc, s.items, `${field}[]`, out, depth + 1)
    if (Array.isArray(s.prefixItems)) s.prefixItems.forEach((item: Json, i: number) => unboundedIn(doc, item, `${field}[${i}]`, out, depth + 1))
  }
  if (types.includes("object") || s.properties !== undefined || s.additionalProperties !== undefined) {
    for (const [name, property] of Object.entries(s.properties ?? {})) {
      unboundedIn(doc, property, field === "" ? name : `${field}.${name}`, out, depth + 1)
    }
    const open = s.additionalProperties !== undefined && s.additionalProperties !== false
      || (s.properties === undefined && s.additionalProperties === undefined && types.includes("object"))
    if (open || s.patternProperties !== undefined) {
      if (typeof s["x-max-bytes"] !== "number") out.push({ field, problem: "open object without x-max-bytes (its serialised size)" })
      else if (typeof s["x-max-depth"] !== "number") out.push({ field, problem: "open object whose values may nest, without x-max-depth" })
    }
  }
}

/** Whether an object's open part (its map values) may hold objects or arrays. */
const mayNestBeyond = (doc: Json, s: Json): boolean => {
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) {
    return s.additionalProperties === true || mayNest(doc, s.additionalProperties)
  }
  if (s.type === "object" && s.properties === undefined) return true
  return Object.values(s.properties ?? {}).some((p) => mayNest(doc, p))
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const

/** Every request field (parameters and bodies) of every operation of `doc` without a bound. */
export const unboundedRequestFields = (doc: Json): Array<Unbounded> => {
  const found: Array<Unbounded> = []
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method]
      if (operation === undefined) continue
      const name = `${method.toUpperCase()} ${path}`
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p: Json) => resolve(doc, p))
      for (const parameter of parameters) {
        const out: Array<{ field: string; problem: string }> = []
        unboundedIn(doc, parameter.schema ?? {}, `${parameter.in} ${parameter.name}`, out)
        found.push(...out.map((o) => ({ operation: name, ...o })))
      }
      const content = resolve(doc, operation.requestBody ?? {}).content ?? {}
      for (const [type, media] of Object.entries<Json>(content)) {
        const out: Array<{ field: string; problem: string }> = []
        const body = resolve(doc, media.schema ?? {})
        // A raw body (text/csv) is bounded by the body limit it names, not by a schema.
        if (body.type === "string" && typeof body["x-max-bytes-setting"] === "string") continue
        unboundedIn(doc, body, `body(${type})`, out)
        found.push(...out.map((o) => ({ operation: name, ...o })))
      }
    }
  }
  return found
}
