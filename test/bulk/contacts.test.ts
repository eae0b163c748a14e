/**
 * Contacts against a running appliance: CRUD and isolation between keys, JSON and CSV imports
 * (quoted fields, `;` tags, metadata columns), the invalid-percentage gate that inserts nothing,
 * the preview, the unsubscribe that is one fact across keys, and a DSN and a complaint through the
 * MX listener moving contacts' status and appearing in their engagement history.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { arf, dsn, feedbackLoop, headersOf } from "../support/reports.ts"
import { newSender, type Sender, sendBody, siblingKey } from "../support/sending.ts"
import { sendRaw } from "../support/smtp-client.ts"

const BOUNCE_DOMAIN = "bounces.mta.herald.test"

let rig: DeliveryRig
let sender: Sender
let other: Sender
/** A second key of `sender`'s account. */
let sibling: { token: string; keyId: string }

beforeAll(async () => {
  rig = await startDeliveryRig({ HERALD_IMPORT_VALIDATION_MIN: "10", HERALD_IMPORT_MAX_INVALID_PCT: "20" })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
  sibling = await siblingKey(rig.app, sender)
  rig.route("rcpt.test")
})
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)
const countContacts = async (keyId: string) => (await db<{ n: number }>("SELECT count(*)::int AS n FROM contacts WHERE key_id = $1", [keyId]))[0]!.n

describe("contacts CRUD", () => {
  it("creates, reads by id and by email, updates, lists with filters, deletes", async () => {
    const created = await api("POST", "/v1/bulk/contacts", { email: "Ada@Example.org", name: "Ada", tags: ["vip", "vip", " beta "], metadata: { plan: "pro" } })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ email: "Ada@Example.org", name: "Ada", status: "active", tags: ["vip", "beta"], metadata: { plan: "pro" }, lists: [] })
    expect(created.json.id).toMatch(/^ct_/)
    const id = created.json.id

    expect((await api("POST", "/v1/bulk/contacts", { email: "ada@example.ORG" })).status).toBe(409)
    const byEmail = await api("GET", `/v1/bulk/contacts/${encodeURIComponent("ADA@example.org")}`)
    expect(byEmail.status).toBe(200)
    expect(byEmail.json.id).toBe(id)

    const patched = await api("PATCH", `/v1/bulk/contacts/${id}`, { name: "Ada L.", tags: ["gold"] })
    expect(patched.status).toBe(200)
    expect(patched.json).toMatchObject({ name: "Ada L.", tags: ["gold"], metadata: { plan: "pro" } })

    await api("POST", "/v1/bulk/contacts", { email: "bob@example.org", name: "Bob", tags: ["gold", "x"] })
    await api("POST", "/v1/bulk/contacts", { email: "carol@example.org" })
    // A list and a membership written as the lists API will write them (next part of the issue).
    await db("INSERT INTO lists (id, account_id, key_id, name, created_at, updated_at) VALUES ('ls_test1', $1, $2, 'L', now(), now())", [sender.accountId, sender.keyId])
    await db("INSERT INTO list_memberships (list_id, contact_id, status, created_at) VALUES ('ls_test1', $1, 'pending', now())", [id])

    const byTag = await api("GET", "/v1/bulk/contacts?tag=gold")
    expect(byTag.json.items.map((c: { email: string }) => c.email).sort()).toEqual(["Ada@Example.org", "bob@example.org"])
    const search = await api("GET", "/v1/bulk/contacts?search=BO")
    expect(search.json).toMatchObject({ total: 1, limit: 50, offset: 0 })
    const inList = await api("GET", "/v1/bulk/contacts?list_id=ls_test1")
    expect(inList.json.items).toHaveLength(1)
    expect(inList.json.items[0].lists).toEqual([{ list_id: "ls_test1", status: "pending" }])
    const page = await api("GET", "/v1/bulk/contacts?limit=2&offset=1")
    expect(page.json).toMatchObject({ total: 3, limit: 2, offset: 1 })
    expect(page.json.items).toHaveLength(2)
    expect((await api("GET", "/v1/bulk/contacts?limit=0")).status).toBe(400)
    expect((await api("GET", "/v1/bulk/contacts?limit=201")).status).toBe(400)
    expect((await api("GET", "/v1/bulk/contacts?status=gone")).status).toBe(400)
    expect((await api("POST", "/v1/bulk/contacts", { email: "not-an-address" })).status).toBe(400)

    const removed = await api("DELETE", `/v1/bulk/contacts/${encodeURIComponent("carol@example.org")}`)
    expect(removed.json).toEqual({ id: expect.stringMatching(/^ct_/), deleted: true })
    expect((await api("GET", `/v1/bulk/contacts/${removed.json.id}`)).status).toBe(404)
  })

  it("keeps another key's contacts invisible and untouchable (404, nothing changed)", async () => {
    const mine = await api("POST", "/v1/bulk/contacts", { email: "private@example.org", name: "P" })
    for (const token of [other.token, sibling.token]) {
      for (const ref of [mine.json.id, encodeURIComponent("private@example.org")]) {
        expect((await api("GET", `/v1/bulk/contacts/${ref}`, undefined, token)).status).toBe(404)
        expect((await api("PATCH", `/v1/bulk/contacts/${ref}`, { name: "stolen" }, token)).status).toBe(404)
        expect((await api("DELETE", `/v1/bulk/contacts/${ref}`, undefined, token)).status).toBe(404)
      }
      expect((await api("GET", `/v1/bulk/contacts/private%40example.org/engagement`, undefined, token)).status).toBe(404)
      expect((await api("GET", "/v1/bulk/contacts?search=private", undefined, token)).json.total).toBe(0)
      const preview = await api("POST", "/v1/bulk/contacts/import-preview", ["private@example.org"], token)
      expect(preview.json.existing).toEqual([])
    }
    // The same address is another contact for another key.
    expect((await api("POST", "/v1/bulk/contacts", { email: "private@example.org" }, other.token)).status).toBe(201)
    expect((await api("GET", `/v1/bulk/contacts/${mine.json.id}`)).json.name).toBe("P")
  })
})

describe("import", () => {
  it("imports JSON: creates, skips or updates existing ones, reports invalid rows", async () => {
    const first = await api("POST", "/v1/bulk/contacts/import", {
      contacts: [{ email: "i1@example.org", name: "One", tags: ["a"] }, { email: "I2@example.org", metadata: { n: 2 } }, { email: "bad@" }],
      tags: ["imported"]
    }, other.token)
    expect(first.status).toBe(200)
    expect(first.json).toEqual({ created: 2, updated: 0, skipped: 0, invalid: 1, errors: [{ row: 3, email: "bad@", reason: "invalid email syntax" }] })
    const again = await api("POST", "/v1/bulk/contacts/import", { contacts: [{ email: "i1@EXAMPLE.org", name: "Uno" }, { email: "i3@example.org" }] }, other.token)
    expect(again.json).toMatchObject({ created: 1, updated: 0, skipped: 1, invalid: 0 })
    expect((await api("GET", "/v1/bulk/contacts/i1%40example.org", undefined, other.token)).json.name).toBe("One")
    const update = await api("POST", "/v1/bulk/contacts/import", {
      contacts: [{ email: "i1@example.org", name: "Uno", tags: ["b"], metadata: { city: "Oslo" } }],
      update_existing: true
    }, other.token)
    expect(update.json).toMatchObject({ created: 0, updated: 1, skipped: 0 })
    const i1 = (await api("GET", "/v1/bulk/contacts/i1%40example.org", undefined, other.token)).json
    expect(i1).toMatchObject({ email: "i1@example.org", name: "Uno", tags: ["a", "imported", "b"], metadata: { city: "Oslo" } })
    expect((await api("POST", "/v1/bulk/contacts/import", { contacts: [{ email: "x@example.org" }], list_ids: ["ls_x"] }, other.token)).json.error)
      .toMatchObject({ code: "validation_failed", param: "list_ids" })
  })

  it("folds a repeated address into its first row as the rows come (in SQL, from the staging table): last name, tags in order, metadata merged", async () => {
    const key = await siblingKey(rig.app, sender)
    const folded = await api("POST", "/v1/bulk/contacts/import", {
      contacts: [
        { email: "fold@example.org", name: "First", tags: ["a"], metadata: { k: 1, j: 1 } },
        { email: "other@example.org", tags: ["x"] },
        { email: "FOLD@example.org", tags: ["imported", "b", "a"], metadata: { k: 2 } },
        { email: " fold@example.org ", name: null, metadata: { deep: { v: true } } },
        { email: "Fold@Example.org", name: "Last", tags: ["c"] }
      ],
      tags: ["imported"]
    }, key.token)
    expect(folded.json).toEqual({ created: 2, updated: 0, skipped: 0, invalid: 0, errors: [] })
    const [fold] = await db<{ id: string; email: string; name: string; tags: Array<string>; metadata: unknown }>(
      "SELECT id, email, name, tags, metadata FROM contacts WHERE key_id = $1 AND lower(email) = 'fold@example.org'", [key.keyId])
    // The first row's address as written; the request's tag last, as the rows' running merge left it.
    expect(fold).toMatchObject({ email: "fold@example.org", name: "Last", tags: ["a", "b", "c", "imported"], metadata: { k: 2, j: 1, deep: { v: true } } })
    expect((await api("GET", "/v1/bulk/contacts/other%40example.org", undefined, key.token)).json.tags).toEqual(["x", "imported"])
    // A request tag in the last row keeps its place there; a CSV's repeats fold the same way.
    const csv = await rig.app.request("POST", "/v1/bulk/contacts/import?tags=imported&update_existing=true", {
      token: key.token,
      rawBody: "email,name,tags,city\nagain@example.org,A,imported;z,Oslo\nAGAIN@example.org,,y;imported;w,\n",
      headers: { "content-type": "text/csv" }
    })
    expect(csv.json).toMatchObject({ created: 1, updated: 0, skipped: 0 })
    const [again] = await db<{ name: string; tags: Array<string>; metadata: unknown }>(
      "SELECT name, tags, metadata FROM contacts WHERE key_id = $1 AND lower(email) = 'again@example.org'", [key.keyId])
    expect(again).toEqual({ name: "A", tags: ["z", "y", "imported", "w"], metadata: { city: "Oslo" } })
  })

  it("imports nothing from a CSV refused after thousands of its rows were staged, and leaves no staging table behind", async () => {
    const key = await siblingKey(rig.app, sender)
    const lines = ["email,name"]
    for (let i = 0; i < 20_000; i++) lines.push(`staged${i}@example.org,Name ${i}`)
    // An unclosed quote on the last line: csv-parse refuses it only once every row before it was read.
    const res = await rig.app.request("POST", "/v1/bulk/contacts/import", {
      token: key.token,
      rawBody: `${lines.join("\n")}\nlast@example.org,"unclosed\n`,
      headers: { "content-type": "text/csv" }
    })
    expect(res.status).toBe(400)
    expect(res.json.error.code).toBe("validation_failed")
    expect(await countContacts(key.keyId)).toBe(0)
    const [temp] = await db<{ n: number }>("SELECT count(*)::int AS n FROM pg_class WHERE relname IN ('import_staging', 'import_folded')")
    expect(temp!.n).toBe(0)
  })

  it("imports CSV with quoted fields holding commas, `;` tags and metadata columns", async () => {
    const csv = [
      "email,name,tags,city,note",
      "csv1@example.org,\"Lovelace, Ada\",vip;beta,London,\"said \"\"hi\"\", then left\"",
      "csv2@example.org,Bob,,Paris,",
      "broken,Nobody,,,",
      "CSV1@example.org,,gamma,,"
    ].join("\r\n")
    const res = await rig.app.request("POST", "/v1/bulk/contacts/import?tags=csv&update_existing=false", {
      token: sibling.token,
      rawBody: csv,
      headers: { "content-type": "text/csv" }
    })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ created: 2, updated: 0, skipped: 0, invalid: 1, errors: [{ row: 3, email: "broken", reason: "invalid email syntax" }] })
    const ada = (await api("GET", "/v1/bulk/contacts/csv1%40example.org", undefined, sibling.token)).json
    expect(ada).toMatchObject({ name: "Lovelace, Ada", tags: ["vip", "beta", "gamma", "csv"], metadata: { city: "London", note: "said \"hi\", then left" } })
    const bad = await rig.app.request("POST", "/v1/bulk/contacts/import", { token: sibling.token, rawBody: "name\nx", headers: { "content-type": "text/csv" } })
    expect(bad.status).toBe(400)
    const unclosed = await rig.app.request("POST", "/v1/bulk/contacts/import", { token: sibling.token, rawBody: "email\n\"a@b.org", headers: { "content-type": "text/csv" } })
    expect(unclosed.status).toBe(400)
  })

  it("writes an import of several batches (each built while the previous one runs) once, counted once, on its list", async () => {
    const key = await siblingKey(rig.app, sender)
    const list = await api("POST", "/v1/bulk/lists", { name: "Batches" }, key.token)
    expect(list.status).toBe(201)
    const csvImport = (from: number, to: number, query: string) => {
      const lines = ["email,name,plan"]
      for (let i = from; i < to; i++) lines.push(`batch${i}@example.org,B ${i},p${i % 3}`)
      return rig.app.request("POST", `/v1/bulk/contacts/import${query}`, { token: key.token, rawBody: lines.join("\n"), headers: { "content-type": "text/csv" } })
    }
    expect((await csvImport(0, 2500, "")).json).toEqual({ created: 2500, updated: 0, skipped: 0, invalid: 0, errors: [] })
    const second = await csvImport(1500, 6000, `?update_existing=true&list_ids=${list.json.id}`)
    expect(second.json).toEqual({ created: 3500, updated: 1000, skipped: 0, invalid: 0, errors: [], confirmations_queued: 0, confirmations_withheld: 0 })
    expect((await csvImport(0, 5000, "")).json).toEqual({ created: 0, updated: 0, skipped: 5000, invalid: 0, errors: [] })
    expect(await countContacts(key.keyId)).toBe(6000)
    const [members] = await db<{ n: number }>("SELECT count(*)::int AS n FROM list_memberships WHERE list_id = $1", [list.json.id])
    expect(members!.n).toBe(4500)
    const [updated] = await db<{ n: number }>("SELECT count(*)::int AS n FROM contacts WHERE key_id = $1 AND metadata ->> 'plan' IS NOT NULL AND updated_at > created_at", [key.keyId])
    expect(updated!.n).toBe(1000)
  })

  it("refuses a CSV body holding a NUL (a value or a column name) with 400 and imports nothing, but not text that names it", async () => {
    const key = await siblingKey(rig.app, sender)
    const send = (csv: string) => rig.app.request("POST", "/v1/bulk/contacts/import", { token: key.token, rawBody: csv, headers: { "content-type": "text/csv" } })
    for (const csv of ["email,note\nnul@example.org,a\u0000b\nok@example.org,\n", "email,flag\u0000\nkey@example.org,yes\n"]) {
      const res = await send(csv)
      expect(res.status).toBe(400)
      expect(res.json.error.code).toBe("validation_failed")
    }
    expect(await countContacts(key.keyId)).toBe(0)
    const res = await send("email,note\nliteral@example.org,\\u0000 typed out\n")
    expect(res.json).toMatchObject({ created: 1, invalid: 0 })
    const literal = (await api("GET", "/v1/bulk/contacts/literal%40example.org", undefined, key.token)).json
    expect(literal.metadata).toEqual({ note: "\\u0000 typed out" })
  })

  it("refuses an import over the gate with 422 and inserts nothing; below the gate leaves invalid rows out", async () => {
    const fresh = await newSender(rig.app, rig.dns, { packageId: "growth" })
    // 10 unique addresses (the gate's minimum here), 3 invalid: 30 % > 20 %.
    const contacts = [...Array.from({ length: 7 }, (_, i) => ({ email: `g${i}@example.org` })), { email: "x" }, { email: "y@" }, { email: "@z" }]
    const refused = await api("POST", "/v1/bulk/contacts/import", { contacts }, fresh.token)
    expect(refused.status).toBe(422)
    expect(refused.json.error.code).toBe("too_many_invalid_recipients")
    expect(await countContacts(fresh.keyId)).toBe(0)
    // 9 unique addresses: under the gate's minimum, the invalid rows are left out and reported.
    const below = await api("POST", "/v1/bulk/contacts/import", { contacts: contacts.slice(1) }, fresh.token)
    expect(below.status).toBe(200)
    expect(below.json).toMatchObject({ created: 6, invalid: 3 })
    expect(await countContacts(fresh.keyId)).toBe(6)
  })

  it("previews: counts and existing matches as stored, touching nothing", async () => {
    const before = await countContacts(sender.keyId)
    const res = await api("POST", "/v1/bulk/contacts/import-preview", { emails: ["ada@example.org", "ADA@example.org", "new@example.org", "nope", "NOPE", "bob@example.org"] })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({
      existing: ["Ada@Example.org", "bob@example.org"],
      total_unique: 4,
      total_received: 6,
      invalid_syntax: 1,
      invalid: [{ index: 3, email: "nope", reason: "invalid email syntax" }, { index: 4, email: "NOPE", reason: "invalid email syntax" }],
      validation_min: 10,
      max_invalid_pct: 20
    })
    expect((await api("POST", "/v1/bulk/contacts/import-preview", ["a@b.org"])).json.total_received).toBe(1)
    expect((await api("POST", "/v1/bulk/contacts/import-preview", { nope: 1 })).status).toBe(400)
    expect(await countContacts(sender.keyId)).toBe(before)
  })
})

describe("unsubscribe and suppression are one fact", () => {
  it("PATCH unsubscribed suppresses the address and moves every contact of it in the account, one event per contact", async () => {
    const a = await api("POST", "/v1/bulk/contacts", { email: "leave@example.org" })
    const b = await api("POST", "/v1/bulk/contacts", { email: "Leave@Example.org" }, sibling.token)
    const c = await api("POST", "/v1/bulk/contacts", { email: "leave@example.org" }, other.token)
    const res = await api("PATCH", `/v1/bulk/contacts/${a.json.id}`, { status: "unsubscribed" })
    expect(res.json.status).toBe("unsubscribed")
    expect((await api("GET", `/v1/bulk/contacts/${b.json.id}`, undefined, sibling.token)).json.status).toBe("unsubscribed")
    expect((await api("GET", `/v1/bulk/contacts/${c.json.id}`, undefined, other.token)).json.status).toBe("active")
    expect(await db("SELECT reason FROM suppressions WHERE account_id = $1 AND email = 'leave@example.org'", [sender.accountId])).toEqual([{ reason: "unsubscribe" }])
    // Again, from the other key: nothing more.
    await api("PATCH", `/v1/bulk/contacts/${b.json.id}`, { status: "unsubscribed" }, sibling.token)
    const events = await db<{ key_id: string; payload: { email: string } }>(
      "SELECT key_id, payload FROM events WHERE event = 'contact.unsubscribed' AND account_id = $1 ORDER BY key_id",
      [sender.accountId]
    )
    expect(events.map((e) => [e.key_id, e.payload.email]).sort()).toEqual([[sender.keyId, "leave@example.org"], [sibling.keyId, "Leave@Example.org"]].sort())
    const history = await api("GET", "/v1/bulk/contacts/leave%40example.org/engagement", undefined, sibling.token)
    expect(history.json).toMatchObject({ email: "Leave@Example.org", total: 1, items: [{ type: "unsubscribed" }] })

    // Active again only once no suppression of the address remains.
    const refused = await api("PATCH", `/v1/bulk/contacts/${a.json.id}`, { status: "active" })
    expect(refused.status).toBe(409)
    expect((await api("GET", `/v1/bulk/contacts/${a.json.id}`)).json.status).toBe("unsubscribed")
    expect((await api("DELETE", "/v1/client/suppressions/leave@example.org")).status).toBe(200)
    const back = await api("PATCH", `/v1/bulk/contacts/${a.json.id}`, { status: "active" })
    expect(back.json.status).toBe("active")
  })
})

describe("bounces and complaints from any channel", () => {
  const deliver = async (to: string) => {
    const before = rig.sink.received.length
    const res = await api("POST", "/v1/mail/send", sendBody(sender, to))
    expect(res.status).toBe(202)
    await rig.sink.waitFor(before + 1)
    return rig.sink.received.find((r) => r.rcptTo.includes(to))!
  }
  const statusOf = async (ref: string, token = sender.token) => (await api("GET", `/v1/bulk/contacts/${ref}`, undefined, token)).json.status

  it("a hard-bounce DSN to a transactional send makes the address's contacts bounced and shows in engagement", async () => {
    const contact = await api("POST", "/v1/bulk/contacts", { email: "gone@rcpt.test" })
    await api("POST", "/v1/bulk/contacts", { email: "gone@rcpt.test" }, sibling.token)
    const received = await deliver("gone@rcpt.test")
    const reply = await sendRaw(rig.app.smtpPort, { from: "", to: [received.mailFrom] }, dsn(received.mailFrom, "gone@rcpt.test", "5.1.1", headersOf(received.raw)))
    expect(reply.code).toBe(250)
    await eventually(async () => (await statusOf(contact.json.id)) === "bounced" || undefined, "contact bounced", 20_000)
    expect(await statusOf("gone%40rcpt.test", sibling.token)).toBe("bounced")
    const history = await api("GET", "/v1/bulk/contacts/gone%40rcpt.test/engagement")
    expect(history.json).toMatchObject({ email: "gone@rcpt.test", total: 1, limit: 50, offset: 0 })
    expect(history.json.items[0]).toMatchObject({ type: "bounced", message_id: expect.any(String) })
    expect(history.json.items[0].detail).toContain("5.1.1")
    // Still suppressed: not active again.
    expect((await api("PATCH", `/v1/bulk/contacts/${contact.json.id}`, { status: "active" })).status).toBe(409)
  })

  it("a bounce refused during the SMTP session (550 5.1.1 at RCPT) makes the contact bounced and shows in engagement", async () => {
    const contact = await api("POST", "/v1/bulk/contacts", { email: "refused@rcpt.test" })
    rig.sink.replies.set("refused@rcpt.test", "550 5.1.1 No such user here")
    const res = await api("POST", "/v1/mail/send", sendBody(sender, "refused@rcpt.test"))
    expect(res.status).toBe(202)
    await eventually(async () =>
      (await db("SELECT 1 FROM suppressions WHERE account_id = $1 AND email = 'refused@rcpt.test'", [sender.accountId])).length > 0 || undefined,
      "address suppressed", 20_000)
    expect(await statusOf(contact.json.id)).toBe("bounced")
    const history = await api("GET", `/v1/bulk/contacts/${encodeURIComponent("refused@rcpt.test")}/engagement`)
    expect(history.json.total).toBe(1)
    expect(history.json.items[0]).toMatchObject({ type: "bounced", message_id: expect.any(String) })
    expect(history.json.items[0].detail).toContain("5.1.1")
  })

  it("a complaint (ARF) makes the contact complained and shows in engagement", async () => {
    const contact = await api("POST", "/v1/bulk/contacts", { email: "angry@rcpt.test" })
    const received = await deliver("angry@rcpt.test")
    const loop = feedbackLoop(rig.dns, "yahoo.com")
    const reply = await sendRaw(rig.app.smtpPort, { from: loop.from, to: [`fbl@${BOUNCE_DOMAIN}`] },
      await loop.sign(arf(`fbl@${BOUNCE_DOMAIN}`, "angry@rcpt.test", headersOf(received.raw), loop.from)))
    expect(reply.code).toBe(250)
    await eventually(async () => (await statusOf(contact.json.id)) === "complained" || undefined, "contact complained", 20_000)
    const history = await api("GET", `/v1/bulk/contacts/${encodeURIComponent("angry@rcpt.test")}/engagement`)
    expect(history.json.items.map((i: { type: string }) => i.type)).toEqual(["complained"])
    expect(history.json.items[0].detail).toMatch(/^abuse report from /)
  })
})
