/**
 * The fan-out of outbox events into deliveries, at the store: a key the dispatcher is delivering
 * to gets up to its room of new deliveries leased ahead (oldest first, returned with the body as
 * it will be sent), unless deliveries of that key already wait due — they go first; the rest are
 * due now for any replica to claim; an event of a key without a URL is dispatched with no delivery.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { emitEvent } from "../../src/events/outbox.ts"
import { EmailSent } from "../../src/events/schema.ts"
import { Accounts } from "../../src/platform/accounts/Accounts.ts"
import { ApiKeys } from "../../src/platform/keys/ApiKeys.ts"
import { WebhookEndpoints } from "../../src/webhooks/WebhookEndpoints.ts"
import { WebhookStore } from "../../src/webhooks/WebhookStore.ts"
import { servicesOn } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"

const START = Date.parse("2026-03-02T08:00:00.123Z")
const FIELDS = { request_id: "req_fan", to: ["someone@example.org"], subject: "Hi", message_id: "msg_fan" }

describe("the fan-out", () => {
  it("leases a delivering key's new events ahead up to its room, unless its due deliveries wait", async () => {
    const databaseUrl = await freshDatabase()
    const run = <A, E>(effect: Effect.Effect<A, E, never>) => Effect.runPromise(effect)
    // The endpoints are on this machine: the URL check must allow private addresses.
    const services = servicesOn(databaseUrl, { HERALD_WEBHOOK_ALLOW_PRIVATE: "true" })
    const { fast, backlogged, silent } = await run(Effect.gen(function*() {
      const account = yield* (yield* Accounts).create({ name: "Fan", email: "fan@example.org", password: "long enough pw" })
      const keys = yield* ApiKeys
      const [fast, backlogged, silent] = [yield* keys.create(account.id, "fast"), yield* keys.create(account.id, "backlogged"), yield* keys.create(account.id, "silent")]
      const endpoints = yield* WebhookEndpoints
      yield* endpoints.configure(account.id, fast!.id, { webhook_url: "http://127.0.0.1:9/fast", webhook_secret: "whsec_fan_test_secret_0123456789" })
      yield* endpoints.configure(account.id, backlogged!.id, { webhook_url: "http://127.0.0.1:9/backlogged", webhook_secret: "whsec_fan_test_secret_0123456789" })
      const plan: ReadonlyArray<readonly [string, number]> = [[fast!.id, 3], [backlogged!.id, 2], [silent!.id, 1]]
      let i = 0
      for (const [keyId, n] of plan) {
        for (let k = 0; k < n; k++) {
          yield* emitEvent({ accountId: account.id, keyId, event: EmailSent.make(FIELDS), at: new Date(START + 1000 * i++) })
        }
      }
      return { fast: fast!.id, backlogged: backlogged!.id, silent: silent!.id }
    }).pipe(Effect.provide(services), Effect.scoped))
    // A delivery of `backlogged` already due: its new events must queue behind it.
    await query(databaseUrl, `
      INSERT INTO webhook_deliveries (id, key_id, account_id, event_id, event, payload, next_attempt_at, created_at, updated_at)
      SELECT 'whd_waiting', id, account_id, 'evt_waiting', 'email.sent', '{}', $2, $2, $2 FROM api_keys WHERE id = $1`, [backlogged, new Date(START)])

    const now = new Date(START + 60_000)
    const leaseUntil = new Date(START + 150_000)
    const fanned = await run(Effect.flatMap(WebhookStore, (store) =>
      store.fanOut(now, 200, { owner: "replica-1", leaseUntil, room: new Map([[fast, 2], [backlogged, 5]]) })
    ).pipe(Effect.provide(services), Effect.scoped))

    expect(fanned.events).toBe(6)
    expect(fanned.leased.map((d) => d.key_id)).toEqual([fast, fast])
    const [first] = fanned.leased
    expect(first).toMatchObject({ status: "pending", attempts: 0, webhook_url: "http://127.0.0.1:9/fast", webhook_secret: "whsec_fan_test_secret_0123456789" })
    expect(JSON.parse(first!.body)).toEqual({ id: first!.event_id, event: "email.sent", ts: new Date(START).toISOString(), app: fast, ...FIELDS })

    const rows = await query<{ key_id: string; lease_owner: string | null; next_attempt_at: Date }>(databaseUrl,
      "SELECT w.key_id, w.lease_owner, w.next_attempt_at FROM webhook_deliveries w JOIN events e ON e.id = w.event_id ORDER BY e.created_at")
    const of = (keyId: string) => rows.filter((r) => r.key_id === keyId).map((r) => [r.lease_owner, r.next_attempt_at.getTime()])
    expect(of(fast)).toEqual([["replica-1", leaseUntil.getTime()], ["replica-1", leaseUntil.getTime()], [null, now.getTime()]])
    expect(of(backlogged)).toEqual([[null, now.getTime()], [null, now.getTime()]])
    expect(of(silent)).toEqual([])
    const [undispatched] = await query<{ n: number }>(databaseUrl, "SELECT count(*)::int AS n FROM events WHERE dispatched_at IS NULL")
    expect(undispatched!.n).toBe(0)
  })
})
