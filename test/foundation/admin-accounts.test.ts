/**
 * The admin endpoints of the foundation: creating accounts and keys for them. Admin keys only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"

let app: Appliance
beforeAll(async () => {
  app = await startAppliance()
})
afterAll(() => app.stop())

let seq = 0
const newAccount = async (extra: Record<string, unknown> = {}) => {
  seq += 1
  const res = await app.request("POST", "/v1/admin/accounts", {
    body: { name: `Customer ${seq}`, email: `customer${seq}@example.com`, password: "long enough password", ...extra }
  })
  return res
}

describe("POST /v1/admin/accounts", () => {
  it("creates an account without a plan: 201 with its id and package_id null", async () => {
    const res = await newAccount()
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject({
      id: expect.any(String),
      name: `Customer ${seq}`,
      email: `customer${seq}@example.com`,
      is_admin: false,
      status: "active",
      package_id: null
    })
    expect(res.json.password).toBeUndefined()
    expect(res.text).not.toContain("long enough password")
  })

  it("stores the password as a slow hash, never in clear", async () => {
    const res = await newAccount({ password: "another fine password" })
    const rows = await query<{ password_hash: string }>(app.databaseUrl, "SELECT password_hash FROM accounts WHERE id = $1", [res.json.id])
    expect(rows[0]?.password_hash).not.toContain("another fine password")
    expect(rows[0]?.password_hash).toMatch(/scrypt|argon2/i)
  })

  it("puts the account on the plan named by package_id", async () => {
    const plans = await app.request("GET", "/v1/client/plans")
    const packageId = plans.json.items?.[0]?.id ?? plans.json[0]?.id
    expect(typeof packageId).toBe("string")
    const res = await newAccount({ package_id: packageId })
    expect(res.status).toBe(201)
    expect(res.json.package_id).toBe(packageId)
  })

  it("answers 409 for an email that an account already has, in any letter case", async () => {
    const first = await newAccount()
    const again = await app.request("POST", "/v1/admin/accounts", {
      body: { name: "Again", email: first.json.email.toUpperCase(), password: "long enough password" }
    })
    expect(again.status).toBe(409)
    expect(again.json.error).toMatchObject({ type: "invalid_request_error", message: expect.stringContaining("email") })
  })

  it("answers 400 naming email for an address that is not one", async () => {
    const res = await app.request("POST", "/v1/admin/accounts", {
      body: { name: "Bad", email: "not-an-address", password: "long enough password" }
    })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param: "email" })
  })

  it("answers 400 naming the missing field", async () => {
    const res = await app.request("POST", "/v1/admin/accounts", { body: { email: "x@example.com", password: "long enough password" } })
    expect(res.status).toBe(400)
    expect(res.json.error.param).toBe("name")
  })
})

describe("POST /v1/admin/accounts/{id}/keys", () => {
  it("creates a key for that account: 201 with a token that works and belongs to it", async () => {
    const account = await newAccount()
    const res = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: "first" } })
    expect(res.status).toBe(201)
    expect(res.json).toMatchObject({ id: expect.any(String), label: "first", token: expect.stringMatching(/^hrld_/) })
    const theirs = await app.request("GET", "/v1/client/keys", { token: res.json.token })
    expect(theirs.status).toBe(200)
    expect(theirs.json.items.map((k: { id: string }) => k.id)).toEqual([res.json.id])
    const admins = await app.request("GET", "/v1/client/keys")
    expect(admins.json.items.map((k: { id: string }) => k.id)).not.toContain(res.json.id)
    const rows = await query<{ account_id: string }>(app.databaseUrl, "SELECT account_id FROM api_keys WHERE id = $1", [res.json.id])
    expect(rows[0]?.account_id).toBe(account.json.id)
  })

  it("answers 404 for an account that does not exist", async () => {
    const res = await app.request("POST", "/v1/admin/accounts/acc_missing/keys", { body: { label: "x" } })
    expect(res.status).toBe(404)
    expect(res.json.error.code).toBe("not_found")
  })
})

describe("admin endpoints with a non-admin key", () => {
  it("answers 403 to both, and creates nothing", async () => {
    const account = await newAccount()
    const key = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: "customer" } })
    const token: string = key.json.token
    const create = await app.request("POST", "/v1/admin/accounts", {
      token,
      body: { name: "Sneaky", email: "sneaky@example.com", password: "long enough password" }
    })
    const keyForAdmin = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { token, body: { label: "x" } })
    for (const res of [create, keyForAdmin]) {
      expect(res.status).toBe(403)
      expect(res.json.error).toMatchObject({ type: "permission_error", code: "forbidden", message: expect.any(String) })
    }
    expect(await query(app.databaseUrl, "SELECT 1 FROM accounts WHERE email = 'sneaky@example.com'")).toHaveLength(0)
    const keys = await app.request("GET", "/v1/client/keys", { token })
    expect(keys.json.items).toHaveLength(1)
  })
})
