/**
 * Issue 26, finding 1 (contact metadata had no size bound: seven imports of 10 MB metadata and six
 * parallel list pages took the heap, every account lost the API) and finding 8 (NUL answered 500
 * in the bulk area), reproduced against a running appliance. Metadata is bounded (32 KB as compact
 * JSON, 5 levels) on create, PATCH, every import row and the result of `update_existing`'s merge;
 * a row stored before the bound stays readable but cannot grow; a list page's bytes follow.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_EMAIL_LENGTH, MAX_METADATA_BYTES, MAX_NAME_LENGTH } from "../../src/http/bounds.ts"
import { query } from "../support/database.ts"
import { expectAnswered, formatHealth, probeHealthWhile } from "../support/health-probe.ts"
import { newSender, type Sender, type SendingApp, startSendingApp } from "../support/sending.ts"

let rig: SendingApp
let other: Sender

beforeAll(async () => {
  rig = await startSendingApp()
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
})
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown, token = rig.sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
const csv = (text: string, query = "", token = rig.sender.token) =>
  rig.app.request("POST", `/v1/bulk/contacts/import${query}`, { token, rawBody: text, headers: { "content-type": "text/csv" } })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)
const stored = async (email: string) =>
  (await db<{ metadata: Record<string, unknown> }>("SELECT metadata FROM contacts WHERE key_id = $1 AND lower(email) = $2", [rig.sender.keyId, email]))[0]
/** Metadata of exactly `bytes` bytes as compact JSON: {"k":"xxx…"}. */
const metadataOf = (bytes: number, key = "k") => ({ [key]: "x".repeat(bytes - `{"${key}":""}`.length) })

describe("finding 1: contact metadata is bounded", () => {
  it("refuses seven 10 MB metadata imports and six parallel searches serve small pages, others unaffected", async () => {
    // Serialised once, before the watch: the test's own client shares the appliance's event loop.
    const body = Buffer.from(JSON.stringify({ contacts: [{ email: "big@example.org", name: "big", metadata: { k: "Ab".repeat(5 * 1024 * 1024) } }] }))
    const headers = { authorization: `Bearer ${rig.sender.token}`, "content-type": "application/json" }
    const importBig = async () => {
      const res = await fetch(`${rig.app.baseUrl}/v1/bulk/contacts/import`, { method: "POST", headers, body })
      return { status: res.status, json: await res.json() as { error: { code: string; param: string } } }
    }
    const attack = Promise.all([
      ...Array.from({ length: 7 }, importBig),
      ...Array.from({ length: 6 }, () => api("GET", "/v1/bulk/contacts?search=big&limit=8"))
    ])
    // Meanwhile /health back to back, another account sending after each answer.
    const { result: answers, health } = await probeHealthWhile(rig.app, attack, { intervalMs: 0, bystander: { sender: other, to: "someone@rcpt.test", each: true } })
    for (const refused of answers.slice(0, 7)) {
      expect(refused.status).toBe(400)
      expect(refused.json.error).toMatchObject({ code: "validation_failed", param: "contacts[0].metadata" })
    }
    for (const page of answers.slice(7)) expect(page.json).toMatchObject({ total: 0, items: [] })
    expect(await stored("big@example.org")).toBeUndefined()
    // Before the bound the heap died and every account lost the API; now /health answers 200 and
    // another account's sends 202 throughout. Its latency is printed, not asserted: what remains is
    // reading and JSON.parse of seven 10 MB bodies on the main thread (docs/api.md "Input bounds").
    console.log(`during the attack: ${formatHealth(health)}`)
    expectAnswered(health)
  })

  it("refuses metadata over the bound on create and PATCH, taking exactly the bound", async () => {
    const over = await api("POST", "/v1/bulk/contacts", { email: "over@example.org", metadata: metadataOf(MAX_METADATA_BYTES + 1) })
    expect(over.status).toBe(400)
    expect(over.json.error).toMatchObject({ code: "validation_failed", param: "metadata" })
    const deep = await api("POST", "/v1/bulk/contacts", { email: "over@example.org", metadata: { a: { b: { c: { d: { e: {} } } } } } })
    expect(deep.json.error).toMatchObject({ code: "validation_failed", param: "metadata" })
    const exact = await api("POST", "/v1/bulk/contacts", { email: "exact@example.org", metadata: metadataOf(MAX_METADATA_BYTES) })
    expect(exact.status).toBe(201)
    const patched = await api("PATCH", "/v1/bulk/contacts/exact%40example.org", { metadata: metadataOf(MAX_METADATA_BYTES + 1) })
    expect(patched.json.error).toMatchObject({ code: "validation_failed", param: "metadata" })
    expect(JSON.stringify((await stored("exact@example.org"))!.metadata)).toHaveLength(MAX_METADATA_BYTES)
  })

  it("bounds the result of update_existing's merge, so one contact cannot keep growing; nothing is imported", async () => {
    expect((await api("POST", "/v1/bulk/contacts", { email: "grow@example.org", metadata: metadataOf(20_000, "a") })).status).toBe(201)
    const grow = await api("POST", "/v1/bulk/contacts/import", {
      update_existing: true,
      contacts: [{ email: "fresh@example.org" }, { email: "GROW@example.org", metadata: metadataOf(20_000, "b") }]
    })
    expect(grow.status).toBe(400)
    expect(grow.json.error).toMatchObject({ code: "validation_failed", param: "contacts[1].metadata" })
    expect(Object.keys((await stored("grow@example.org"))!.metadata)).toEqual(["a"])
    expect(await stored("fresh@example.org")).toBeUndefined()
    // Within the bound the merge goes through; rows of one address in one import are merged first.
    const fits = await api("POST", "/v1/bulk/contacts/import", { update_existing: true, contacts: [{ email: "grow@example.org", metadata: { b: 1 } }] })
    expect(fits.json).toMatchObject({ updated: 1 })
    const twice = await api("POST", "/v1/bulk/contacts/import", {
      contacts: [{ email: "dup@example.org", metadata: metadataOf(20_000, "a") }, { email: "dup@example.org", metadata: metadataOf(20_000, "b") }]
    })
    expect(twice.json.error).toMatchObject({ code: "validation_failed", param: "contacts[1].metadata" })
    const wide = await csv(`email,note\nwide@example.org,${"x".repeat(MAX_METADATA_BYTES)}\n`)
    expect(wide.json.error).toMatchObject({ code: "validation_failed", param: "metadata" })
    expect(await stored("wide@example.org")).toBeUndefined()
  })

  it("keeps a row stored before the bound readable, and lets it not grow", async () => {
    expect((await api("POST", "/v1/bulk/contacts", { email: "legacy@example.org" })).status).toBe(201)
    await db("UPDATE contacts SET metadata = $1::jsonb WHERE key_id = $2 AND email = 'legacy@example.org'", [
      JSON.stringify(metadataOf(100_000, "old")),
      rig.sender.keyId
    ])
    const read = await api("GET", "/v1/bulk/contacts/legacy%40example.org")
    expect(read.status).toBe(200)
    expect(JSON.stringify(read.json.metadata).length).toBe(100_000)
    expect((await api("GET", "/v1/bulk/contacts?search=legacy")).json.items).toHaveLength(1)
    const grow = await api("POST", "/v1/bulk/contacts/import", { update_existing: true, contacts: [{ email: "legacy@example.org", metadata: { n: 1 } }] })
    expect(grow.json.error).toMatchObject({ code: "validation_failed", param: "contacts[0].metadata" })
    const same = await api("POST", "/v1/bulk/contacts/import", { update_existing: true, contacts: [{ email: "legacy@example.org", name: "Legacy" }] })
    expect(same.json).toMatchObject({ updated: 1 })
    expect(Object.keys((await stored("legacy@example.org"))!.metadata)).toEqual(["old"])
  })

  it("bounds a list page's bytes by the field bounds: 200 contacts at the largest metadata", async () => {
    const key = await api("POST", `/v1/admin/accounts/${rig.sender.accountId}/keys`, { label: "page" }, rig.app.adminToken)
    const contacts = Array.from({ length: 200 }, (_, i) => ({
      email: `page${i}@example.org`,
      name: "n".repeat(MAX_NAME_LENGTH),
      tags: Array.from({ length: 100 }, (_, t) => `${t}`.padEnd(100, "t")),
      metadata: metadataOf(MAX_METADATA_BYTES)
    }))
    expect((await api("POST", "/v1/bulk/contacts/import", { contacts }, key.json.token)).json).toMatchObject({ created: 200 })
    const page = await api("GET", "/v1/bulk/contacts?limit=200", undefined, key.json.token)
    expect(page.json.items).toHaveLength(200)
    // docs/api.md "Input bounds": metadata 32 KB + 100 tags of 100 + a name of 200 + an address of 254 + 1 KB of fixed fields.
    const perContact = MAX_METADATA_BYTES + 100 * (100 + 3) + MAX_NAME_LENGTH + MAX_EMAIL_LENGTH + 1024
    expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(200 * perContact)
  })
})

describe("finding 8: NUL in the bulk area is a 400 naming it, never a 500", () => {
  it.each([
    ["a segment custom value", "POST", "/v1/bulk/segments/preview", {
      rules: { match: "all", rules: [{ field: "custom", op: "is", field_name: "k", value: "a\u0000" }] }
    }, "rules.rules[0].value"],
    ["contacts?search=", "GET", "/v1/bulk/contacts?search=a%00", undefined, "search"],
    ["a contact path", "GET", "/v1/bulk/contacts/a%00b%40example.org", undefined, "id"],
    ["template vars", "POST", "/v1/bulk/templates/preview", { html: "{{ a }}", vars: { a: "x\u0000" } }, "vars.a"],
    ["import ?tags=", "POST", "/v1/bulk/contacts/import?tags=a%00", { contacts: [{ email: "t@example.org" }] }, "tags"]
  ])("%s", async (_, method, route, body, param) => {
    const res = await api(method, route, body)
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ code: "validation_failed", param })
  })

  it("a CSV tags cell: the import is refused and nothing stored", async () => {
    const res = await csv("email,tags\nnul-tag@example.org,a\u0000b\n")
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe("validation_failed")
    expect(await stored("nul-tag@example.org")).toBeUndefined()
    const query = await csv("email\nq@example.org\n", "?tags=a%00")
    expect(query.json.error).toMatchObject({ code: "validation_failed", param: "tags" })
  })
})
