/** Authentication and API keys: 401s in the envelope, public paths, the key lifecycle, admin accounts. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"

let app: Appliance
beforeAll(async () => {
  app = await startAppliance({ env: { MAX_JSON_MB: "1" } })
})
afterAll(() => app.stop())

const newAccount = async (email: string, extra: Record<string, unknown> = {}) => {
  const account = await app.request("POST", "/v1/admin/accounts", { body: { name: "Customer", email, password: "long enough pw", ...extra } })
  expect(account.status).toBe(201)
  const key = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: "first" } })
  expect(key.status).toBe(201)
  return { account: account.json, key: key.json }
}

describe("authentication", () => {
  it.each([
    ["no Authorization header", {}],
    ["another scheme", { authorization: "Basic dXNlcjpwdw==" }],
    ["an unknown token", { authorization: "Bearer hrld_unknownunknownunknownunknown" }],
    ["an empty bearer", { authorization: "Bearer " }]
  ])("answers %s with 401 in the envelope", async (_name, headers) => {
    const res = await app.request("GET", "/v1/client/keys", { token: null, headers })
    expect(res.status).toBe(401)
    expect(res.json).toEqual({ error: { type: "authentication_error", code: "unauthorized", message: expect.any(String) } })
  })

  it.each(["/version", "/health", "/docs.json", "/openapi/openapi.platform.json", "/reference/transactional/", "/llms.txt", "/llms-full.txt"])(
    "serves %s without a key",
    async (path) => {
      expect((await app.request("GET", path, { token: null })).status).toBe(200)
    }
  )
})

describe("API keys", () => {
  it("creates a key whose token is shown once and works at once", async () => {
    const created = await app.request("POST", "/v1/client/keys", { body: { label: "deploy" } })
    expect(created.status).toBe(201)
    expect(created.json).toEqual({ id: expect.stringMatching(/^key_/), label: "deploy", token: expect.stringMatching(/^hrld_/), created_at: expect.any(String) })
    expect((await app.request("GET", "/v1/client/keys", { token: created.json.token })).status).toBe(200)
    const stored = await query(app.databaseUrl, "SELECT token_hash FROM api_keys WHERE id = $1", [created.json.id])
    expect(JSON.stringify(stored)).not.toContain(created.json.token)
  })

  it("lists and reads keys without tokens or secrets", async () => {
    const list = await app.request("GET", "/v1/client/keys")
    expect(list.json.items.length).toBeGreaterThan(0)
    expect(list.text).not.toMatch(/"token"|webhook_secret/)
    const one = await app.request("GET", `/v1/client/keys/${list.json.items[0].id}`)
    expect(one.json).toMatchObject({ id: list.json.items[0].id, label: expect.any(String) })
    expect(one.json.token).toBeUndefined()
  })

  it("renames a key, and refuses a missing or empty label with 400 naming label", async () => {
    const created = await app.request("POST", "/v1/client/keys", { body: { label: "old" } })
    const renamed = await app.request("PATCH", `/v1/client/keys/${created.json.id}`, { body: { label: "new" } })
    expect(renamed.json).toEqual({ id: created.json.id, label: "new" })
    for (const body of [{}, { label: "" }, { label: "   " }]) {
      const res = await app.request("PATCH", `/v1/client/keys/${created.json.id}`, { body })
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ code: "validation_failed", param: "label" })
    }
    expect((await app.request("GET", `/v1/client/keys/key_doesnotexist00000000`)).status).toBe(404)
  })

  it("answers 403 for another account's key", async () => {
    const { key } = await newAccount("other-key-owner@example.org")
    for (const [method, body] of [["GET", undefined], ["PATCH", { label: "x" }], ["DELETE", undefined]] as const) {
      const res = await app.request(method, `/v1/client/keys/${key.id}`, body === undefined ? {} : { body })
      expect(res.status).toBe(403)
      expect(res.json.error.type).toBe("permission_error")
    }
  })

  it("revokes a key: its token gets 401 on the very next request", async () => {
    const created = await app.request("POST", "/v1/client/keys", { body: { label: "short-lived" } })
    expect((await app.request("DELETE", `/v1/client/keys/${created.json.id}`)).json).toEqual({ id: created.json.id, revoked: true })
    expect((await app.request("GET", "/v1/client/keys", { token: created.json.token })).status).toBe(401)
  })
})

describe("admin accounts", () => {
  it("creates accounts without a plan, refuses duplicates and bad emails, and issues keys for them", async () => {
    const { account, key } = await newAccount("plain@example.org")
    expect(account).toMatchObject({ email: "plain@example.org", is_admin: false, package_id: null })
    const mine = await app.request("GET", "/v1/client/keys", { token: key.token })
    expect(mine.json.items.map((k: { id: string }) => k.id)).toEqual([key.id])
    expect((await app.request("POST", "/v1/admin/accounts", { body: { name: "x", email: "PLAIN@example.org", password: "long enough pw" } })).status).toBe(409)
    const bad = await app.request("POST", "/v1/admin/accounts", { body: { name: "x", email: "nope", password: "long enough pw" } })
    expect(bad.json.error.param).toBe("email")
    expect((await app.request("POST", "/v1/admin/accounts", { token: key.token, body: { name: "x", email: "y@example.org", password: "long enough pw" } })).status).toBe(403)
    expect((await app.request("POST", `/v1/admin/accounts/${account.id}/keys`, { token: key.token, body: { label: "x" } })).status).toBe(403)
  })
})

describe("the error envelope", () => {
  it("answers unknown routes with 404 in the envelope", async () => {
    const res = await app.request("GET", "/v1/nothing/here")
    expect(res.status).toBe(404)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "not_found" })
  })

  it("answers a body over MAX_JSON_MB with 413 payload_too_large before reading it", async () => {
    const res = await app.request("POST", "/v1/client/keys", { rawBody: JSON.stringify({ label: "x".repeat(1024 * 1024) }) })
    expect(res.status).toBe(413)
    expect(res.json.error).toMatchObject({ code: "payload_too_large" })
  })

  it("answers malformed JSON with 400 invalid_json and a message", async () => {
    const res = await app.request("POST", "/v1/client/keys", { rawBody: "{\"label\": " })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe("invalid_json")
    expect(res.json.error.message.length).toBeGreaterThan(10)
  })
})
