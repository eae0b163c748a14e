/**
 * Segments against a running appliance: every field × operator over a seeded audience (contacts
 * through the API; statuses, creation times, engagement rows, lists and memberships written as
 * their owners will write them), match all/any, invalid rules named by their param path, the
 * preview's total/sample/sendable, saved segment CRUD, the lists delete's `segmentsUsingList`, and
 * isolation between keys.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { segmentsUsingList } from "../../src/bulk/segments/Segments.ts"
import { withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { newSender, type Sender, type SendingApp, startSendingApp, siblingKey } from "../support/sending.ts"

let rig: SendingApp
let sender: Sender
let other: Sender
/** A second key of `sender`'s account. */
let sibling: { token: string; keyId: string }

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)
const DAY = 86_400_000
const daysAgo = (n: number) => new Date(Date.now() - n * DAY)

/** Creates a contact through the API and sets what only other owners write (status, creation time). */
const seedContact = async (
  owner: { token: string },
  c: { email: string; tags?: Array<string>; metadata?: Record<string, unknown>; status?: string; created: string }
) => {
  const created = await api("POST", "/v1/bulk/contacts", { email: c.email, name: c.email.split("@")[0], tags: c.tags ?? [], metadata: c.metadata ?? {} }, owner.token)
  expect(created.status).toBe(201)
  await db("UPDATE contacts SET status = $2, created_at = $3 WHERE id = $1", [created.json.id, c.status ?? "active", c.created])
  return created.json.id as string
}
const seedList = async (owner: Sender | { keyId: string }, id: string, requireConfirmation: boolean) =>
  db("INSERT INTO lists (id, account_id, key_id, name, require_confirmation, created_at, updated_at) VALUES ($1, $2, $3, $1, $4, now(), now())", [
    id,
    sender.accountId,
    owner.keyId,
    requireConfirmation
  ])
const join = (listId: string, contactId: string, status: "pending" | "confirmed") =>
  db("INSERT INTO list_memberships (list_id, contact_id, status, created_at) VALUES ($1, $2, $3, now())", [listId, contactId, status])
const engage = (keyId: string | null, email: string, type: string, at: Date, accountId = sender.accountId) =>
  db("INSERT INTO contact_engagement (account_id, key_id, email, type, at) VALUES ($1, $2, $3, $4, $5)", [accountId, keyId, email, type, at])

const ids: Record<string, string> = {}

beforeAll(async () => {
  rig = await startSendingApp()
  sender = rig.sender
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
  sibling = await siblingKey(rig.app, sender)

  ids.ada = await seedContact(sender, { email: "ada@aud.test", tags: ["vip", "beta"], metadata: { plan: "Pro", city: "Paris" }, created: "2024-01-10T00:00:00Z" })
  ids.bob = await seedContact(sender, { email: "bob@aud.test", tags: ["vip"], metadata: { plan: "free" }, status: "unsubscribed", created: "2024-03-01T00:00:00Z" })
  ids.cyd = await seedContact(sender, { email: "cyd@aud.test", status: "bounced", created: "2024-06-01T00:00:00Z" })
  ids.dee = await seedContact(sender, { email: "Dee@aud.test", tags: ["beta"], metadata: { plan: "PROFESSIONAL", note: "50%_off" }, created: "2024-09-01T00:00:00Z" })
  ids.eve = await seedContact(sender, { email: "eve@aud.test", metadata: { city: "paris" }, created: "2025-01-01T00:00:00Z" })
  // Dee is active but on the account's suppression list: counted, never sendable.
  await db("INSERT INTO suppressions (account_id, email, reason, created_at) VALUES ($1, 'dee@aud.test', 'manual', now())", [sender.accountId])

  await engage(sender.keyId, "ada@aud.test", "opened", daysAgo(2))
  await engage(sender.keyId, "ada@aud.test", "clicked", daysAgo(40))
  await engage(sender.keyId, "bob@aud.test", "opened", daysAgo(60))
  await engage(sender.keyId, "dee@aud.test", "clicked", daysAgo(1))
  await engage(sender.keyId, "cyd@aud.test", "opened", daysAgo(120))
  // Another key's campaign opened by Eve's address: not this key's engagement.
  await engage(sibling.keyId, "eve@aud.test", "opened", daysAgo(1))

  await seedList(sender, "ls_open", false)
  await seedList(sender, "ls_double", true)
  await join("ls_open", ids.ada!, "confirmed")
  await join("ls_open", ids.bob!, "confirmed")
  await join("ls_double", ids.ada!, "confirmed")
  await join("ls_double", ids.dee!, "pending")
  await join("ls_double", ids.eve!, "pending")
  await seedList(sibling, "ls_sibling", false)

  // Another account's contacts look like ours and are never counted.
  await seedContact(other, { email: "ada@aud.test", tags: ["vip", "beta"], metadata: { plan: "Pro", city: "Paris" }, created: "2024-01-10T00:00:00Z" })
  await seedContact(other, { email: "zed@aud.test", tags: ["vip"], created: "2024-02-10T00:00:00Z" })
  await seedContact(sibling, { email: "sib@aud.test", tags: ["vip"], created: "2024-02-10T00:00:00Z" })
}, 60_000)
afterAll(() => rig.stop())

const preview = (body: Record<string, unknown>, token = sender.token) => api("POST", "/v1/bulk/segments/preview", body, token)
const matching = async (rule: Record<string, unknown>) => {
  const answer = await preview({ rules: { match: "all", rules: [rule] }, limit: 100 })
  expect(answer.status, JSON.stringify(answer.json)).toBe(200)
  return answer.json.sample.map((c: { email: string }) => c.email.split("@")[0]!.toLowerCase()).sort()
}

describe("segment rules: every field and operator", () => {
  const cases: ReadonlyArray<[Record<string, unknown>, Array<string>]> = [
    [{ field: "tag", op: "has", value: "vip" }, ["ada", "bob"]],
    [{ field: "tag", op: "not_has", value: "vip" }, ["cyd", "dee", "eve"]],
    [{ field: "status", op: "is", value: "active" }, ["ada", "dee", "eve"]],
    [{ field: "status", op: "is_not", value: "active" }, ["bob", "cyd"]],
    [{ field: "engagement", op: "opened", days: 7 }, ["ada"]],
    [{ field: "engagement", op: "opened", days: 90 }, ["ada", "bob"]],
    [{ field: "engagement", op: "not_opened", days: 7 }, ["bob", "cyd", "dee", "eve"]],
    [{ field: "engagement", op: "clicked", days: 30 }, ["dee"]],
    [{ field: "engagement", op: "clicked", days: 45 }, ["ada", "dee"]],
    [{ field: "engagement", op: "not_clicked", days: 30 }, ["ada", "bob", "cyd", "eve"]],
    [{ field: "created", op: "before", value: "2024-03-01" }, ["ada"]],
    [{ field: "created", op: "after", value: "2024-03-01" }, ["cyd", "dee", "eve"]],
    [{ field: "created", op: "after", value: "2024-06-01T00:00:01Z" }, ["dee", "eve"]],
    [{ field: "created", op: "before", value: "2024-06-01T01:30:00+02:00" }, ["ada", "bob"]],
    [{ field: "list", op: "in", value: "ls_open" }, ["ada", "bob"]],
    [{ field: "list", op: "not_in", value: "ls_open" }, ["cyd", "dee", "eve"]],
    [{ field: "list", op: "in", value: "ls_double" }, ["ada", "dee", "eve"]],
    [{ field: "custom", op: "is", field_name: "plan", value: "Pro" }, ["ada"]],
    [{ field: "custom", op: "is", field_name: "plan", value: "pro" }, []],
    [{ field: "custom", op: "is_not", field_name: "plan", value: "Pro" }, ["bob", "cyd", "dee", "eve"]],
    [{ field: "custom", op: "contains", field_name: "plan", value: "PRO" }, ["ada", "dee"]],
    [{ field: "custom", op: "contains", field_name: "note", value: "%_" }, ["dee"]],
    [{ field: "custom", op: "contains", field_name: "note", value: "5_" }, []],
    [{ field: "custom", op: "exists", field_name: "city" }, ["ada", "eve"]],
    [{ field: "custom", op: "not_exists", field_name: "city" }, ["bob", "cyd", "dee"]],
    // The field name is a bound parameter: quoting in it is just a name no contact has.
    [{ field: "custom", op: "exists", field_name: "plan' OR '1'='1" }, []]
  ]
  it.each(cases)("%j", async (rule, expected) => {
    expect(await matching(rule)).toEqual(expected)
  })

  it("combines rules with match all and any", async () => {
    const all = await preview({ rules: { match: "all", rules: [{ field: "tag", op: "has", value: "vip" }, { field: "status", op: "is", value: "active" }] } })
    expect(all.json.sample.map((c: { email: string }) => c.email)).toEqual(["ada@aud.test"])
    const any = await preview({ rules: { match: "any", rules: [{ field: "tag", op: "has", value: "beta" }, { field: "status", op: "is", value: "bounced" }] } })
    expect(any.json.sample.map((c: { email: string }) => c.email).sort()).toEqual(["Dee@aud.test", "ada@aud.test", "cyd@aud.test"])
    expect((await preview({ rules: { match: "any", rules: [] } })).json.total).toBe(0)
    expect((await preview({ rules: { match: "all", rules: [] } })).json.total).toBe(5)
  })
})

describe("invalid rules", () => {
  const rule = (r: Record<string, unknown>) => ({ rules: { match: "all", rules: [{ field: "tag", op: "has", value: "vip" }, r] } })
  const cases: ReadonlyArray<[string, Record<string, unknown>, string]> = [
    ["match", { rules: { match: "some", rules: [] } }, "rules.match"],
    ["unknown field", rule({ field: "color", op: "is", value: "red" }), "rules.rules[1].field"],
    ["op of another field", rule({ field: "status", op: "has", value: "active" }), "rules.rules[1].op"],
    ["status value", rule({ field: "status", op: "is", value: "gone" }), "rules.rules[1].value"],
    ["engagement without days", rule({ field: "engagement", op: "opened" }), "rules.rules[1].days"],
    ["days above 90", rule({ field: "engagement", op: "clicked", days: 91 }), "rules.rules[1].days"],
    ["days 0", rule({ field: "engagement", op: "clicked", days: 0 }), "rules.rules[1].days"],
    ["created not a date", rule({ field: "created", op: "before", value: "yesterday" }), "rules.rules[1].value"],
    ["created impossible date", rule({ field: "created", op: "after", value: "2024-02-31" }), "rules.rules[1].value"],
    ["custom without field_name", rule({ field: "custom", op: "exists" }), "rules.rules[1].field_name"],
    ["custom is without value", rule({ field: "custom", op: "is", field_name: "plan" }), "rules.rules[1].value"],
    ["custom unknown op", rule({ field: "custom", op: "like", field_name: "plan", value: "x" }), "rules.rules[1].op"],
    ["unknown list", rule({ field: "list", op: "in", value: "ls_nope" }), "rules.rules[1].value"],
    ["another key's list", rule({ field: "list", op: "not_in", value: "ls_sibling" }), "rules.rules[1].value"],
    ["unknown list_id", { rules: { match: "all", rules: [] }, list_id: "ls_sibling" }, "list_id"],
    ["limit above 100", { rules: { match: "all", rules: [] }, limit: 101 }, "limit"]
  ]
  it.each(cases)("%s → 400 naming %s", async (_name, body, param) => {
    const answer = await preview(body)
    expect(answer.status).toBe(400)
    expect(answer.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param })
    if (param.startsWith("rules")) {
      const saved = await api("POST", "/v1/bulk/segments", { name: "bad", rules: body.rules })
      expect(saved.json.error).toMatchObject({ code: "validation_failed", param })
    }
  })

  it("saves nothing for invalid rules", async () => {
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM segments WHERE name = 'bad'"))[0]!.n).toBe(0)
  })
})

describe("preview", () => {
  it("counts every match in total, only the sendable ones in sendable, and samples newest first", async () => {
    const everyone = await preview({ rules: { match: "all", rules: [] }, limit: 2 })
    expect(everyone.status).toBe(200)
    // Ada and Eve: Bob unsubscribed, Cyd bounced, Dee suppressed.
    expect(everyone.json).toEqual({
      total: 5,
      sendable: 2,
      sample: [{ email: "eve@aud.test", name: "eve", status: "active" }, { email: "Dee@aud.test", name: "Dee", status: "active" }]
    })
    expect((await preview({ rules: { match: "all", rules: [] } })).json.sample).toHaveLength(5)
  })

  it("narrows to list_id; a list requiring confirmation sends only to confirmed members", async () => {
    const open = await preview({ rules: { match: "all", rules: [] }, list_id: "ls_open" })
    expect(open.json).toMatchObject({ total: 2, sendable: 1 })
    const double = await preview({ rules: { match: "all", rules: [] }, list_id: "ls_double" })
    // Ada confirmed; Dee pending (and suppressed); Eve pending.
    expect(double.json).toMatchObject({ total: 3, sendable: 1 })
    const vipOnDouble = await preview({ rules: { match: "all", rules: [{ field: "tag", op: "has", value: "vip" }] }, list_id: "ls_double" })
    expect(vipOnDouble.json.sample.map((c: { email: string }) => c.email)).toEqual(["ada@aud.test"])
  })

  it("never counts another key's contacts, and saves nothing", async () => {
    const vip = { rules: { match: "all", rules: [{ field: "tag", op: "has", value: "vip" }] } }
    expect((await preview(vip, other.token)).json.sample.map((c: { email: string }) => c.email).sort()).toEqual(["ada@aud.test", "zed@aud.test"])
    expect((await preview(vip, sibling.token)).json).toMatchObject({ total: 1, sample: [{ email: "sib@aud.test" }] })
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM segments"))[0]!.n).toBe(0)
  })
})

describe("saved segments", () => {
  const rules = { match: "any", rules: [{ field: "list", op: "in", value: "ls_open" }, { field: "custom", op: "contains", field_name: "plan", value: "pro" }] }

  it("creates, reads, lists, updates and deletes", async () => {
    const created = await api("POST", "/v1/bulk/segments", { name: " Pros ", rules })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ id: expect.stringMatching(/^sg_/), name: "Pros", rules })
    const id = created.json.id
    expect((await api("GET", `/v1/bulk/segments/${id}`)).json).toEqual(created.json)
    const listed = await api("GET", "/v1/bulk/segments")
    expect(listed.json).toMatchObject({ total: 1, limit: 50, offset: 0, items: [{ id }] })
    expect((await api("GET", "/v1/bulk/segments?limit=0")).status).toBe(400)
    expect((await api("GET", "/v1/bulk/segments?limit=201")).status).toBe(400)

    const renamed = await api("PATCH", `/v1/bulk/segments/${id}`, { name: "Pro plans" })
    expect(renamed.json).toMatchObject({ name: "Pro plans", rules })
    const badPatch = await api("PATCH", `/v1/bulk/segments/${id}`, { rules: { match: "all", rules: [{ field: "tag", op: "is", value: "x" }] } })
    expect(badPatch.json.error).toMatchObject({ code: "validation_failed", param: "rules.rules[0].op" })
    const newRules = { match: "all", rules: [{ field: "engagement", op: "not_opened", days: 30 }] }
    expect((await api("PATCH", `/v1/bulk/segments/${id}`, { rules: newRules })).json).toMatchObject({ name: "Pro plans", rules: newRules })

    expect(await api("DELETE", `/v1/bulk/segments/${id}`).then((r) => r.json)).toEqual({ id, deleted: true })
    expect((await api("GET", `/v1/bulk/segments/${id}`)).status).toBe(404)
    expect((await api("DELETE", `/v1/bulk/segments/${id}`)).status).toBe(404)
  })

  it("reports the segments whose list rule names a list (for the lists delete)", async () => {
    const using = await api("POST", "/v1/bulk/segments", { name: "on open", rules: { match: "all", rules: [{ field: "tag", op: "has", value: "x" }, { field: "list", op: "not_in", value: "ls_open" }] } })
    await api("POST", "/v1/bulk/segments", { name: "tag only", rules: { match: "all", rules: [{ field: "tag", op: "has", value: "ls_open" }] } })
    const found = await withServices(rig.app, segmentsUsingList(sender.keyId, "ls_open"))
    expect(found).toEqual([using.json.id])
    expect(await withServices(rig.app, segmentsUsingList(sender.keyId, "ls_double"))).toEqual([])
    expect(await withServices(rig.app, segmentsUsingList(sibling.keyId, "ls_open"))).toEqual([])
    await api("DELETE", `/v1/bulk/segments/${using.json.id}`)
    expect(await withServices(rig.app, Effect.suspend(() => segmentsUsingList(sender.keyId, "ls_open")))).toEqual([])
  })

  it("hides a key's segment from every other key (404, nothing changed)", async () => {
    const mine = await api("POST", "/v1/bulk/segments", { name: "mine", rules: { match: "all", rules: [] } })
    for (const token of [other.token, sibling.token]) {
      expect((await api("GET", `/v1/bulk/segments/${mine.json.id}`, undefined, token)).status).toBe(404)
      expect((await api("PATCH", `/v1/bulk/segments/${mine.json.id}`, { name: "theirs" }, token)).status).toBe(404)
      expect((await api("DELETE", `/v1/bulk/segments/${mine.json.id}`, undefined, token)).status).toBe(404)
      expect((await api("GET", "/v1/bulk/segments", undefined, token)).json.total).toBe(0)
    }
    expect((await api("GET", `/v1/bulk/segments/${mine.json.id}`)).json.name).toBe("mine")
  })
})
