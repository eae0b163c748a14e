/**
 * What the API gains for the marketers' console (issue 29), against a running appliance: a
 * contact's messages, a template version's content, the import preview's invalid rows, enrolment by
 * segment, and a list's confirmation mail previewed. For each: the key's own resources only
 * (another key's, of the same account or another, is 404 not_found) and bad input 400
 * validation_failed naming its param.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sendCampaignTo } from "../support/campaigns.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { newSender, type Sender, siblingKey, type SendingApp, startSendingApp } from "../support/sending.ts"

let rig: SendingApp
let sender: Sender
/** Another key of the sender's account: bulk resources belong to a key. */
let sibling: Sender
/** Another account. */
let stranger: Sender

beforeAll(async () => {
  // A small enrolment cap, so that enrolling a segment shows it stops where a list's enrolment does.
  rig = await startSendingApp({ HERALD_ENROLL_CAP: "2" })
  sender = rig.sender
  sibling = { ...sender, ...(await siblingKey(rig.app, sender)) }
  stranger = await newSender(rig.app, rig.dns, { packageId: "growth" })
})
afterAll(() => rig.stop())

const as = (who: Sender) => (method: string, route: string, body?: unknown) =>
  rig.app.request(method, route, { token: who.token, ...(body === undefined ? {} : { body }) })
const api = (method: string, route: string, body?: unknown) => as(sender)(method, route, body)

const rigQuery = <T extends Record<string, unknown> = Record<string, any>>(text: string, params: ReadonlyArray<unknown> = []) =>
  query<T>(rig.app.databaseUrl, text, params)

const expectNotFound = (res: { status: number; json: any }) => {
  expect(res.status).toBe(404)
  expect(res.json.error.code).toBe("not_found")
}
const expectInvalid = (res: { status: number; json: any }, param: string) => {
  expect(res.status).toBe(400)
  expect(res.json.error).toMatchObject({ code: "validation_failed", param })
}

describe("GET /v1/bulk/contacts/{email}/messages", () => {
  const address = `Reader.${Date.now()}@inbox.example`
  const messagesOf = (who: Sender, email: string, query = "") => as(who)("GET", `/v1/bulk/contacts/${encodeURIComponent(email)}/messages${query}`)

  it("lists the bulk messages this key sent to the contact, newest first, and not another key's to the same address", async () => {
    await sendCampaignTo(rig.app, sender, [address])
    // The sibling key has its own contact of the same address and mails it too.
    await sendCampaignTo(rig.app, sibling, [address.toLowerCase()])
    const one = await eventually(async () => {
      const res = await messagesOf(sender, address)
      return res.status === 200 && res.json.total === 1 ? res : undefined
    }, "the campaign's message to the contact")
    expect(one.json).toMatchObject({ total: 1, limit: 50, offset: 0 })
    const [item] = one.json.items
    expect(Object.keys(item).sort()).toEqual(["created_at", "id", "status", "subject"])
    expect(item).toMatchObject({ subject: "Newsletter", status: expect.stringMatching(/^(queued|deferred|sent|bounced|failed)$/) })
    // The id is the message view's: this key reads it there.
    expect((await api("GET", `/v1/mail/messages/${item.id}`)).json.recipients[0].email.toLowerCase()).toBe(address.toLowerCase())
    const theirs = await eventually(async () => {
      const res = await messagesOf(sibling, address)
      return res.status === 200 && res.json.total === 1 ? res : undefined
    }, "the sibling's message")
    expect(theirs.json.items[0].id).not.toBe(item.id)

    // A second message to the contact comes first; paging walks the rest.
    const second = await api("POST", "/v1/bulk/campaigns", {
      name: "Later", from_email: sender.from, subject: "Later news", body_text: "x",
      list_ids: (await api("GET", `/v1/bulk/contacts/${encodeURIComponent(address)}`)).json.lists.map((l: { list_id: string }) => l.list_id)
    })
    expect((await api("POST", `/v1/bulk/campaigns/${second.json.id}/send`)).status).toBe(200)
    const two = await eventually(async () => {
      const res = await messagesOf(sender, address)
      return res.json.total === 2 ? res : undefined
    }, "the second campaign's message")
    expect(two.json.items.map((m: { subject: string }) => m.subject)).toEqual(["Later news", "Newsletter"])
    const page = await messagesOf(sender, address, "?limit=1&offset=1")
    expect(page.json).toMatchObject({ total: 2, limit: 1, offset: 1, items: [{ id: item.id }] })
  })

  it("is 404 for another key's contact, of the same account or another", async () => {
    const own = `only-mine.${Date.now()}@inbox.example`
    expect((await api("POST", "/v1/bulk/contacts", { email: own })).status).toBe(201)
    expect((await messagesOf(sender, own)).json).toMatchObject({ total: 0, items: [] })
    expectNotFound(await messagesOf(sibling, own))
    expectNotFound(await messagesOf(stranger, own))
  })

  it("refuses a page out of bounds (400 naming the parameter)", async () => {
    const own = `bounds.${Date.now()}@inbox.example`
    expect((await api("POST", "/v1/bulk/contacts", { email: own })).status).toBe(201)
    expectInvalid(await messagesOf(sender, own, "?limit=0"), "limit")
    expectInvalid(await messagesOf(sender, own, "?limit=201"), "limit")
    expectInvalid(await messagesOf(sender, own, "?offset=-1"), "offset")
  })
})

describe("GET /v1/bulk/templates/{id}/versions/{version}", () => {
  it("answers a version as the history lists it, with the content it stored", async () => {
    const created = await api("POST", "/v1/bulk/templates", {
      name: "Welcome", subject: "Hi {{ name }}", html: "<p>First {{ name }}</p>", body_text: "First", preheader: "Pre", vars: { name: "friend" }
    })
    expect(created.status).toBe(201)
    const id = created.json.id
    expect((await api("PATCH", `/v1/bulk/templates/${id}`, { html: "<p>Second</p>", mjml: null })).status).toBe(200)
    const history = await api("GET", `/v1/bulk/templates/${id}/versions`)
    const [newest, oldest] = history.json.items
    const first = await api("GET", `/v1/bulk/templates/${id}/versions/${oldest.id}`)
    expect(first.status).toBe(200)
    expect(first.json).toEqual({
      ...oldest,
      html: "<p>First {{ name }}</p>", body_text: "First", mjml: null, preheader: "Pre", vars: { name: "friend" },
      from_email: null, from_name: null, reply_to: null
    })
    const second = await api("GET", `/v1/bulk/templates/${id}/versions/${newest.id}`)
    expect(second.json).toMatchObject({ ...newest, html: "<p>Second</p>" })
  })

  it("is 404 for another key's template, and for a version it does not have", async () => {
    const created = await api("POST", "/v1/bulk/templates", { name: "Mine", html: "<p>x</p>" })
    const route = `/v1/bulk/templates/${created.json.id}/versions/1`
    expect((await api("GET", route)).status).toBe(200)
    expectNotFound(await as(sibling)("GET", route))
    expectNotFound(await as(stranger)("GET", route))
    expectNotFound(await api("GET", `/v1/bulk/templates/${created.json.id}/versions/99`))
  })

  it("refuses a version that is not a number (400 naming it)", async () => {
    const created = await api("POST", "/v1/bulk/templates", { name: "Mine", html: "<p>x</p>" })
    expectInvalid(await api("GET", `/v1/bulk/templates/${created.json.id}/versions/first`), "vid")
    expectInvalid(await api("GET", `/v1/bulk/templates/${created.json.id}/versions/-1`), "vid")
  })
})

describe("POST /v1/bulk/contacts/import-preview: invalid rows", () => {
  it("lists the invalid rows by their 0-based position, with the import's reasons", async () => {
    const res = await api("POST", "/v1/bulk/contacts/import-preview", { emails: ["ok@inbox.example", " not-an-address ", "", "OK@inbox.example", "grace@"] })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({
      total_received: 5,
      invalid: [
        { index: 1, email: "not-an-address", reason: "invalid email syntax" },
        { index: 2, email: "", reason: "missing email" },
        { index: 4, email: "grace@", reason: "invalid email syntax" }
      ]
    })
    // The import reports the same rows the same way (its row counts from 1).
    const imported = await api("POST", "/v1/bulk/contacts/import", { contacts: [{ email: "ok@inbox.example" }, { email: " not-an-address " }, { email: "" }] })
    expect(imported.json.errors).toEqual([
      { row: 2, email: "not-an-address", reason: "invalid email syntax" },
      { row: 3, email: "", reason: "missing email" }
    ])
  })

  it("lists the first 100 invalid rows; the counts still count them all", async () => {
    const emails = Array.from({ length: 150 }, (_, i) => `broken-${i}`)
    const res = await api("POST", "/v1/bulk/contacts/import-preview", emails)
    expect(res.json.invalid_syntax).toBe(150)
    expect(res.json.invalid).toHaveLength(100)
    expect(res.json.invalid.at(-1)).toEqual({ index: 99, email: "broken-99", reason: "invalid email syntax" })
  })

  it("names only the key's own contacts as existing", async () => {
    const address = `preview-theirs.${Date.now()}@inbox.example`
    expect((await as(sibling)("POST", "/v1/bulk/contacts", { email: address })).status).toBe(201)
    expect((await api("POST", "/v1/bulk/contacts/import-preview", [address])).json.existing).toEqual([])
    expect((await as(sibling)("POST", "/v1/bulk/contacts/import-preview", [address])).json.existing).toEqual([address])
  })

  it("refuses a body that is not a list of addresses (400 naming it)", async () => {
    expectInvalid(await api("POST", "/v1/bulk/contacts/import-preview", { emails: "ada@example.net" }), "emails")
    expectInvalid(await api("POST", "/v1/bulk/contacts/import-preview", { emails: ["x".repeat(5000)] }), "emails[0]")
  })
})

describe("POST /v1/bulk/sequences/{id}/enroll with segment_id", () => {
  const stamp = Date.now()
  const newSequence = async () => {
    const created = await api("POST", "/v1/bulk/sequences", { name: "Welcome", from_email: sender.from })
    expect(created.status).toBe(201)
    expect((await api("POST", `/v1/bulk/sequences/${created.json.id}/steps`, { subject: "A", html: "<p>a</p>", offset_seconds: 86_400 })).status).toBe(201)
    return created.json.id as string
  }
  const vipSegment = async (who: Sender) => {
    const created = await as(who)("POST", "/v1/bulk/segments", { name: "VIP", rules: { match: "all", rules: [{ field: "tag", op: "has", value: `vip-${stamp}` }] } })
    expect(created.status).toBe(201)
    return created.json.id as string
  }

  it("enrols the segment's sendable contacts with the list enrolment's counts and cap", async () => {
    for (const name of ["v1", "v2", "v3", "sup", "plain"]) {
      const tags = name === "plain" ? [] : [`vip-${stamp}`]
      expect((await api("POST", "/v1/bulk/contacts", { email: `${name}.${stamp}@inbox.example`, tags })).status).toBe(201)
    }
    expect((await api("POST", "/v1/client/suppressions", { email: `sup.${stamp}@inbox.example` })).status).toBe(201)
    const id = await newSequence()
    const segment = await vipSegment(sender)
    const enrol = () => api("POST", `/v1/bulk/sequences/${id}/enroll`, { segment_id: segment })
    const first = await enrol()
    expect(first.status).toBe(200)
    expect(first.json).toEqual({ enrolled: 2, already_in: 0, skipped_terminal: 0, suppressed: 1, total: 4, truncated: true })
    expect((await enrol()).json).toEqual({ enrolled: 1, already_in: 2, skipped_terminal: 0, suppressed: 1, total: 4, truncated: false })
    const subscribed = await api("GET", `/v1/bulk/sequences/${id}/subscriptions`)
    expect(subscribed.json.items.map((s: { email: string }) => s.email).sort())
      .toEqual(["v1", "v2", "v3"].map((n) => `${n}.${stamp}@inbox.example`))
  })

  it("is 404 for another key's segment", async () => {
    const id = await newSequence()
    expectNotFound(await api("POST", `/v1/bulk/sequences/${id}/enroll`, { segment_id: await vipSegment(sibling) }))
    expectNotFound(await api("POST", `/v1/bulk/sequences/${id}/enroll`, { segment_id: await vipSegment(stranger) }))
    expectNotFound(await api("POST", `/v1/bulk/sequences/${id}/enroll`, { segment_id: "sg_nope" }))
  })

  it("wants exactly one of list_id and segment_id (400 naming it), and enrols no one then", async () => {
    const id = await newSequence()
    const segment = await vipSegment(sender)
    const list = await api("POST", "/v1/bulk/lists", { name: "Both" })
    expectInvalid(await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list.json.id, segment_id: segment }), "segment_id")
    expectInvalid(await api("POST", `/v1/bulk/sequences/${id}/enroll`, {}), "list_id")
    expectInvalid(await api("POST", `/v1/bulk/sequences/${id}/enroll`, { segment_id: 5 }), "segment_id")
    expect((await api("GET", `/v1/bulk/sequences/${id}/subscriptions`)).json.total).toBe(0)
  })
})

describe("POST /v1/bulk/lists/{id}/confirmation/preview", () => {
  const newList = async (name: string) => {
    const list = await api("POST", "/v1/bulk/lists", { name })
    expect(list.status).toBe(201)
    return list.json.id as string
  }
  const preview = (id: string, body?: unknown, who = sender) => as(who)("POST", `/v1/bulk/lists/${id}/confirmation/preview`, body)

  it("renders the list's subject and intro in the real mail's frame, with a placeholder link, and queues nothing", async () => {
    const id = await newList("Garden news")
    const configured = await api("PUT", `/v1/bulk/lists/${id}/confirmation`, {
      require_confirmation: true,
      confirm_from_email: sender.from,
      confirm_subject: "Confirm {{ list_name }}",
      confirm_intro: "Hello {{ email }}, <b>welcome</b> to {{ list_name }}."
    })
    expect(configured.status).toBe(200)
    const res = await preview(id, {})
    expect(res.status).toBe(200)
    expect(Object.keys(res.json).sort()).toEqual(["html", "subject", "text"])
    expect(res.json.subject).toBe("Confirm Garden news")
    expect(res.json.text).toMatch(/^Hello new\.member@example\.com, <b>welcome<\/b> to Garden news\.\n\nConfirm your subscription: http\S+\/confirm\/preview\n/)
    expect(res.json.text).toContain("for the list \"Garden news\"")
    // The intro is text: escaped in the html, as in the real mail.
    expect(res.json.html).toContain("&lt;b&gt;welcome&lt;/b&gt;")
    expect(res.json.html).toMatch(/href="http\S+\/confirm\/preview"/)
    // No body at all works too, and nothing was queued by either.
    expect((await preview(id)).json).toEqual(res.json)
    const queued = await rigQuery(`SELECT count(*)::int AS n FROM messages WHERE key_id = $1 AND origin = 'confirmation'`, [sender.keyId])
    expect(queued[0]!.n).toBe(0)
  })

  it("is the real confirmation mail's content, but for its link and recipient", async () => {
    const id = await newList("Same frame")
    await api("PUT", `/v1/bulk/lists/${id}/confirmation`, { require_confirmation: true, confirm_from_email: sender.from })
    const shown = await preview(id)
    const address = `new.member@example.com`
    expect((await api("POST", `/v1/bulk/lists/${id}/contacts`, { contacts: [address] })).json.confirmations_queued).toBe(1)
    const [sent] = await rigQuery(`SELECT id FROM messages WHERE key_id = $1 AND origin = 'confirmation' ORDER BY created_at DESC LIMIT 1`, [sender.keyId])
    const content = await api("GET", `/v1/mail/messages/${sent!.id}/content`)
    expect(content.status).toBe(200)
    const subject = content.json.headers.find((h: { name: string }) => h.name === "Subject").value
    expect(subject).toBe(shown.json.subject)
    // The same text but the token (the message view redacts a real one) and the request's minute.
    const normal = (text: string) => text.replace(/\/confirm\/[^\s"]+/g, "/confirm/TOKEN").replace(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/g, "DATE")
    expect(normal(content.json.text)).toBe(normal(shown.json.text))
  })

  it("is 404 for another key's list", async () => {
    const id = await newList("Private")
    expectNotFound(await preview(id, {}, sibling))
    expectNotFound(await preview(id, {}, stranger))
    expectNotFound(await preview("ls_nope", {}))
  })

  it("refuses a bad id or a subject that does not compile (400 naming it)", async () => {
    expectInvalid(await preview("x".repeat(300), {}), "id")
    const id = await newList("Broken")
    // Stored before the engine checked settings: made broken in the table, as an old row could be.
    await rigQuery(`UPDATE lists SET confirm_subject = '{{ x | nope }}' WHERE id = $1`, [id])
    const res = await preview(id, {})
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ code: "render_failed", param: "confirm_subject" })
  })
})
