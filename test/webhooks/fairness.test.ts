/**
 * One bad receiver must not starve the others: a key whose receiver hangs (each attempt cut at
 * 10 s) and a key whose receiver answers 500 (each delivery in its 25 s burst) both have many
 * events waiting, yet a healthy key's events arrive at once; and the bad keys hold at most
 * PER_KEY deliveries each, the rest of their work waiting in the database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PER_KEY } from "../../src/webhooks/Dispatcher.ts"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type Receiver, startReceiver } from "./receiver.ts"

let app: Appliance
const receivers: Record<"hanging" | "dead" | "healthy", Receiver> = {} as never
const keys: Record<string, { keyId: string; accountId: string }> = {}

beforeAll(async () => {
  receivers.hanging = await startReceiver("hang")
  receivers.dead = await startReceiver(500)
  receivers.healthy = await startReceiver(200)
  app = await startAppliance({ env: { HERALD_WEBHOOK_ALLOW_PRIVATE: "true" } })
  for (const name of ["hanging", "dead", "healthy"] as const) {
    const account = await app.request("POST", "/v1/admin/accounts", {
      body: { name, email: `${name}-${Date.now()}@customers.test`, password: "correct horse battery" }
    })
    const key = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: name } })
    const set = await app.request("PATCH", `/v1/client/keys/${key.json.id}`, { token: key.json.token, body: { label: name, webhook_url: receivers[name].url() } })
    expect(set.status).toBe(200)
    keys[name] = { keyId: key.json.id, accountId: account.json.id }
  }
})
afterAll(async () => {
  await app.stop()
  for (const r of Object.values(receivers)) await r.close()
})

/** `n` email.sent events of `name`'s key written to the outbox, as the MTA writes them. */
const emit = (name: string, n: number) =>
  query(app.databaseUrl, `
    INSERT INTO events (id, account_id, key_id, event, payload, created_at)
    SELECT 'evt_' || $3 || '_' || i, $1, $2, 'email.sent', jsonb_build_object('to', jsonb_build_array('rcpt' || i || '@example.org')), now()
    FROM generate_series(1, $4) AS i`, [keys[name]!.accountId, keys[name]!.keyId, name, n])

describe("the dispatcher's fairness", () => {
  it("delivers a healthy key's events promptly while other keys' receivers hang or fail", async () => {
    // More than the dispatcher's 32 slots of work for each bad key, queued first.
    await emit("hanging", 40)
    await emit("dead", 40)
    await receivers.hanging.waitFor(PER_KEY)
    await receivers.dead.waitFor(PER_KEY)
    const started = Date.now()
    await emit("healthy", 20)
    await receivers.healthy.waitFor(20, () => true, 9_000)
    // Without the per-key cap the slots would be held for 10 s (hanging) or 25 s (bursts); the
    // margin is for a loaded machine (unloaded: well under a second).
    expect(Date.now() - started).toBeLessThan(8_000)
    // The bad keys each hold at most PER_KEY deliveries (bursts included): their receivers have seen only those.
    const distinct = (r: Receiver) => new Set(r.hits.map((h) => h.headers["x-herald-event-id"])).size
    expect(distinct(receivers.hanging)).toBe(PER_KEY)
    expect(distinct(receivers.dead)).toBe(PER_KEY)
    const waiting = await query<{ key_id: string; n: number }>(app.databaseUrl,
      "SELECT key_id, count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND attempts = 0 AND lease_owner IS NULL GROUP BY key_id")
    expect(waiting.find((w) => w.key_id === keys["hanging"]!.keyId)?.n).toBe(40 - PER_KEY)
    expect(waiting.find((w) => w.key_id === keys["dead"]!.keyId)?.n).toBe(40 - PER_KEY)
  }, 30_000)
})
