/**
 * The reference is usable (issue 31 item 3): every operation of every served document has a
 * summary, a description stating its errors, and examples of its request body and success answer;
 * each example decodes with the endpoint's own schemas from the HttpApi definitions (not with the
 * generated JSON Schema), and a few request examples are sent to a running appliance. A new
 * endpoint without its entry in its area's examples.ts fails here. /openapi/openapi.yaml is
 * /docs.json as YAML, with the deprecated verify alias marked.
 */
import { HttpApi } from "@effect/platform"
import { Option, Schema } from "effect"
import { parse } from "yaml"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HeraldApi } from "../../src/api/api.ts"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { startDnsServer, type DnsServer } from "../support/dns-server.ts"
import { newSender, type Sender } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address } })
})
afterAll(async () => {
  await app?.stop()
  await dns?.close()
})

const SERVED = ["/openapi/openapi.transactional.json", "/openapi/openapi.bulk.json", "/openapi/openapi.platform.json", "/docs.json"]

/** An endpoint's own schemas: its request payload (none without a body) and its success answer. */
interface EndpointSchemas {
  readonly payload: Option.Option<Schema.Schema.AnyNoContext>
  readonly success: Schema.Schema.AnyNoContext
}

/** Every endpoint of the served API by its operationId (`<group>.<endpoint>`, as the documents name it). */
const endpoints = new Map<string, EndpointSchemas>()
HttpApi.reflect(HeraldApi, {
  onGroup: () => undefined,
  onEndpoint: ({ endpoint, group }) => {
    endpoints.set(`${group.identifier}.${endpoint.name}`, {
      payload: endpoint.payloadSchema as unknown as Option.Option<Schema.Schema.AnyNoContext>,
      success: endpoint.successSchema as unknown as Schema.Schema.AnyNoContext
    })
  }
})

interface Media { readonly schema?: unknown; readonly example?: unknown }
interface Operation {
  readonly operationId: string
  readonly summary?: string
  readonly description?: string
  readonly deprecated?: boolean
  readonly requestBody?: { readonly content: Record<string, Media> }
  readonly responses: Record<string, { readonly content?: Record<string, Media> }>
}

const operationsOf = (doc: { paths: Record<string, Record<string, Operation>> }) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })))

/** The example decodes with `schema`; otherwise the parse error, to name what is wrong. */
const decodeProblem = (schema: Schema.Schema.AnyNoContext, example: unknown): string | undefined => {
  try {
    Schema.decodeUnknownSync(schema)(example)
    return undefined
  } catch (error) {
    return String(error)
  }
}

/** What is missing or wrong in one operation's reference: an empty list when it is complete. */
const problemsOf = (route: string, op: Operation): Array<string> => {
  const problems: Array<string> = []
  const endpoint = endpoints.get(op.operationId)
  if (endpoint === undefined) return [`${route}: no endpoint ${op.operationId} in HeraldApi`]
  if (!op.summary?.trim()) problems.push(`${route}: no summary`)
  // The errors are stated as "<status> `<code>`", or the operation says it has none of its own.
  if (!/\b[2-5]\d\d `[a-z_]+`|No errors of its own/.test(op.description ?? "")) problems.push(`${route}: no errors in its description`)
  if (op.requestBody !== undefined) {
    for (const [type, media] of Object.entries(op.requestBody.content)) {
      if (media.example === undefined) problems.push(`${route}: no ${type} request example`)
      else {
        const problem = decodeProblem(Option.getOrThrow(endpoint.payload), media.example)
        if (problem !== undefined) problems.push(`${route}: the request example does not decode: ${problem}`)
      }
    }
  }
  const success = Object.keys(op.responses).filter((status) => status.startsWith("2")).sort()[0]
  const content = success === undefined ? undefined : op.responses[success]?.content
  if (content === undefined) problems.push(`${route}: no documented success content`)
  for (const [type, media] of Object.entries(content ?? {})) {
    if (media.example === undefined) problems.push(`${route}: no ${type} response example`)
    else {
      const problem = decodeProblem(endpoint.success, media.example)
      if (problem !== undefined) problems.push(`${route}: the response example does not decode: ${problem}`)
    }
  }
  return problems
}

describe("the reference's summaries, errors and examples", () => {
  it.each(SERVED)("%s: every operation has a summary, its errors and examples that decode with its own schemas", async (path) => {
    const res = await app.request("GET", path, { token: null })
    expect(res.status).toBe(200)
    const operations = operationsOf(res.json)
    expect(operations.length).toBeGreaterThan(5)
    expect(operations.flatMap(({ op, route }) => problemsOf(route, op))).toEqual([])
  })

  it("shows the errors and examples in /llms-full.txt too", async () => {
    const full = (await app.request("GET", "/llms-full.txt", { token: null })).text
    const start = full.indexOf("### POST /v1/bulk/lists\n")
    const lists = full.slice(start, full.indexOf("\n### ", start + 1))
    expect(lists).toContain("Example request: {\"name\":\"Newsletter\"}")
    expect(lists).toContain("Example response: {\"id\":\"ls_")
    expect(full).toContain("409 `conflict` while a campaign not yet completed uses it")
  })

  it("states the errors every operation can answer once, in each document's description", async () => {
    for (const path of SERVED) {
      const doc = (await app.request("GET", path, { token: null })).json
      expect(doc.info.description).toContain("401 `unauthorized`")
      expect(doc.info.description).toContain("400 `validation_failed`")
    }
  })
})

describe("request examples against a running appliance", () => {
  let sender: Sender
  beforeAll(async () => {
    sender = await newSender(app, dns)
  })

  const exampleOf = async (area: string, path: string, method: string) => {
    const doc = (await app.request("GET", `/openapi/openapi.${area}.json`, { token: null })).json
    return doc.paths[path][method].requestBody.content["application/json"].example
  }

  it.each([
    ["bulk", "/v1/bulk/lists", "post", 201],
    ["bulk", "/v1/bulk/contacts", "post", 201],
    ["bulk", "/v1/bulk/templates", "post", 201],
    ["bulk", "/v1/bulk/templates/preview", "post", 200],
    ["bulk", "/v1/bulk/segments/preview", "post", 200],
    ["bulk", "/v1/bulk/segments", "post", 201],
    ["bulk", "/v1/bulk/sequences", "post", 201],
    ["platform", "/v1/client/keys", "post", 201],
    ["platform", "/v1/client/suppressions", "post", 201],
    ["platform", "/v1/tickets", "post", 201]
  ])("%s %s (%s) is accepted as documented", async (area, path, method, status) => {
    const res = await app.request(method.toUpperCase(), path, { token: sender.token, body: await exampleOf(area, path, method) })
    expect(res.status, res.text).toBe(status)
  })
})

describe("/openapi/openapi.yaml", () => {
  it("is /docs.json (client endpoints only) as YAML, with the deprecated verify alias marked", async () => {
    const yaml = await app.request("GET", "/openapi/openapi.yaml", { token: null })
    expect(yaml.status).toBe(200)
    expect(yaml.headers.get("content-type")).toBe("application/yaml")
    const docs = (await app.request("GET", "/docs.json", { token: null })).json
    const parsed = parse(yaml.text)
    expect(parsed).toEqual(docs)
    expect(Object.keys(parsed.paths).some((p) => p.startsWith("/v1/admin"))).toBe(false)
    expect(parsed.paths["/v1/domains/{domain}/verify"].post.deprecated).toBe(true)
    expect(parsed.paths["/v1/client/domains/{domain}/verify"].post.deprecated).toBeUndefined()
  })
})
