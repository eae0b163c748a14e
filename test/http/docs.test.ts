/**
 * The contract documents, derived from the HttpApi definitions: per-area OpenAPI, the client-only
 * /docs.json, offline reference pages and the llms texts. The committed snapshots under
 * __snapshots__/ make every contract change a visible diff (regenerate with `npx vitest run -u`).
 */
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Schema } from "effect"
import { EVENT_NAMES, receiverBody } from "../../src/events/schema.ts"
import { AuditPage } from "../../src/transactional/audit/Api.ts"
import { decodeSendRequest } from "../../src/transactional/request.ts"
import { SendResponse } from "../../src/transactional/send/Api.ts"
import { KeyView } from "../../src/platform/keys/Api.ts"
import { type Appliance, repoRoot, startAppliance } from "../support/appliance.ts"

let app: Appliance
const version = JSON.parse(fs.readFileSync(`${repoRoot}/package.json`, "utf8")).version

beforeAll(async () => {
  app = await startAppliance()
})
afterAll(() => app.stop())

const get = (path: string) => app.request("GET", path, { token: null })

describe("contract documents", () => {
  it.each(["transactional", "bulk", "platform"])("serves openapi.%s.json versioned with the package", async (area) => {
    const res = await get(`/openapi/openapi.${area}.json`)
    expect(res.status).toBe(200)
    expect(res.json.openapi).toMatch(/^3\.1/)
    expect(res.json.info.version).toBe(version)
    await expect(JSON.stringify(res.json, null, 2)).toMatchFileSnapshot(`./__snapshots__/openapi.${area}.json`)
  })

  it("keeps admin endpoints out of /docs.json but documents them in the platform document", async () => {
    const docs = await get("/docs.json")
    expect(docs.json.info.version).toBe(version)
    const paths = Object.keys(docs.json.paths)
    expect(paths).toContain("/v1/mail/send")
    expect(paths.some((p) => p.startsWith("/v1/admin"))).toBe(false)
    const platform = await get("/openapi/openapi.platform.json")
    expect(Object.keys(platform.json.paths).some((p) => p.startsWith("/v1/admin"))).toBe(true)
    await expect(JSON.stringify(docs.json, null, 2)).toMatchFileSnapshot("./__snapshots__/docs.json")
  })

  it("documents the error envelope on every endpoint", async () => {
    const doc = (await get("/openapi/openapi.transactional.json")).json
    const send = doc.paths["/v1/mail/send"].post
    expect(Object.keys(send.responses)).toEqual(expect.arrayContaining(["202", "400", "401", "403", "409", "413", "429"]))
  })

  it.each(["transactional", "bulk", "platform"])("serves /reference/%s/ with its script inlined (works offline)", async (area) => {
    const res = await get(`/reference/${area}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/html")
    expect(res.text).not.toMatch(/<script[^>]+src="https?:/)
    expect(res.text.length).toBeGreaterThan(100_000)
  })

  it("lists endpoints in /llms.txt and their fields in /llms-full.txt", async () => {
    const index = await get("/llms.txt")
    expect(index.text).toContain("POST /v1/mail/send")
    expect(index.text).toContain("/llms-full.txt")
    const full = await get("/llms-full.txt")
    expect(full.text).toContain("### POST /v1/client/keys")
    expect(full.text).toContain("- label: string (required)")
    expect(full.text).toContain("personalizations")
  })

  it("documents every webhook event in the platform document and /llms-full.txt, each example valid", async () => {
    const platform = (await get("/openapi/openapi.platform.json")).json
    expect(Object.keys(platform.webhooks)).toEqual([...EVENT_NAMES])
    expect(EVENT_NAMES).toHaveLength(18)
    const full = (await get("/llms-full.txt")).text
    for (const name of EVENT_NAMES) {
      const content = platform.webhooks[name].post.requestBody.content["application/json"]
      expect(content.schema.$ref).toBe(`#/components/schemas/event.${name}`)
      const body = platform.components.schemas[`event.${name}`]
      expect(body.required).toEqual(expect.arrayContaining(["id", "event", "ts", "app"]))
      // The example is what a receiver gets: it decodes against the event's own schema.
      expect(Schema.decodeUnknownEither(receiverBody(name))(content.example)._tag).toBe("Right")
      expect(full).toContain(`### ${name}\n`)
      expect(full).toContain(JSON.stringify(content.example))
    }
  })

  /** Every string in `value` is non-empty (a reference page shows "" for a string with no example). */
  const strings = (value: unknown): Array<string> =>
    typeof value === "string" ? [value] : typeof value === "object" && value !== null ? Object.values(value).flatMap(strings) : []

  it("shows real examples on the reference pages: a working send (both forms) and its answer, the key list, the audit list", async () => {
    const transactional = (await get("/openapi/openapi.transactional.json")).json
    const platform = (await get("/openapi/openapi.platform.json")).json
    const schemas = transactional.components.schemas
    const send = transactional.paths["/v1/mail/send"].post
    const examples = {
      full: schemas.SendRequest.examples?.[0],
      flat: schemas.FlatSendRequest.examples?.[0],
      accepted: send.responses["202"].content["application/json"].schema.examples?.[0],
      keys: platform.paths["/v1/client/keys"].get.responses["200"].content["application/json"].schema.examples?.[0],
      audit: schemas.AuditPage.examples?.[0]
    }
    for (const [name, example] of Object.entries(examples)) {
      expect(example, name).toBeDefined()
      expect(strings(example).length, name).toBeGreaterThan(3)
      expect(strings(example).filter((s) => s === ""), name).toEqual([])
    }
    // Each example is what the endpoint takes or answers: it decodes against the endpoint's own schema.
    expect(decodeSendRequest(examples.full, { maxRequestRecipients: 10_000 })).toMatchObject({ _tag: "Right", right: { form: "full" } })
    expect(decodeSendRequest(examples.flat, { maxRequestRecipients: 10_000 })).toMatchObject({ _tag: "Right", right: { form: "flat" } })
    expect(Schema.decodeUnknownEither(SendResponse)(examples.accepted)._tag).toBe("Right")
    expect(Schema.decodeUnknownEither(Schema.Struct({ items: Schema.Array(KeyView) }))(examples.keys)._tag).toBe("Right")
    expect(Schema.decodeUnknownEither(AuditPage)(examples.audit)._tag).toBe("Right")
    // Both address forms and both send_at forms are documented.
    const from = schemas.SendRequest.properties.from.anyOf
    expect(from).toEqual([{ $ref: "#/components/schemas/Address" }, { $ref: "#/components/schemas/AddressString" }])
    expect(schemas.AddressString).toMatchObject({ type: "string", examples: expect.arrayContaining(["ada@example.org"]) })
    expect(schemas.SendRequest.properties.send_at.anyOf.map((s: { type: string }) => s.type)).toEqual(["string", "integer"])
  })
})
