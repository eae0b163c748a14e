/**
 * Issue 26, "every input has a bound in its schema", by construction: the served OpenAPI documents
 * are walked and every request field (parameters and bodies, through $ref) must carry a bound, so
 * a new endpoint that forgets one fails here. And NUL or a lone surrogate, which PostgreSQL cannot
 * store, is sent to every documented route in a path parameter, a query parameter and a body
 * string: each is a 400 `validation_failed` naming it, never a 500 (finding 8).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type SendingApp, startSendingApp } from "../support/sending.ts"
import { unboundedRequestFields } from "../support/openapi-bounds.ts"

let rig: SendingApp

beforeAll(async () => {
  rig = await startSendingApp()
})
afterAll(() => rig.stop())

const DOCUMENTS = ["/openapi/openapi.transactional.json", "/openapi/openapi.bulk.json", "/openapi/openapi.platform.json", "/docs.json"]
const METHODS = ["get", "post", "put", "patch", "delete"] as const

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

const documents = async (): Promise<Array<Json>> =>
  Promise.all(DOCUMENTS.map(async (path) => {
    const res = await rig.app.request("GET", path, { token: null })
    expect(res.status).toBe(200)
    return res.json
  }))

interface Operation {
  readonly method: string
  readonly path: string
  readonly doc: Json
  readonly operation: Json
}

const operationsOf = (docs: ReadonlyArray<Json>): Array<Operation> => {
  const seen = new Map<string, Operation>()
  for (const doc of docs) {
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const method of METHODS) {
        if (item[method] !== undefined) seen.set(`${method} ${path}`, { method: method.toUpperCase(), path, doc, operation: item[method] })
      }
    }
  }
  return [...seen.values()]
}

const resolve = (doc: Json, node: Json): Json => {
  let current = node
  while (current?.$ref !== undefined) current = current.$ref.replace(/^#\//, "").split("/").reduce((n: Json, k: string) => n?.[k], doc)
  return current
}

/** The route with every path parameter given `value` (already percent-encoded). */
const routeWith = (op: Operation, value: (name: string) => string) => op.path.replace(/\{([^}]+)\}/g, (_, name: string) => value(name))
const pathParameters = (op: Operation): Array<string> => [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)
const queryParameter = (op: Operation): string =>
  (op.operation.parameters ?? []).map((p: Json) => resolve(op.doc, p)).find((p: Json) => p.in === "query")?.name ?? "q"

/** The first property of the operation's JSON body, or undefined for an array body or none. */
const firstBodyField = (op: Operation): { readonly kind: "object"; readonly name: string } | { readonly kind: "array" } | undefined => {
  const media = op.operation.requestBody?.content?.["application/json"]
  if (media === undefined) return undefined
  const schema = resolve(op.doc, media.schema)
  const members = [schema, ...(schema.anyOf ?? []).map((m: Json) => resolve(op.doc, m))]
  const withProperties = members.find((m: Json) => m.properties !== undefined && Object.keys(m.properties).length > 0)
  if (withProperties !== undefined) return { kind: "object", name: Object.keys(withProperties.properties)[0]! }
  return members.some((m: Json) => m.type === "array") ? { kind: "array" } : undefined
}

const tokenFor = (op: Operation) => op.path.startsWith("/v1/admin") ? rig.app.adminToken : rig.sender.token

describe("every request field has a bound", () => {
  it("finds no string without maxLength, array without maxItems or open object without its size in any served document", async () => {
    const docs = await documents()
    const unbounded = docs.flatMap(unboundedRequestFields).map((u) => `${u.operation}: ${u.field}: ${u.problem}`)
    expect([...new Set(unbounded)]).toEqual([])
    // The walk sees the bounds: the contact metadata's is in the bulk document.
    const bulk = docs[1]
    const create = resolve(bulk, bulk.paths["/v1/bulk/contacts"].post.requestBody.content["application/json"].schema)
    expect(resolve(bulk, create.properties.metadata)).toMatchObject({ "x-max-bytes": 32768, "x-max-depth": 5 })
  })

  it("names the field when a bound is missing (the walk is not vacuous)", () => {
    const doc = {
      paths: {
        "/x/{id}": {
          post: {
            parameters: [{ in: "path", name: "id", schema: { type: "string" } }],
            requestBody: {
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    properties: { tags: { type: "array", items: { type: "string", maxLength: 5 } }, meta: { type: "object", additionalProperties: {} } }
                  }
                }
              }
            }
          }
        }
      }
    }
    expect(unboundedRequestFields(doc).map((u) => `${u.operation} ${u.field}: ${u.problem}`)).toEqual([
      "POST /x/{id} path id: string without maxLength",
      "POST /x/{id} body(application/json).tags: array without maxItems",
      "POST /x/{id} body(application/json).meta: open object without x-max-bytes (its serialised size)"
    ])
  })
})

describe("NUL and lone surrogates are refused in one place, on every route", () => {
  it("answers 400 naming the path parameter for a NUL in each one", async () => {
    const failures: Array<string> = []
    for (const op of operationsOf(await documents())) {
      for (const name of pathParameters(op)) {
        const route = routeWith(op, (n) => (n === name ? "a%00b" : "1"))
        const res = await rig.app.request(op.method, route, { token: tokenFor(op) })
        if (res.status !== 400 || res.json?.error?.code !== "validation_failed" || res.json.error.param !== name) {
          failures.push(`${op.method} ${route}: ${res.status} ${res.text.slice(0, 200)}`)
        }
      }
    }
    expect(failures).toEqual([])
  })

  it("answers 400 naming the query parameter for a NUL in it, on every route", async () => {
    const failures: Array<string> = []
    for (const op of operationsOf(await documents())) {
      const name = queryParameter(op)
      const route = `${routeWith(op, () => "1")}?${name}=x%00`
      const res = await rig.app.request(op.method, route, { token: tokenFor(op) })
      if (res.status !== 400 || res.json?.error?.code !== "validation_failed" || res.json.error.param !== name) {
        failures.push(`${op.method} ${route}: ${res.status} ${res.text.slice(0, 200)}`)
      }
    }
    expect(failures).toEqual([])
  })

  it.each([["NUL", "\\u0000"], ["a lone surrogate", "\\ud800"]])("answers 400 naming the body field for %s in a body string", async (_, escape) => {
    const failures: Array<string> = []
    for (const op of operationsOf(await documents())) {
      const field = firstBodyField(op)
      if (field === undefined) continue
      const rawBody = field.kind === "object" ? `{"${field.name}":"a${escape}b"}` : `["a${escape}b"]`
      const route = routeWith(op, () => "1")
      const res = await rig.app.request(op.method, route, { token: tokenFor(op), rawBody })
      const param = field.kind === "object" ? field.name : "[0]"
      if (res.status !== 400 || res.json?.error?.code !== "validation_failed" || res.json.error.param !== param) {
        failures.push(`${op.method} ${route}: ${res.status} ${res.text.slice(0, 200)}`)
      }
    }
    expect(failures).toEqual([])
  })

  it("refuses them on the public pages too, and a malformed escape in a path, but the pixel still answers", async () => {
    for (const route of ["/u/a%00b", "/confirm/a%00b"]) {
      for (const method of ["GET", "POST"]) {
        const res = await rig.app.request(method, route, { token: null })
        expect(res.status, `${method} ${route}`).toBe(400)
        expect(res.json.error.code).toBe("validation_failed")
      }
    }
    const malformed = await rig.app.request("GET", "/v1/bulk/contacts/%ED%A0%80", { token: rig.sender.token })
    expect(malformed.status).toBe(400)
    expect(malformed.json.error).toMatchObject({ code: "validation_failed", param: "id" })
    const pixel = await rig.app.request("GET", "/o/a%00b", { token: null })
    expect(pixel.status).toBeLessThan(500)
  })
})
