/**
 * Lists against a running appliance: CRUD, members by contact id and by email (creating contacts),
 * the counts (a suppressed member is not sendable), the confirmation settings and their
 * validation, the delete of several lists with its report, isolation between keys, and the
 * contact import's `list_ids`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { newSender, type Sender, type SendingApp, startSendingApp, siblingKey } from "../support/sending.ts"

let rig: SendingApp
let sender: Sender
let other: Sender
/** A second key of `sender`'s account. */
let sibling: { token: string; keyId: string }

beforeAll(async () => {
  rig = await startSendingApp()
  sender = rig.sender
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
  sibling = await siblingKey(rig.app, sender)
})
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)
const newList = async (name: string, token = sender.token) => {
  const res = await api("POST", "/v1/bulk/lists", { name }, token)
  expect(res.status).toBe(201)
  return res.json.id as string
}

describe("lists CRUD", () => {
  it("creates, reads, renames, lists and deletes, in the spec's shape", async () => {
    const created = await api("POST", "/v1/bulk/lists", { name: " Newsletter " })
    expect(created.status).toBe(201)
    expect(created.json).toEqual({
      id: expect.stringMatching(/^ls_/),
      name: "Newsletter",
      key_id: sender.keyId,
      contact_count: 0,
      created_at: expect.any(String),
      require_confirmation: 0,
      confirm_from_email: null,
      confirm_from_name: null,
      confirm_subject: null,
      confirm_intro: null,
      sendable_count: 0,
      pending_count: 0
    })
    const id = created.json.id
    expect((await api("GET", `/v1/bulk/lists/${id}`)).json).toEqual(created.json)
    const renamed = await api("PATCH", `/v1/bulk/lists/${id}`, { name: "Weekly" })
    expect(renamed.json).toMatchObject({ id, name: "Weekly" })
    await newList("Second")
    const page = await api("GET", "/v1/bulk/lists?limit=1")
    expect(page.json).toMatchObject({ total: 2, limit: 1, offset: 0 })
    expect(page.json.items).toHaveLength(1)
    expect((await api("GET", "/v1/bulk/lists?limit=0")).status).toBe(400)
    expect((await api("POST", "/v1/bulk/lists", { name: "" })).json.error).toMatchObject({ code: "validation_failed", param: "name" })
    expect((await api("DELETE", `/v1/bulk/lists/${id}`)).json).toEqual({ id, deleted: true })
    expect((await api("GET", `/v1/bulk/lists/${id}`)).status).toBe(404)
  })
})

describe("members", () => {
  it("adds by id and by email (creating contacts), counts sendable and pending, lists and removes members", async () => {
    const id = await newList("Members")
    const ada = await api("POST", "/v1/bulk/contacts", { email: "ada@members.test" })
    const added = await api("POST", `/v1/bulk/lists/${id}/contacts`, { contacts: [ada.json.id, "New@Members.test", "held@members.test"] })
    expect(added.status).toBe(200)
    expect(added.json).toMatchObject({ id, contact_count: 3, sendable_count: 3, pending_count: 0 })
    const created = await api("GET", `/v1/bulk/contacts/${encodeURIComponent("new@members.test")}`)
    expect(created.json).toMatchObject({ email: "New@Members.test", status: "active", lists: [{ list_id: id, status: "confirmed" }] })

    // A suppressed member stays a member but is not sendable.
    expect((await api("POST", "/v1/client/suppressions", { email: "held@members.test", reason: "manual" })).status).toBeLessThan(300)
    expect((await api("GET", `/v1/bulk/lists/${id}`)).json).toMatchObject({ contact_count: 3, sendable_count: 2, pending_count: 0 })

    // Adding again changes nothing; a bad address or an unknown id refuses the whole call.
    expect((await api("POST", `/v1/bulk/lists/${id}/contacts`, { contacts: ["ada@members.test"] })).json.contact_count).toBe(3)
    const bad = await api("POST", `/v1/bulk/lists/${id}/contacts`, { contacts: ["fresh@members.test", "not@"] })
    expect(bad.json.error).toMatchObject({ code: "validation_failed", param: "contacts[1]" })
    const unknown = await api("POST", `/v1/bulk/lists/${id}/contacts`, { contacts: ["fresh@members.test", "ct_nope"] })
    expect(unknown.json.error).toMatchObject({ code: "validation_failed", param: "contacts[1]" })
    expect((await api("GET", `/v1/bulk/contacts/${encodeURIComponent("fresh@members.test")}`)).status).toBe(404)

    const members = await api("GET", `/v1/bulk/lists/${id}/contacts?status=confirmed&limit=2`)
    expect(members.json).toMatchObject({ total: 3, limit: 2, offset: 0 })
    expect(members.json.items[0]).toMatchObject({ membership_status: "confirmed", email: expect.any(String), lists: [{ list_id: id, status: "confirmed" }] })
    expect((await api("GET", `/v1/bulk/lists/${id}/contacts?status=pending`)).json.total).toBe(0)
    expect((await api("GET", `/v1/bulk/lists/${id}/contacts?status=gone`)).status).toBe(400)

    const removed = await api("DELETE", `/v1/bulk/lists/${id}/contacts/${encodeURIComponent("NEW@members.test")}`)
    expect(removed.json).toEqual({ id: created.json.id, deleted: true })
    expect((await api("DELETE", `/v1/bulk/lists/${id}/contacts/${created.json.id}`)).status).toBe(404)
    expect((await api("GET", `/v1/bulk/lists/${id}`)).json).toMatchObject({ contact_count: 2, sendable_count: 1 })
    // The contact itself remains.
    expect((await api("GET", `/v1/bulk/contacts/${created.json.id}`)).json.lists).toEqual([])
  })
})

describe("confirmation settings", () => {
  it("refuses confirmation without a sender or with an unverified domain, applies defaults, pends new members, confirms them when turned off", async () => {
    const id = await newList("Opt-in")
    await api("POST", `/v1/bulk/lists/${id}/contacts`, { contacts: ["early@optin.test"] })

    const noSender = await api("PUT", `/v1/bulk/lists/${id}/confirmation`, { require_confirmation: true })
    expect(noSender.status).toBe(400)
    expect(noSender.json.error).toMatchObject({ code: "validation_failed", param: "confirm_from_email" })
    const unverified = await api("PUT", `/v1/bulk/lists/${id}/confirmation`, { require_confirmation: true, confirm_from_email: "news@unverified.example" })
    expect(unverified.status).toBe(400)
    expect(unverified.json.error).toMatchObject({ code: "validation_failed", param: "confirm_from_email" })
    expect(unverified.json.error.message).toContain("unverified.example")
    // Another account's verified domain is not this account's.
    const foreign = await api("PUT", `/v1/bulk/lists/${id}/confirmation`, { require_confirmation: true, confirm_from_email: `news@${other.domain}` })
    expect(foreign.json.error).toMatchObject({ code: "validation_failed", param: "confirm_from_email" })
    expect((await api("GET", `/v1/bulk/lists/${id}`)).json.require_confirmation).toBe(0)

    const on = await api("PUT", `/v1/bulk/lists/${id}/confirmation`, { require_confirmation: true, confirm_from_email: `news@${sender.domain}`, confirm_from_name: "News" })
    expect(on.status).toBe(200)
    expect(on.json).toMatchObject({
      require_confirmation: 1,
      confirm_from_email: `news@${sender.domain}`,
      confirm_from_name: "News",
      confirm_subject: "Please confirm your subscription to Opt-in",
      confirm_intro: expect.stringContaining("Opt-in"),
      contact_count: 1,
      sendable_count: 1,
      pending_count: 0
    })
    // Existing members stay confirmed; new ones pend (and get the confirmation mail: double-opt-in.test.ts).
    const added = await api("POST", `/v1/bulk/lists/${id}/contacts`, { contacts: ["late@optin.test"] })
    expect(added.json).toMatchObject({ contact_count: 2, sendable_count: 1, pending_count: 1 })
    expect((await api("GET", `/v1/bulk/lists/${id}/contacts?status=pending`)).json.items.map((m: { email: string }) => m.email)).toEqual(["late@optin.test"])

    const off = await api("PUT", `/v1/bulk/lists/${id}/confirmation`, { require_confirmation: false })
    expect(off.json).toMatchObject({ require_confirmation: 0, confirm_from_email: null, contact_count: 2, sendable_count: 2, pending_count: 0 })
    expect((await api("PUT", "/v1/bulk/lists/ls_nope/confirmation", { require_confirmation: false })).status).toBe(404)
  })
})

describe("delete several lists", () => {
  it("deletes the deletable ones in one go and reports not_found, forbidden and requested", async () => {
    const a = await newList("Del A")
    const b = await newList("Del B")
    const siblings = await newList("Sibling's", sibling.token)
    const foreign = await newList("Other account's", other.token)
    const report = await api("POST", "/v1/bulk/lists/delete", [a, b, siblings, foreign, "ls_unknown"])
    expect(report.status).toBe(200)
    expect(report.json).toEqual({ deleted: 2, not_found: [foreign, "ls_unknown"], forbidden: [siblings], in_use: [], requested: 5 })
    expect((await api("GET", `/v1/bulk/lists/${a}`)).status).toBe(404)
    expect((await api("GET", `/v1/bulk/lists/${siblings}`, undefined, sibling.token)).status).toBe(200)
    expect((await api("GET", `/v1/bulk/lists/${foreign}`, undefined, other.token)).status).toBe(200)

    const c = await newList("Del C")
    expect((await api("POST", "/v1/bulk/lists/delete", { ids: [c] })).json).toMatchObject({ deleted: 1, requested: 1 })
    expect((await api("POST", "/v1/bulk/lists/delete", { nope: [] })).status).toBe(400)
  })

  it("keeps a list a saved segment names: in_use in the report, 409 on its own DELETE, deletable once the segment is gone", async () => {
    const used = await newList("Named by a segment")
    const segment = await api("POST", "/v1/bulk/segments", { name: "On it", rules: { match: "all", rules: [{ field: "list", op: "in", value: used }] } })
    expect(segment.status).toBe(201)
    expect((await api("POST", "/v1/bulk/lists/delete", [used])).json).toEqual({ deleted: 0, not_found: [], forbidden: [], in_use: [used], requested: 1 })
    const single = await api("DELETE", `/v1/bulk/lists/${used}`)
    expect(single.status).toBe(409)
    expect(single.json.error).toMatchObject({ code: "conflict" })
    expect((await api("GET", `/v1/bulk/lists/${used}`)).status).toBe(200)
    expect((await api("DELETE", `/v1/bulk/segments/${segment.json.id}`)).status).toBe(200)
    expect((await api("DELETE", `/v1/bulk/lists/${used}`)).status).toBe(200)
  })
})

describe("isolation", () => {
  it("answers 404 for another key's list on every route and changes nothing", async () => {
    const id = await newList("Private")
    await api("POST", `/v1/bulk/lists/${id}/contacts`, { contacts: ["mine@private.test"] })
    for (const token of [sibling.token, other.token]) {
      expect((await api("GET", `/v1/bulk/lists/${id}`, undefined, token)).status).toBe(404)
      expect((await api("PATCH", `/v1/bulk/lists/${id}`, { name: "taken" }, token)).status).toBe(404)
      expect((await api("DELETE", `/v1/bulk/lists/${id}`, undefined, token)).status).toBe(404)
      expect((await api("PUT", `/v1/bulk/lists/${id}/confirmation`, { require_confirmation: false }, token)).status).toBe(404)
      expect((await api("POST", `/v1/bulk/lists/${id}/contacts`, { contacts: ["intruder@private.test"] }, token)).status).toBe(404)
      expect((await api("GET", `/v1/bulk/lists/${id}/contacts`, undefined, token)).status).toBe(404)
      expect((await api("DELETE", `/v1/bulk/lists/${id}/contacts/${encodeURIComponent("mine@private.test")}`, undefined, token)).status).toBe(404)
      expect((await api("GET", "/v1/bulk/lists", undefined, token)).json.items.map((l: { id: string }) => l.id)).not.toContain(id)
    }
    expect((await api("GET", `/v1/bulk/lists/${id}`)).json).toMatchObject({ name: "Private", contact_count: 1 })
    expect(await db("SELECT count(*)::int AS n FROM contacts WHERE lower(email) = 'intruder@private.test'")).toEqual([{ n: 0 }])
    // A key cannot add another key's contact by id either.
    const theirs = await api("POST", "/v1/bulk/contacts", { email: "theirs@private.test" }, sibling.token)
    expect((await api("POST", `/v1/bulk/lists/${id}/contacts`, { contacts: [theirs.json.id] })).status).toBe(400)
  })
})

describe("import with list_ids", () => {
  it("adds the imported contacts to the key's lists, pending where confirmation is required unless confirmed", async () => {
    const open = await newList("Open")
    const optIn = await newList("Opt-in import")
    expect((await api("PUT", `/v1/bulk/lists/${optIn}/confirmation`, { require_confirmation: true, confirm_from_email: `news@${sender.domain}` })).status).toBe(200)
    await api("POST", "/v1/bulk/contacts", { email: "known@import.test" })

    const imported = await api("POST", "/v1/bulk/contacts/import", {
      contacts: [{ email: "one@import.test" }, { email: "known@import.test" }, { email: "bad" }],
      list_ids: [open, optIn]
    })
    expect(imported.status).toBe(200)
    expect(imported.json).toMatchObject({ created: 1, skipped: 1, invalid: 1 })
    expect((await api("GET", `/v1/bulk/lists/${open}`)).json).toMatchObject({ contact_count: 2, sendable_count: 2, pending_count: 0 })
    expect((await api("GET", `/v1/bulk/lists/${optIn}`)).json).toMatchObject({ contact_count: 2, sendable_count: 0, pending_count: 2 })

    // confirmed: true (the operator holds the consent) confirms, in CSV too.
    const csv = await rig.app.request("POST", `/v1/bulk/contacts/import?list_ids=${optIn}&confirmed=true`, {
      token: sender.token,
      headers: { "content-type": "text/csv" },
      rawBody: "email\ntwo@import.test\none@import.test\n"
    })
    expect(csv.status).toBe(200)
    expect((await api("GET", `/v1/bulk/lists/${optIn}`)).json).toMatchObject({ contact_count: 3, sendable_count: 2, pending_count: 1 })

    // Another key's list: refused, nothing imported.
    const siblings = await newList("Sibling import", sibling.token)
    const refused = await api("POST", "/v1/bulk/contacts/import", { contacts: [{ email: "three@import.test" }], list_ids: [siblings] })
    expect(refused.status).toBe(400)
    expect(refused.json.error).toMatchObject({ code: "validation_failed", param: "list_ids" })
    expect((await api("GET", `/v1/bulk/contacts/${encodeURIComponent("three@import.test")}`)).status).toBe(404)
  })
})
