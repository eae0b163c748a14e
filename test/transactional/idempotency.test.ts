/**
 * Idempotency-Key on POST /v1/mail/send, over HTTP: the stored 202 is exactly what was answered
 * (both request forms), nothing is sent twice, another body conflicts, sandbox ignores the key,
 * a record older than 24 h is not replayed, and an over-long key gets the send endpoint's 400.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Appliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type Sender, type SendingApp, sendBody, startSendingApp } from "../support/sending.ts"

let app: Appliance
let sender: Sender
let setup: SendingApp

beforeAll(async () => {
  setup = await startSendingApp()
  ;({ app, sender } = setup)
})
afterAll(() => setup.stop())

const send = (body: unknown, headers: Record<string, string> = {}) =>
  app.request("POST", "/v1/mail/send", { token: sender.token, body, headers })

const deliveriesTo = async (recipient: string) =>
  (await query<{ n: number }>(app.databaseUrl, "SELECT count(*)::int AS n FROM deliveries WHERE recipient = $1", [recipient]))[0]!.n

const flatBody = (to: string) => ({ from: { email: sender.from }, to: [{ email: to }], subject: "Flat", text: "Hello", html: "<p>Hello</p>" })

describe("Idempotency-Key", () => {
  it("replays the stored response of a full-form send for the same key and body, sending nothing twice", async () => {
    const body = sendBody(sender, "idem@example.org")
    const first = await send(body, { "Idempotency-Key": "k-1" })
    expect(first.status).toBe(202)
    const again = await send(body, { "Idempotency-Key": "k-1" })
    expect(again.status).toBe(202)
    expect(again.json).toEqual(first.json)
    expect(await deliveriesTo("idem@example.org")).toBe(1)
  })

  it("replays a flat-form send with its top-level message_id, identical to the first answer", async () => {
    const body = flatBody("idem-flat@example.org")
    const first = await send(body, { "Idempotency-Key": "k-flat" })
    expect(first.status).toBe(202)
    expect(first.json.message_id).toBe(first.json.items[0].message_id)
    const again = await send(body, { "Idempotency-Key": "k-flat" })
    expect(again.status).toBe(202)
    expect(again.json).toEqual(first.json)
    expect(await deliveriesTo("idem-flat@example.org")).toBe(1)
  })

  it("replays byte for byte what was first answered (full, flat and scheduled sends), content type included", async () => {
    const bodies = [
      sendBody(sender, "idem-bytes@example.org"),
      flatBody("idem-bytes-flat@example.org"),
      sendBody(sender, "idem-bytes-later@example.org", { send_at: new Date(Date.now() + 3_600_000).toISOString() })
    ]
    for (const [i, body] of bodies.entries()) {
      const first = await send(body, { "Idempotency-Key": `k-bytes-${i}` })
      expect(first.status).toBe(202)
      const again = await send(body, { "Idempotency-Key": `k-bytes-${i}` })
      expect(again.status).toBe(202)
      expect(again.text).toBe(first.text)
      expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"))
    }
  })

  it("replays a record stored before the text was kept (a jsonb object) in the first answer's order", async () => {
    const body = sendBody(sender, "idem-legacy@example.org")
    const first = await send(body, { "Idempotency-Key": "k-legacy" })
    // What an earlier version stored: the answer as a jsonb object, its keys reordered by jsonb.
    await query(app.databaseUrl,
      "UPDATE idempotency_keys SET response = (response #>> '{}')::jsonb WHERE key_id = $1 AND idempotency_key = 'k-legacy'",
      [sender.keyId])
    const again = await send(body, { "Idempotency-Key": "k-legacy" })
    expect(again.status).toBe(202)
    expect(again.text).toBe(first.text)
    expect(await deliveriesTo("idem-legacy@example.org")).toBe(1)
  })

  it("answers 409 idempotency_key_reused for the same key with another body", async () => {
    await send(sendBody(sender, "idem2@example.org"), { "Idempotency-Key": "k-2" })
    const other = await send(sendBody(sender, "other@example.org"), { "Idempotency-Key": "k-2" })
    expect(other.status).toBe(409)
    expect(other.json.error).toMatchObject({ type: "idempotency_error", code: "idempotency_key_reused" })
  })

  it("is neither stored nor read by sandbox requests", async () => {
    const body = sendBody(sender, "idem3@example.org")
    const sandbox = await send(body, { "Idempotency-Key": "k-3", "X-Herald-Test": "1" })
    expect(sandbox.json.sandbox).toBe(true)
    const real = await send(body, { "Idempotency-Key": "k-3" })
    expect(real.json.sandbox).toBe(false)
    const sandboxAgain = await send(body, { "Idempotency-Key": "k-3", "X-Herald-Test": "1" })
    expect(sandboxAgain.json.sandbox).toBe(true)
    expect(sandboxAgain.json.items[0].message_id).not.toBe(real.json.items[0].message_id)
  })

  it("does not replay a record older than 24 hours: the same key and body send again", async () => {
    const body = sendBody(sender, "idem-old@example.org")
    const first = await send(body, { "Idempotency-Key": "k-old" })
    expect(first.status).toBe(202)
    await query(app.databaseUrl,
      "UPDATE idempotency_keys SET created_at = created_at - interval '24 hours 1 minute' WHERE key_id = $1 AND idempotency_key = 'k-old'",
      [sender.keyId])
    const again = await send(body, { "Idempotency-Key": "k-old" })
    expect(again.status).toBe(202)
    expect(again.json.items[0].message_id).not.toBe(first.json.items[0].message_id)
    expect(await deliveriesTo("idem-old@example.org")).toBe(2)
    // The new answer is the one stored now: a third request replays it.
    const third = await send(body, { "Idempotency-Key": "k-old" })
    expect(third.json).toEqual(again.json)
    expect(await deliveriesTo("idem-old@example.org")).toBe(2)
  })

  it("refuses a key over 200 characters with the send endpoint's 400, rate-limit headers included", async () => {
    const res = await send(sendBody(sender, "idem-long@example.org"), { "Idempotency-Key": "k".repeat(201) })
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param: "Idempotency-Key" })
    expect(res.json.message).toBe(res.json.error.message)
    expect(res.json.message).toContain("200")
    expect(res.headers.get("ratelimit-limit")).not.toBeNull()
    expect(res.headers.get("ratelimit-remaining")).not.toBeNull()
    expect(Number(res.headers.get("ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000 - 1)
    expect(await deliveriesTo("idem-long@example.org")).toBe(0)
    const longest = await send(sendBody(sender, "idem-long@example.org"), { "Idempotency-Key": "k".repeat(200) })
    expect(longest.status).toBe(202)
  })
})
