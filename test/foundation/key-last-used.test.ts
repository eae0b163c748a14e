/**
 * `last_used_at` of a key: set when the key authenticates a request, and kept to the minute (a
 * key used again within 60 s is not written again; one last used longer ago is).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { sleep } from "../support/net.ts"

let app: Appliance
beforeAll(async () => {
  app = await startAppliance()
})
afterAll(() => app.stop())

const lastUsedAt = async (keyId: string): Promise<string | null> => {
  const res = await app.request("GET", `/v1/client/keys/${keyId}`)
  expect(res.status).toBe(200)
  return res.json.last_used_at
}

/** Polls until the key's last_used_at satisfies `ok`, or the deadline passes. */
const waitForLastUsed = async (keyId: string, ok: (value: string | null) => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await lastUsedAt(keyId)
    if (ok(value) || Date.now() > deadline) return value
    await sleep(100)
  }
}

const newKey = async () => {
  const res = await app.request("POST", "/v1/client/keys", { body: { label: "usage" } })
  expect(res.status).toBe(201)
  return res.json as { id: string; token: string }
}

describe("a key's last use", () => {
  it("is null for a new key and set once the key authenticates a request", async () => {
    const key = await newKey()
    expect(await lastUsedAt(key.id)).toBeNull()
    const before = Date.now()
    expect((await app.request("GET", "/v1/client/keys", { token: key.token })).status).toBe(200)
    const used = await waitForLastUsed(key.id, (v) => v !== null)
    expect(used).not.toBeNull()
    expect(new Date(used!).getTime()).toBeGreaterThanOrEqual(before - 1_000)
    expect(new Date(used!).getTime()).toBeLessThanOrEqual(Date.now() + 1_000)
  })

  it("is not rewritten by a use within the minute, and is by a use after it", async () => {
    const key = await newKey()
    const recent = new Date(Date.now() - 10_000)
    await query(app.databaseUrl, "UPDATE api_keys SET last_used_at = $1 WHERE id = $2", [recent, key.id])
    expect((await app.request("GET", "/v1/client/keys", { token: key.token })).status).toBe(200)
    // Give a (wrong) write time to land before reading.
    await sleep(500)
    expect(await lastUsedAt(key.id)).toBe(recent.toISOString())

    // A minute later, as the database tells it: the appliance remembers the key (and when it last
    // recorded its use) for a few seconds, so the edit is announced the way key changes are.
    const old = new Date(Date.now() - 120_000)
    await query(app.databaseUrl, "UPDATE api_keys SET last_used_at = $1 WHERE id = $2", [old, key.id])
    await query(app.databaseUrl, "SELECT pg_notify('herald_keys', '')")
    await sleep(300)
    expect((await app.request("GET", "/v1/client/keys", { token: key.token })).status).toBe(200)
    const refreshed = await waitForLastUsed(key.id, (v) => v !== old.toISOString())
    expect(new Date(refreshed!).getTime()).toBeGreaterThan(old.getTime() + 60_000)
  })
})
