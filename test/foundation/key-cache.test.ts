/**
 * API keys are remembered for a few seconds (src/platform/keys/key-cache.ts), and every change to
 * who a token is empties that memory in every replica: a revocation made in plain SQL, a
 * revocation through another replica, an admin flag taken away. Each check waits at most 2 s,
 * well inside the cache's 10 s time limit: were the change not announced, the old answer would
 * still come back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { sleep } from "../support/net.ts"

let first: Appliance
let second: Appliance

beforeAll(async () => {
  first = await startAppliance()
  // A second replica on the same database, with the same bootstrap key.
  second = await startAppliance({ databaseUrl: first.databaseUrl, bootstrapKey: first.adminToken })
})
afterAll(async () => {
  await second.stop()
  await first.stop()
})

/** The statuses `request` answers until it answers `expected`, for at most 2 s. */
const untilStatus = async (expected: number, request: () => Promise<{ status: number }>) => {
  const seen: Array<number> = []
  const deadline = Date.now() + 2_000
  for (;;) {
    const { status } = await request()
    seen.push(status)
    if (status === expected || Date.now() > deadline) return seen
    await sleep(50)
  }
}

const newKey = async (app: Appliance, label: string) => {
  const res = await app.request("POST", "/v1/client/keys", { body: { label } })
  expect(res.status).toBe(201)
  return res.json as { id: string; token: string }
}

describe("the key cache", () => {
  it("forgets a key revoked in plain SQL: the trigger's NOTIFY reaches the replica", async () => {
    const key = await newKey(first, "sql-revoked")
    // Used (and so remembered) on both replicas.
    expect((await first.request("GET", "/v1/client/keys", { token: key.token })).status).toBe(200)
    expect((await second.request("GET", "/v1/client/keys", { token: key.token })).status).toBe(200)

    await query(first.databaseUrl, "UPDATE api_keys SET revoked_at = now() WHERE id = $1", [key.id])

    const onFirst = await untilStatus(401, () => first.request("GET", "/v1/client/keys", { token: key.token }))
    const onSecond = await untilStatus(401, () => second.request("GET", "/v1/client/keys", { token: key.token }))
    expect(onFirst.at(-1)).toBe(401)
    expect(onSecond.at(-1)).toBe(401)
  })

  it("forgets a key revoked through another replica's API", async () => {
    const key = await newKey(first, "api-revoked")
    expect((await second.request("GET", "/v1/client/keys", { token: key.token })).status).toBe(200)

    const revoked = await first.request("DELETE", `/v1/client/keys/${key.id}`)
    expect(revoked.status).toBe(200)
    // The replica that revoked it refuses it at once.
    expect((await first.request("GET", "/v1/client/keys", { token: key.token })).status).toBe(401)
    const onSecond = await untilStatus(401, () => second.request("GET", "/v1/client/keys", { token: key.token }))
    expect(onSecond.at(-1)).toBe(401)
  })

  it("forgets an account's admin flag when it is taken away", async () => {
    const created = await first.request("POST", "/v1/admin/accounts", {
      body: { name: "Deputy", email: "deputy@example.com", password: "correct horse battery" }
    })
    expect(created.status).toBe(201)
    await query(first.databaseUrl, "UPDATE accounts SET is_admin = true WHERE id = $1", [created.json.id])
    const key = await first.request("POST", `/v1/admin/accounts/${created.json.id}/keys`, { body: { label: "deputy" } })
    const adminList = () => second.request("GET", "/v1/admin/accounts", { token: key.json.token })
    expect((await untilStatus(200, adminList)).at(-1)).toBe(200)

    await query(first.databaseUrl, "UPDATE accounts SET is_admin = false WHERE id = $1", [created.json.id])

    expect((await untilStatus(403, adminList)).at(-1)).toBe(403)
  })
})
