/**
 * /v1/client/keys: creation (token shown once), listing without secrets, reading, renaming,
 * ownership (another account's key → 403, unknown → 404) and revocation taking effect at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"

let app: Appliance
let otherToken: string
let otherKeyId: string

beforeAll(async () => {
  app = await startAppliance()
  const account = await app.request("POST", "/v1/admin/accounts", {
    body: { name: "Other", email: "other@example.com", password: "correct horse battery" }
  })
  const key = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: "other" } })
  otherToken = key.json.token
  otherKeyId = key.json.id
})
afterAll(() => app.stop())

const createKey = async (label: string, token?: string) => {
  const res = await app.request("POST", "/v1/client/keys", { body: { label }, ...(token === undefined ? {} : { token }) })
  expect(res.status).toBe(201)
  return res.json as { id: string; label: string; token: string; created_at: string }
}

describe("creating a key", () => {
  it("answers 201 with id, label, token and created_at, and the token authenticates", async () => {
    const res = await app.request("POST", "/v1/client/keys", { body: { label: "ci" } })
    expect(res.status).toBe(201)
    expect(Object.keys(res.json).sort()).toEqual(["created_at", "id", "label", "token"])
    expect(res.json.label).toBe("ci")
    expect(res.json.token).toMatch(/^hrld_[A-Za-z0-9]{43}$/)
    expect(new Date(res.json.created_at).toISOString()).toBe(res.json.created_at)
    const me = await app.request("GET", `/v1/client/keys/${res.json.id}`, { token: res.json.token })
    expect(me.status).toBe(200)
  })

  it("stores only a digest of the token, never the token itself", async () => {
    const key = await createKey("digest")
    const rows = await query(app.databaseUrl, "SELECT * FROM api_keys WHERE id = $1", [key.id])
    expect(rows).toHaveLength(1)
    expect(JSON.stringify(rows[0])).not.toContain(key.token)
  })

  it("refuses an empty label with 400 naming label", async () => {
    const res = await app.request("POST", "/v1/client/keys", { body: { label: "  " } })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ code: "validation_failed", param: "label" })
  })

  it.each([["NUL", "ci\u0000"], ["a lone surrogate", "ci \uD83D"]])("refuses a label with %s with 400 naming label, creating nothing", async (_, label) => {
    const before = await query(app.databaseUrl, "SELECT count(*)::int AS n FROM api_keys")
    const res = await app.request("POST", "/v1/client/keys", { body: { label } })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param: "label" })
    expect(await query(app.databaseUrl, "SELECT count(*)::int AS n FROM api_keys")).toEqual(before)
  })
})

describe("listing and reading keys", () => {
  it("lists the account's keys without tokens or secrets", async () => {
    const key = await createKey("listed")
    const res = await app.request("GET", "/v1/client/keys")
    expect(res.status).toBe(200)
    const listed = res.json.items.find((k: { id: string }) => k.id === key.id)
    expect(listed).toMatchObject({ id: key.id, label: "listed", token_hint: key.token.slice(-4) })
    for (const item of res.json.items) {
      expect(Object.keys(item)).not.toContain("token")
      expect(Object.keys(item)).not.toContain("webhook_secret")
      expect(Object.keys(item)).not.toContain("token_hash")
    }
    expect(res.text).not.toContain(key.token)
    expect(res.text).not.toContain(app.adminToken)
  })

  it("does not list another account's keys", async () => {
    const res = await app.request("GET", "/v1/client/keys")
    expect(res.json.items.map((k: { id: string }) => k.id)).not.toContain(otherKeyId)
  })

  it("reads one key by id", async () => {
    const key = await createKey("one")
    const res = await app.request("GET", `/v1/client/keys/${key.id}`)
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ id: key.id, label: "one", webhook_url: null, created_at: key.created_at })
    expect(res.json.token).toBeUndefined()
  })
})

describe("renaming a key", () => {
  it("answers {id, label} with the new label, and the listing shows it", async () => {
    const key = await createKey("before")
    const res = await app.request("PATCH", `/v1/client/keys/${key.id}`, { body: { label: "after" } })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ id: key.id, label: "after" })
    expect((await app.request("GET", `/v1/client/keys/${key.id}`)).json.label).toBe("after")
  })

  it.each([
    ["an empty label", { label: "" }],
    ["a blank label", { label: "   " }],
    ["no label", {}],
    ["a label that is not a string", { label: 7 }],
    ["a label with NUL", { label: "a\u0000b" }],
    ["a label with a lone surrogate", { label: "\uDE00" }]
  ])("refuses %s with 400 validation_failed naming label", async (_, body) => {
    const key = await createKey("unchanged")
    const res = await app.request("PATCH", `/v1/client/keys/${key.id}`, { body })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param: "label" })
    expect(res.json.error.message).toContain("label")
    expect((await app.request("GET", `/v1/client/keys/${key.id}`)).json.label).toBe("unchanged")
  })

  it("stores webhook fields given with the label without echoing the secret", async () => {
    const key = await createKey("hooked")
    const res = await app.request("PATCH", `/v1/client/keys/${key.id}`, {
      body: { label: "hooked", webhook_url: "https://93.184.216.34/h", webhook_secret: "s3cret-value-long-enough" }
    })
    expect(res.status).toBe(200)
    const read = await app.request("GET", `/v1/client/keys/${key.id}`)
    expect(read.json.webhook_url).toBe("https://93.184.216.34/h")
    expect(read.text).not.toContain("s3cret-value-long-enough")
  })
})

describe("keys of another account", () => {
  it("answers 403 to GET, PATCH and DELETE of a key linked to another account, and leaves it alone", async () => {
    const get = await app.request("GET", `/v1/client/keys/${otherKeyId}`)
    const patch = await app.request("PATCH", `/v1/client/keys/${otherKeyId}`, { body: { label: "mine now" } })
    const del = await app.request("DELETE", `/v1/client/keys/${otherKeyId}`)
    for (const res of [get, patch, del]) {
      expect(res.status).toBe(403)
      expect(res.json.error).toMatchObject({ type: "permission_error", code: "forbidden" })
    }
    const own = await app.request("GET", `/v1/client/keys/${otherKeyId}`, { token: otherToken })
    expect(own.status).toBe(200)
    expect(own.json.label).toBe("other")
  })

  it("answers 404 for an id no key has", async () => {
    for (const [method, body] of [["GET", undefined], ["PATCH", { label: "x" }], ["DELETE", undefined]] as const) {
      const res = await app.request(method, "/v1/client/keys/key_doesnotexist", body === undefined ? {} : { body })
      expect(res.status).toBe(404)
      expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "not_found" })
    }
  })
})

describe("revoking a key", () => {
  it("stops the token working on the very next request", async () => {
    const key = await createKey("short-lived")
    expect((await app.request("GET", "/v1/client/keys", { token: key.token })).status).toBe(200)
    const res = await app.request("DELETE", `/v1/client/keys/${key.id}`)
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ id: key.id, revoked: true })
    const after = await app.request("GET", "/v1/client/keys", { token: key.token })
    expect(after.status).toBe(401)
    expect(after.json.error.code).toBe("unauthorized")
  })

  it("lets a key revoke itself, after which it is refused", async () => {
    const key = await createKey("self")
    expect((await app.request("DELETE", `/v1/client/keys/${key.id}`, { token: key.token })).status).toBe(200)
    expect((await app.request("GET", "/v1/client/keys", { token: key.token })).status).toBe(401)
  })

  it("removes the key from the listing and answers 404 for it afterwards", async () => {
    const key = await createKey("gone")
    await app.request("DELETE", `/v1/client/keys/${key.id}`)
    const list = await app.request("GET", "/v1/client/keys")
    expect(list.json.items.map((k: { id: string }) => k.id)).not.toContain(key.id)
    expect((await app.request("GET", `/v1/client/keys/${key.id}`)).status).toBe(404)
    expect((await app.request("DELETE", `/v1/client/keys/${key.id}`)).status).toBe(404)
  })
})

describe("the most keys an account may have (HERALD_MAX_KEYS_PER_ACCOUNT)", () => {
  it("refuses a key past the cap with 409 conflict, also when creations race, and frees a place on revocation", async () => {
    // A replica on the same database with a cap of 3: keys are unlimited without it.
    const capped = await startAppliance({ databaseUrl: app.databaseUrl, bootstrapKey: app.adminToken, env: { HERALD_MAX_KEYS_PER_ACCOUNT: "3" } })
    try {
      const account = await capped.request("POST", "/v1/admin/accounts", {
        body: { name: "Many keys", email: "many-keys@example.com", password: "correct horse battery" }
      })
      expect(account.status).toBe(201)
      // Eight creations at once: the count and the insert are not fooled by each other.
      const raced = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        capped.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: `k${i}` } })))
      expect(raced.filter((res) => res.status === 201)).toHaveLength(3)
      for (const refused of raced.filter((res) => res.status !== 201)) {
        expect(refused.status).toBe(409)
        expect(refused.json.error).toMatchObject({ type: "invalid_request_error", code: "conflict" })
        expect(refused.json.error.message).toContain("HERALD_MAX_KEYS_PER_ACCOUNT")
      }
      const mine = raced.find((res) => res.status === 201)!.json as { id: string; token: string }
      const token = mine.token
      const own = await capped.request("POST", "/v1/client/keys", { token, body: { label: "one more" } })
      expect(own.status).toBe(409)
      expect(own.json.error.code).toBe("conflict")
      const listed = await capped.request("GET", "/v1/client/keys", { token })
      expect(listed.json.items).toHaveLength(3)

      // A revoked key does not count.
      const other = listed.json.items.find((k: { id: string }) => k.id !== mine.id)
      expect((await capped.request("DELETE", `/v1/client/keys/${other.id}`, { token })).status).toBe(200)
      expect((await capped.request("POST", "/v1/client/keys", { token, body: { label: "replacement" } })).status).toBe(201)
      expect((await capped.request("POST", "/v1/client/keys", { token, body: { label: "and one more" } })).status).toBe(409)
    } finally {
      await capped.stop()
    }
  })
})
