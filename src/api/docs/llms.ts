/**
 * /llms.txt (an index) and /llms-full.txt (every endpoint with its fields), rendered from the same
 * OpenAPI documents the reference pages use, so they cannot drift from the served contract.
 */
import type { OpenApi } from "@effect/platform"
import { VERSION } from "../../version.ts"

type Json = { readonly [key: string]: unknown }
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)
const METHODS = ["get", "post", "put", "patch", "delete"] as const

interface Operation {
  readonly method: string
  readonly path: string
  readonly op: Json
}

const operations = (spec: OpenApi.OpenAPISpec): ReadonlyArray<Operation> =>
  Object.entries(spec.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const op: unknown = (item as Json)[method]
      return isObject(op) ? [{ method: method.toUpperCase(), path, op }] : []
    }))

const resolve = (spec: OpenApi.OpenAPISpec, schema: unknown, depth = 0): Json => {
  if (!isObject(schema) || depth > 8) return {}
  const ref = schema["$ref"]
  if (typeof ref === "string") {
    const name = ref.replace("#/components/schemas/", "")
    return resolve(spec, (spec.components.schemas as Json)[name], depth + 1)
  }
  return schema
}

const typeOf = (spec: OpenApi.OpenAPISpec, schema: unknown): string => {
  const s = resolve(spec, schema)
  if (Array.isArray(s["anyOf"])) return s["anyOf"].map((m) => typeOf(spec, m)).join(" | ")
  if (Array.isArray(s["enum"])) return s["enum"].map((v) => JSON.stringify(v)).join(" | ")
  if (s["type"] === "array") return `array of ${typeOf(spec, s["items"])}`
  return typeof s["type"] === "string" ? s["type"] : "object"
}

/** One line per field, nested objects indented, e.g. `- personalizations[].to[].email: string`. */
const fields = (spec: OpenApi.OpenAPISpec, schema: unknown, prefix = "", depth = 0): Array<string> => {
  const s = resolve(spec, schema)
  if (depth > 4) return []
  if (Array.isArray(s["anyOf"]) && prefix === "") {
    // A body of several forms (the send request): each form's fields under its name.
    return s["anyOf"].flatMap((form, i) => {
      const title = resolve(spec, form)["description"]
      return [`Form ${i + 1}${typeof title === "string" ? ` (${title})` : ""}:`, ...fields(spec, form, prefix, depth + 1)]
    })
  }
  if (s["type"] === "array") return fields(spec, s["items"], `${prefix}[]`, depth + 1)
  if (!isObject(s["properties"])) return []
  const required = new Set(Array.isArray(s["required"]) ? s["required"] : [])
  return Object.entries(s["properties"]).flatMap(([name, prop]) => {
    const path = prefix === "" ? name : `${prefix}.${name}`
    const p = resolve(spec, prop)
    const note = typeof p["description"] === "string" ? ` — ${p["description"]}` : ""
    return [
      `- ${path}: ${typeOf(spec, prop)}${required.has(name) ? " (required)" : ""}${note}`,
      ...fields(spec, prop, path, depth + 1)
    ]
  })
}

const describeOperation = (spec: OpenApi.OpenAPISpec, { method, op, path }: Operation): string => {
  const lines = [`### ${method} ${path}${op["deprecated"] === true ? " (deprecated)" : ""}`]
  if (typeof op["summary"] === "string") lines.push(op["summary"])
  if (typeof op["description"] === "string") lines.push(op["description"])
  const params = Array.isArray(op["parameters"]) ? op["parameters"].filter(isObject) : []
  if (params.length > 0) {
    lines.push("Parameters:")
    for (const p of params) lines.push(`- ${String(p["name"])} (${String(p["in"])}): ${typeOf(spec, p["schema"])}`)
  }
  const body = isObject(op["requestBody"]) ? op["requestBody"]["content"] : undefined
  const bodySchema = isObject(body) && isObject(body["application/json"]) ? body["application/json"]["schema"] : undefined
  if (bodySchema !== undefined) lines.push("Request body (application/json):", ...fields(spec, bodySchema))
  if (isObject(body) && isObject(body["application/json"]) && body["application/json"]["example"] !== undefined) {
    lines.push(`Example request: ${JSON.stringify(body["application/json"]["example"])}`)
  }
  const responses = isObject(op["responses"]) ? op["responses"] : {}
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response)) continue
    const content = isObject(response["content"]) ? response["content"]["application/json"] : undefined
    const schema = isObject(content) ? content["schema"] : undefined
    lines.push(`Response ${status}${typeof response["description"] === "string" ? ` — ${response["description"]}` : ""}`)
    if (schema !== undefined && status.startsWith("2")) lines.push(...fields(spec, schema))
    if (isObject(content) && content["example"] !== undefined && status.startsWith("2")) lines.push(`Example response: ${JSON.stringify(content["example"])}`)
  }
  return lines.join("\n")
}

export const renderLlmsIndex = (docs: ReadonlyArray<{ area: string; spec: OpenApi.OpenAPISpec }>): string =>
  [
    "# Herald",
    "",
    `> Self-hosted email delivery appliance (version ${VERSION}): an HTTP/JSON API for transactional and bulk`,
    "> mail, an outbound MTA, an MX listener for bounces, complaints and DMARC reports, and signed webhooks.",
    "",
    "Authentication: `Authorization: Bearer <API key>` on every /v1/ endpoint.",
    "Errors: `{\"error\": {\"type\", \"code\", \"message\", \"param\"?}}`.",
    "",
    "## Documents",
    "- [Every endpoint with its fields](/llms-full.txt)",
    "- [Client OpenAPI document](/docs.json) · [as YAML](/openapi/openapi.yaml)",
    ...docs.filter(({ area }) => area !== "meta").map(({ area }) =>
      `- [${area} OpenAPI](/openapi/openapi.${area}.json) · [${area} reference](/reference/${area}/)`
    ),
    "",
    ...docs.flatMap(({ area, spec }) => [
      `## ${area}`,
      ...operations(spec).map(({ method, op, path }) =>
        `- ${method} ${path}${typeof op["summary"] === "string" ? `: ${op["summary"]}` : ""}`),
      ""
    ])
  ].join("\n")

export const renderLlmsFull = (docs: ReadonlyArray<{ area: string; spec: OpenApi.OpenAPISpec }>): string =>
  [
    `# Herald API ${VERSION} — every endpoint with its fields`,
    "",
    ...docs.flatMap(({ area, spec }) => [
      `## ${area}`,
      "",
      ...operations(spec).map((op) => `${describeOperation(spec, op)}\n`)
    ])
  ].join("\n")
