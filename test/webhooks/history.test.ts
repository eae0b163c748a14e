/**
 * The delivery history and manual retries through the API: default and maximum limits, status
 * filters that really filter, offsets, who may see what (another account's endpoint answers 403
 * like its key; unknown ids 404), manual retries that do not move a delivery along the ladder,
 * and the webhook_secret rule of PATCH /v1/client/keys/{id}.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type Receiver, startReceiver } from "./receiver.ts"

let app: Appliance
let receiver: Receiver
let owner: { token: string; keyId: string; accountId: string }
let stranger: { token: string; keyId: string; accountId: string }

const newHolder = async (name: string) => {
  const account = await app.request("POST", "/v1/admin/accounts", {
    body: { name, email: `${name.toLowerCase()}-${Date.now()}@customers.test`, password: "correct horse battery" }
  })
  const key = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: "hooks" } })
  return { token: key.json.token as string, keyId: key.json.id as string, accountId: account.json.id as string }
}

/** Deliveries written straight into the table, in the given states (pending ones due in a day). */
const seed = async (keyId: string, accountId: string, states: ReadonlyArray<"pending" | "delivered" | "failed">, attempts = 1) => {
  const rows = await query<{ id: string }>(app.databaseUrl, `
    WITH s AS (SELECT status, i, replace(gen_random_uuid()::text, '-', '') AS uuid FROM unnest($3::text[]) WITH ORDINALITY AS u(status, i))
    INSERT INTO webhook_deliveries (id, key_id, account_id, event_id, event, payload, status, attempts, next_attempt_at, created_at, updated_at)
    SELECT 'whd_' || s.uuid, $1, $2, 'evt_' || s.uuid, 'email.sent', jsonb_build_object('id', 'evt_' || s.uuid, 'event', 'email.sent'),
      s.status, $4, now() + interval '1 day', now() - (s.i || ' seconds')::interval, now()
    FROM s ORDER BY s.i RETURNING id`, [keyId, accountId, states, attempts])
  return rows.map((r) => r.id)
}

beforeAll(async () => {
  receiver = await startReceiver(200)
  app = await startAppliance({ env: { HERALD_WEBHOOK_ALLOW_PRIVATE: "true" } })
  owner = await newHolder("Owner")
  stranger = await newHolder("Stranger")
  const set = await app.request("PATCH", `/v1/client/keys/${owner.keyId}`, { token: owner.token, body: { label: "hooks", webhook_url: receiver.url() } })
  expect(set.status).toBe(200)
  await seed(owner.keyId, owner.accountId, [
    ...Array<"pending">(20).fill("pending"), ...Array<"delivered">(25).fill("delivered"), ...Array<"failed">(15).fill("failed")
  ])
})
afterAll(async () => {
  await app.stop()
  await receiver.close()
})

describe.each([
  ["keys", (id: string) => `/v1/client/keys/${id}/webhook/deliveries`],
  ["webhook-endpoints", (id: string) => `/v1/client/webhook-endpoints/${id}/deliveries`]
])("the delivery list under /v1/client/%s", (_name, base) => {
  it("answers 50 items by default and at most 200", async () => {
    const all = await app.request("GET", base(owner.keyId), { token: owner.token })
    expect(all.status).toBe(200)
    expect(all.json.total).toBe(60)
    expect(all.json.items).toHaveLength(50)
    expect((await app.request("GET", `${base(owner.keyId)}?limit=200`, { token: owner.token })).json.items).toHaveLength(60)
    for (const limit of ["201", "0", "abc"]) {
      const res = await app.request("GET", `${base(owner.keyId)}?limit=${limit}`, { token: owner.token })
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ code: "validation_failed", param: "limit" })
    }
  })

  it.each([["pending", 20], ["delivered", 25], ["failed", 15]] as const)("filters status=%s", async (status, n) => {
    const res = await app.request("GET", `${base(owner.keyId)}?status=${status}&limit=200`, { token: owner.token })
    expect(res.json.total).toBe(n)
    expect(res.json.items).toHaveLength(n)
    expect(res.json.items.every((d: { status: string }) => d.status === status)).toBe(true)
    expect((await app.request("GET", `${base(owner.keyId)}?status=bogus`, { token: owner.token })).status).toBe(400)
  })

  it("pages with offset, newest first", async () => {
    const page = await app.request("GET", `${base(owner.keyId)}?limit=10&offset=55`, { token: owner.token })
    expect(page.json.total).toBe(60)
    expect(page.json.items).toHaveLength(5)
    const all = await app.request("GET", `${base(owner.keyId)}?limit=200`, { token: owner.token })
    const times = all.json.items.map((d: { created_at: string }) => Date.parse(d.created_at))
    expect(times).toEqual([...times].sort((a, b) => b - a))
  })

  it("answers 403 for another account's endpoint (its id is a key id) and 404 for unknown ids", async () => {
    const [one] = (await app.request("GET", `${base(owner.keyId)}?limit=1`, { token: owner.token })).json.items
    for (const [method, route] of [["GET", base(owner.keyId)], ["GET", `${base(owner.keyId)}/${one.id}`], ["POST", `${base(owner.keyId)}/${one.id}/retry`]] as const) {
      const res = await app.request(method, route, { token: stranger.token })
      expect(res.status, `${method} ${route}`).toBe(403)
      expect(res.json.error.code).toBe("forbidden")
    }
    expect((await app.request("GET", base("key_nope"), { token: owner.token })).status).toBe(404)
    expect((await app.request("GET", `${base(owner.keyId)}/whd_nope`, { token: owner.token })).status).toBe(404)
    expect((await app.request("POST", `${base(owner.keyId)}/whd_nope/retry`, { token: owner.token })).status).toBe(404)
    // Another account's delivery id under your own endpoint looks unknown.
    const [theirs] = await seed(stranger.keyId, stranger.accountId, ["delivered"])
    expect((await app.request("GET", `${base(owner.keyId)}/${theirs}`, { token: owner.token })).status).toBe(404)
  })
})

describe("manual retries", () => {
  const state = async (id: string) =>
    (await query<{ status: string; attempts: number; next_attempt_at: Date }>(app.databaseUrl,
      "SELECT status, attempts, next_attempt_at FROM webhook_deliveries WHERE id = $1", [id]))[0]!

  it("make one attempt inline; a failure keeps a pending delivery where the ladder had it", async () => {
    const [id] = await seed(owner.keyId, owner.accountId, ["pending"], 5)
    const before = await state(id!)
    receiver.mode = 503
    const res = await app.request("POST", `/v1/client/keys/${owner.keyId}/webhook/deliveries/${id}/retry`, { token: owner.token })
    receiver.mode = 200
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ delivery_id: id, status: "pending", http_code: 503, error: "HTTP 503" })
    expect(res.json.duration_ms).toBeGreaterThanOrEqual(0)
    const after = await state(id!)
    expect(after).toEqual(before) // still attempt 5 of the ladder, its next attempt when it was due
    const detail = await app.request("GET", `/v1/client/keys/${owner.keyId}/webhook/deliveries/${id}`, { token: owner.token })
    expect(detail.json).toMatchObject({ status: "pending", http_code: 503, attempts: 1, response_body: "broken" })
    expect(detail.json.next_attempt_at).toBe(before.next_attempt_at.toISOString())
  })

  it("record a refusal by the receiver as its HTTP status (401), in the answer and in the history", async () => {
    const [id] = await seed(owner.keyId, owner.accountId, ["pending"])
    receiver.mode = 401
    const res = await app.request("POST", `/v1/client/keys/${owner.keyId}/webhook/deliveries/${id}/retry`, { token: owner.token })
    receiver.mode = 200
    expect(res.json).toMatchObject({ delivery_id: id, http_code: 401, error: "HTTP 401" })
    const detail = await app.request("GET", `/v1/client/keys/${owner.keyId}/webhook/deliveries/${id}`, { token: owner.token })
    expect(detail.json).toMatchObject({ http_code: 401, error: "HTTP 401", response_body: "broken" })
  })

  it("leave a dead letter dead on failure, and deliver it on success", async () => {
    const [id] = await seed(owner.keyId, owner.accountId, ["failed"], 11)
    receiver.mode = 500
    const failed = await app.request("POST", `/v1/client/webhook-endpoints/${owner.keyId}/deliveries/${id}/retry`, { token: owner.token })
    receiver.mode = 200
    expect(failed.json).toMatchObject({ delivery_id: id, status: "failed", http_code: 500 })
    const ok = await app.request("POST", `/v1/client/webhook-endpoints/${owner.keyId}/deliveries/${id}/retry`, { token: owner.token })
    expect(ok.json).toMatchObject({ delivery_id: id, status: "delivered", http_code: 200, error: null })
    expect(receiver.hits.filter((h) => h.headers["x-herald-event-id"] === id!.replace("whd_", "evt_"))).toHaveLength(2)
    expect(await state(id!)).toMatchObject({ status: "delivered", attempts: 11 })
  })

  it("answer 409 while an attempt of the delivery is running", async () => {
    const [id] = await seed(owner.keyId, owner.accountId, ["pending"])
    await query(app.databaseUrl, "UPDATE webhook_deliveries SET lease_owner = 'elsewhere' WHERE id = $1", [id])
    const res = await app.request("POST", `/v1/client/keys/${owner.keyId}/webhook/deliveries/${id}/retry`, { token: owner.token })
    expect(res.status).toBe(409)
    expect(res.json.error.code).toBe("conflict")
  })
})

describe("webhook_secret on PATCH /v1/client/keys/{id}", () => {
  it.each(["", "short", "x".repeat(15), "y".repeat(257)])("refuses %j", async (secret) => {
    const res = await app.request("PATCH", `/v1/client/keys/${owner.keyId}`, { token: owner.token, body: { label: "hooks", webhook_url: receiver.url(), webhook_secret: secret } })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param: "webhook_secret" })
  })

  it("accepts 16 characters and more, and signs with that secret", async () => {
    const secret = "my-own-secret-16"
    const res = await app.request("PATCH", `/v1/client/keys/${owner.keyId}`, { token: owner.token, body: { label: "hooks", webhook_url: receiver.url(), webhook_secret: secret } })
    expect(res.status).toBe(200)
    expect(res.json.webhook_secret).toBeUndefined()
    const view = await app.request("GET", `/v1/client/keys/${owner.keyId}/webhook`, { token: owner.token })
    expect(view.json.secret_masked).toBe(`whsec_••••••••${secret.slice(-4)}`)
  })
})
