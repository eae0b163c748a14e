/**
 * Several replicas on one database share the webhook work through leased claims: two appliances
 * (separate processes) and a few hundred events → every event reaches the receiver exactly once,
 * with one attempt on record each.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApplianceProcess, spawnAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type Receiver, startReceiver } from "./receiver.ts"

const N = 300

let first: ApplianceProcess
let second: ApplianceProcess
let receiver: Receiver

beforeAll(async () => {
  receiver = await startReceiver(200)
  const env = { HERALD_WEBHOOK_ALLOW_PRIVATE: "true" }
  first = await spawnAppliance({ env })
  second = await spawnAppliance({ env, databaseUrl: first.databaseUrl, bootstrapKey: first.adminToken })
}, 180_000)
afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop()])
  await receiver?.close()
})

describe("two replicas of the dispatcher", () => {
  it("deliver each of N events exactly once", async () => {
    const keys = await first.request("GET", "/v1/client/keys")
    const key = keys.json.items[0]
    const set = await second.request("PATCH", `/v1/client/keys/${key.id}`, { body: { label: "replicas", webhook_url: receiver.url() } })
    expect(set.status).toBe(200)
    const [owner] = await query<{ account_id: string }>(first.databaseUrl, "SELECT account_id FROM api_keys WHERE id = $1", [key.id])
    // The events, as the MTA writes them, in a few batches while both replicas poll.
    for (let batch = 0; batch < 3; batch++) {
      await query(first.databaseUrl, `
        INSERT INTO events (id, account_id, key_id, event, payload, created_at)
        SELECT 'evt_rep_' || ($3 * 1000 + i), $1, $2, 'email.sent', jsonb_build_object('to', jsonb_build_array('r' || i || '@example.org')), now()
        FROM generate_series(1, $4) AS i`, [owner!.account_id, key.id, batch, N / 3])
    }
    await eventually(async () => {
      const [row] = await query<{ n: number }>(first.databaseUrl, "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'")
      return row!.n === N ? true : undefined
    }, `${N} deliveries delivered`, 60_000)

    const ids = receiver.hits.map((h) => String(h.headers["x-herald-event-id"]))
    expect(new Set(ids).size).toBe(N)
    expect(ids).toHaveLength(N)
    const [counts] = await query<{ deliveries: number; attempts: number; events: number }>(first.databaseUrl, `
      SELECT (SELECT count(*)::int FROM webhook_deliveries) AS deliveries,
             (SELECT count(*)::int FROM webhook_attempts) AS attempts,
             (SELECT count(*)::int FROM events WHERE dispatched_at IS NOT NULL) AS events`)
    expect(counts).toEqual({ deliveries: N, attempts: N, events: N })
  }, 90_000)
})
