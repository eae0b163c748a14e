/**
 * Campaigns against a real appliance, SMTP sink and DNS server: the resource (owner, fields,
 * REST conventions), every refused transition of the state table (409, nothing changed), a
 * campaign to a list delivered to the sink with each contact's rendering and both unsubscribe
 * headers, its campaign.email.sent per contact and campaign.completed once, and the users of
 * lists and templates.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, siblingKey } from "../support/sending.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
})
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })

const listWith = async (emails: ReadonlyArray<string>) => {
  const list = await api("POST", "/v1/bulk/lists", { name: `list ${Math.random()}` })
  expect(list.status).toBe(201)
  for (let i = 0; i < emails.length; i += 1000) {
    const added = await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: emails.slice(i, i + 1000) })
    expect(added.status).toBe(200)
  }
  return list.json.id as string
}

const draft = async (fields: Record<string, unknown>) => {
  const created = await api("POST", "/v1/bulk/campaigns", { name: "Spring", from_email: sender.from, subject: "Hi", body_text: "Hello", ...fields })
  expect(created.status).toBe(201)
  return created.json
}

describe("the campaign resource", () => {
  it("creates, reads, lists, updates a draft and deletes it; another key's campaign is not found", async () => {
    const listId = await listWith(["a@dest.example"])
    const created = await draft({ list_ids: [listId], html: "<p>Hi {{ name }}</p>" })
    expect(created).toMatchObject({
      name: "Spring", status: "draft", pause_reason: null, template_id: null, subject: "Hi", list_ids: [listId], segment_id: null,
      total_contacts: null, scheduled_at: null, sent_count: 0, failed_count: 0, delivery_rate: 0, started_at: null, completed_at: null
    })
    expect(created.id).toMatch(/^cp_/)
    expect((await api("GET", `/v1/bulk/campaigns/${created.id}`)).json).toEqual(created)
    const page = await api("GET", "/v1/bulk/campaigns?limit=1")
    expect(page.json).toMatchObject({ limit: 1, offset: 0, items: [{ id: created.id }] })
    expect((await api("GET", "/v1/bulk/campaigns?limit=0")).status).toBe(400)
    const patched = await api("PATCH", `/v1/bulk/campaigns/${created.id}`, { name: "Summer" })
    expect(patched.json).toMatchObject({ name: "Summer", subject: "Hi" })

    const other = await siblingKey(rig.app, sender)
    expect((await api("GET", `/v1/bulk/campaigns/${created.id}`, undefined, other.token)).status).toBe(404)
    expect((await api("PATCH", `/v1/bulk/campaigns/${created.id}`, { name: "x" }, other.token)).status).toBe(404)
    expect((await api("POST", `/v1/bulk/campaigns/${created.id}/send`, {}, other.token)).status).toBe(404)

    expect((await api("DELETE", `/v1/bulk/campaigns/${created.id}`)).json).toEqual({ id: created.id, deleted: true })
    expect((await api("GET", `/v1/bulk/campaigns/${created.id}`)).status).toBe(404)
  })

  it("refuses content that does not render, unknown lists and both a template and inline content", async () => {
    const broken = await api("POST", "/v1/bulk/campaigns", { name: "x", subject: "{{ name | nope }}" })
    expect(broken.status).toBe(400)
    expect(broken.json.error).toMatchObject({ code: "render_failed", param: "subject" })
    const mjml = await api("POST", "/v1/bulk/campaigns", { name: "x", mjml: "<mjml><mj-body><mj-nope/></mj-body></mjml>" })
    expect(mjml.json.error).toMatchObject({ code: "render_failed", param: "mjml" })
    const unknownList = await api("POST", "/v1/bulk/campaigns", { name: "x", list_ids: ["ls_nope"] })
    expect(unknownList.json.error).toMatchObject({ code: "validation_failed", param: "list_ids[0]" })
    const template = await api("POST", "/v1/bulk/templates", { name: "t", subject: "s", body_text: "b" })
    const both = await api("POST", "/v1/bulk/campaigns", { name: "x", template_id: template.json.id, subject: "s" })
    expect(both.json.error).toMatchObject({ code: "validation_failed", param: "subject" })
    const compiled = await api("POST", "/v1/bulk/campaigns", {
      name: "m", mjml: "<mjml><mj-body><mj-section><mj-column><mj-text>Hi {{ name }}</mj-text></mj-column></mj-section></mj-body></mjml>"
    })
    expect(compiled.status).toBe(201)
    expect(compiled.json.html).toContain("Hi {{ name }}")
    expect((await api("GET", "/v1/bulk/campaigns?limit=200")).json.items.filter((c: { name: string }) => c.name === "x")).toEqual([])
  })

  it("marks a list in use and refuses to delete a template a campaign uses", async () => {
    const listId = await listWith(["inuse@dest.example"])
    const template = await api("POST", "/v1/bulk/templates", { name: "t", subject: "s", body_text: "b", from_email: sender.from })
    await api("POST", "/v1/bulk/campaigns", { name: "user", template_id: template.json.id, list_ids: [listId] })
    const report = await api("POST", "/v1/bulk/lists/delete", { ids: [listId] })
    expect(report.json).toMatchObject({ deleted: 0, in_use: [listId] })
    const removed = await api("DELETE", `/v1/bulk/templates/${template.json.id}`)
    expect(removed.status).toBe(409)
    expect(removed.json.error.code).toBe("conflict")
  })
})

describe("the effective sender", () => {
  it("shows what the mail goes out with: the campaign's fields over its template's, then what was frozen at the start", async () => {
    const template = await api("POST", "/v1/bulk/templates", {
      name: "t", subject: "s", body_text: "b", from_email: sender.from, from_name: "Acme News", reply_to: `help@${sender.domain}`
    })
    const c = await api("POST", "/v1/bulk/campaigns", {
      name: "inherits", template_id: template.json.id, list_ids: [await listWith(["delivered+sender@simulator.herald.invalid"])]
    })
    expect(c.json).toMatchObject({ from_email: null, from_name: null, reply_to: null })
    expect(c.json.sender).toEqual({ from_email: sender.from, from_name: "Acme News", reply_to: `help@${sender.domain}` })
    // The campaign's own address brings its own name, even none: the template's name does not follow another address.
    const own = await api("PATCH", `/v1/bulk/campaigns/${c.json.id}`, { from_email: `news@${sender.domain}` })
    expect(own.json.sender).toEqual({ from_email: `news@${sender.domain}`, from_name: null, reply_to: `help@${sender.domain}` })
    await api("PATCH", `/v1/bulk/campaigns/${c.json.id}`, { from_email: null, from_name: "Acme Weekly" })
    expect((await api("POST", `/v1/bulk/campaigns/${c.json.id}/send`)).status).toBe(200)
    // Started: the frozen content decides, whatever the template says now.
    await api("PATCH", `/v1/bulk/templates/${template.json.id}`, { from_name: "Renamed" })
    const started = await api("GET", `/v1/bulk/campaigns/${c.json.id}`)
    expect(started.json.sender).toEqual({ from_email: sender.from, from_name: "Acme Weekly", reply_to: `help@${sender.domain}` })
  })
})

describe("the state table", () => {
  const status = async (id: string) => (await api("GET", `/v1/bulk/campaigns/${id}`)).json

  it("refuses every call its state does not allow, with 409 and nothing changed", async () => {
    const listId = await listWith(["state@simulator.herald.invalid".replace("state", "delivered")])
    const future = new Date(Date.now() + 3_600_000).toISOString()
    const forbidden: Record<string, ReadonlyArray<readonly [string, unknown?]>> = {
      draft: [["pause"], ["resume"]],
      scheduled: [["send", {}], ["send", { scheduled_at: future }], ["resume"]],
      paused: [["send", { scheduled_at: future }], ["pause"]],
      cancelled: [["send", {}], ["send", { scheduled_at: future }], ["pause"], ["resume"], ["cancel"]]
    }
    const make = async (state: string) => {
      const c = await draft({ list_ids: [listId] })
      if (state === "scheduled" || state === "paused") expect((await api("POST", `/v1/bulk/campaigns/${c.id}/send`, { scheduled_at: future })).status).toBe(200)
      if (state === "paused") expect((await api("POST", `/v1/bulk/campaigns/${c.id}/pause`)).status).toBe(200)
      if (state === "cancelled") expect((await api("POST", `/v1/bulk/campaigns/${c.id}/cancel`)).status).toBe(200)
      return c.id as string
    }
    for (const [state, calls] of Object.entries(forbidden)) {
      const id = await make(state)
      const before = await status(id)
      expect(before.status).toBe(state)
      for (const [call, body] of calls) {
        const res = await api("POST", `/v1/bulk/campaigns/${id}/${call}`, body)
        expect({ state, call, status: res.status, code: res.json?.error?.code }).toEqual({ state, call, status: 409, code: "conflict" })
      }
      if (state !== "draft") expect((await api("PATCH", `/v1/bulk/campaigns/${id}`, { name: "no" })).status).toBe(409)
      if (state === "scheduled" || state === "paused") expect((await api("DELETE", `/v1/bulk/campaigns/${id}`)).status).toBe(409)
      expect(await status(id)).toEqual(before)
    }
    // sending and completed: a campaign to one simulator contact gets there by itself.
    const sending = await make("draft")
    expect((await api("POST", `/v1/bulk/campaigns/${sending}/send`)).json).toEqual({ id: sending, status: "sending", total_contacts: 1 })
    expect((await api("POST", `/v1/bulk/campaigns/${sending}/resume`)).status).toBe(409)
    expect((await api("POST", `/v1/bulk/campaigns/${sending}/send`, {})).status).toBe(409)
    expect((await api("DELETE", `/v1/bulk/campaigns/${sending}`)).status).toBe(409)
    const done = await eventually(async () => ((await status(sending)).status === "completed" ? status(sending) : undefined), "completed")
    expect(done).toMatchObject({ sent_count: 1, failed_count: 0, delivery_rate: 1, total_contacts: 1 })
    for (const call of ["send", "pause", "resume", "cancel"]) {
      expect((await api("POST", `/v1/bulk/campaigns/${sending}/${call}`, call === "send" ? {} : undefined)).status).toBe(409)
    }
    expect((await api("DELETE", `/v1/bulk/campaigns/${sending}`)).status).toBe(200)
  })

  it("takes a scheduled_at in the future within 90 days, else 400 validation_failed", async () => {
    const listId = await listWith(["delivered@simulator.herald.invalid"])
    const c = await draft({ list_ids: [listId] })
    for (const bad of ["tomorrow", "2020-01-01T00:00:00Z", new Date(Date.now() + 91 * 86_400_000).toISOString(), "2030-01-01T10:00:00"]) {
      const res = await api("POST", `/v1/bulk/campaigns/${c.id}/send`, { scheduled_at: bad })
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ code: "validation_failed", param: "scheduled_at" })
    }
    expect((await status(c.id)).status).toBe("draft")
    const at = new Date(Date.now() + 86_400_000).toISOString()
    expect((await api("POST", `/v1/bulk/campaigns/${c.id}/send`, { scheduled_at: at })).json).toEqual({ id: c.id, status: "scheduled", scheduled_at: at })
  })
})

describe("a campaign to a list", () => {
  it("delivers one message per sendable contact, rendered for each, with both unsubscribe headers, and completes once", async () => {
    const count = 30
    const emails = Array.from({ length: count }, (_, i) => `reader${i}@dest.example`)
    const listId = await listWith(emails)
    // Not sendable: an unsubscribed contact, a suppressed address.
    await api("PATCH", `/v1/bulk/contacts/${encodeURIComponent("reader0@dest.example")}`, { status: "unsubscribed" })
    await api("POST", "/v1/client/suppressions", { email: "reader1@dest.example", reason: "manual" })
    const before = rig.sink.received.length
    const c = await draft({ list_ids: [listId], subject: "Hi {{ email }}", html: "<p>Dear {{ email }}</p><a href=\"{{ unsubscribe_url }}\">leave</a>", body_text: "" })
    const sent = await api("POST", `/v1/bulk/campaigns/${c.id}/send`)
    const expected = (await query<{ n: number }>(rig.app.databaseUrl, `SELECT count(*)::int AS n FROM contacts c WHERE c.key_id = $1
      AND c.email LIKE 'reader%' AND c.status = 'active' AND NOT EXISTS (SELECT 1 FROM suppressions s WHERE s.email = lower(c.email))`, [sender.keyId]))[0]!.n
    expect(sent.json).toEqual({ id: c.id, status: "sending", total_contacts: expected })
    await rig.sink.waitFor(before + expected, 30_000)
    const mine = rig.sink.received.slice(before)
    const to = mine.map((m) => m.rcptTo[0]).sort()
    expect(new Set(to).size).toBe(expected)
    for (const m of mine) {
      // Headers unfolded: a long List-Unsubscribe is folded over several lines.
      const raw = m.raw.toString().replace(/\r?\n[ \t]+/g, " ")
      const rcpt = m.rcptTo[0]!
      expect(raw).toContain(`Subject: Hi ${rcpt}`)
      expect(raw).toContain(`Dear ${rcpt}`)
      expect(raw).toMatch(/^List-Unsubscribe: <http[^>]+\/u\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+>, <mailto:unsubscribe@/m)
      expect(raw).toContain("List-Unsubscribe-Post: List-Unsubscribe=One-Click")
      expect(raw).toContain("X-Herald-Channel: bulk")
      expect(raw).toMatch(/^DKIM-Signature:/m)
    }
    const done = await eventually(async () => {
      const r = (await api("GET", `/v1/bulk/campaigns/${c.id}`)).json
      return r.status === "completed" ? r : undefined
    }, "completed")
    expect(done).toMatchObject({ sent_count: expected, failed_count: 0, delivery_rate: 1, total_contacts: expected })
    const events = await query<{ event: string; payload: { email?: string; campaign_id: string } }>(rig.app.databaseUrl,
      `SELECT event, payload FROM events WHERE payload->>'campaign_id' = $1`, [c.id])
    const perContact = events.filter((e) => e.event === "campaign.email.sent").map((e) => e.payload.email).sort()
    expect(perContact).toEqual(to)
    expect(events.filter((e) => e.event === "campaign.completed").map((e) => e.payload)).toEqual([
      { campaign_id: c.id, name: "Spring", sent_count: expected, failed_count: 0, delivery_rate: 1 }
    ])
    expect(events.some((e) => e.event === "email.sent")).toBe(false)
    const messages = await query<{ n: number }>(rig.app.databaseUrl, `SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1`, [c.id])
    expect(messages[0]!.n).toBe(expected)
  })
})

describe("a campaign to the simulator", () => {
  it("is rendered for its contact like any other, so the audit shows the subject as sent", async () => {
    const rcpt = "delivered+rendered@simulator.herald.invalid"
    const c = await draft({ list_ids: [await listWith([rcpt])], subject: "Hi {{ email }}" })
    expect((await api("POST", `/v1/bulk/campaigns/${c.id}/send`)).status).toBe(200)
    const found = await eventually(async () => {
      const items = (await api("GET", `/v1/mail/audit?search=${encodeURIComponent(rcpt)}`)).json.items
      return items.length === 1 && items[0].event === "sent" ? items : undefined
    }, "the simulator's delivery in the audit")
    expect(found[0].subject).toBe(`Hi ${rcpt}`)
  })
})
