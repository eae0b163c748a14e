/**
 * HERALD_BOOTSTRAP_KEY means "this token works": a bootstrap key revoked through the API is
 * reinstated (the same key, not a new one) at the next start.
 */
import { describe, expect, it } from "vitest"
import { startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"

describe("the bootstrap key", () => {
  it("comes back at the next start after it was revoked through the API", async () => {
    const first = await startAppliance()
    const token = first.adminToken
    const keys = await first.request("GET", "/v1/client/keys")
    expect(keys.status).toBe(200)
    const keyId: string = keys.json.items[0].id
    expect((await first.request("DELETE", `/v1/client/keys/${keyId}`)).status).toBe(200)
    expect((await first.request("GET", "/v1/client/keys")).status).toBe(401)
    await first.stop()

    const second = await startAppliance({ databaseUrl: first.databaseUrl, bootstrapKey: token })
    try {
      const again = await second.request("GET", "/v1/client/keys")
      expect(again.status).toBe(200)
      expect(again.json.items.map((k: { id: string }) => k.id)).toEqual([keyId])
      const rows = await query(first.databaseUrl, "SELECT id, revoked_at FROM api_keys")
      expect(rows).toEqual([{ id: keyId, revoked_at: null }])
    } finally {
      await second.stop()
    }
  }, 180_000)
})
