/**
 * Sequences against a running appliance: the CRUD and the spec's step shape, content from a
 * template or the step's own fields, the reorder's checks (body first, then the 409 with a paused
 * subscriber), enrolment counts in every category including the cap, the subscription actions,
 * and cancellation by every kind of suppression with its `sequence.cancelled`.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { insertSuppression } from "../../src/platform/suppressions/suppress.ts"
import { withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type Sender, type SendingApp, siblingKey, startSendingApp } from "../support/sending.ts"

let rig: SendingApp
let sender: Sender

beforeAll(async () => {
  rig = await startSendingApp({ HERALD_ENROLL_CAP: "3" })
  sender = rig.sender
})
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

const newSequence = async (extra: Record<string, unknown> = {}) => {
  const res = await api("POST", "/v1/bulk/sequences", { name: "Welcome", from_email: sender.from, ...extra })
  expect(res.status).toBe(201)
  return res.json.id as string
}
const addStep = async (id: string, body: Record<string, unknown>) => {
  const res = await api("POST", `/v1/bulk/sequences/${id}/steps`, body)
  expect(res.status).toBe(201)
  return res.json
}
/** A list with `emails` as members (created as contacts of the key). */
const newList = async (emails: ReadonlyArray<string>) => {
  const list = await api("POST", "/v1/bulk/lists", { name: `L${Math.random()}` })
  expect(list.status).toBe(201)
  expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: emails })).status).toBe(200)
  return list.json.id as string
}
const subscriptionsOf = async (id: string) => (await api("GET", `/v1/bulk/sequences/${id}/subscriptions?limit=200`)).json.items as Array<any>
const eventsOf = (event: string, sequenceId: string) =>
  db<{ payload: any }>("SELECT payload FROM events WHERE event = $1 AND payload->>'campaign_id' = $2 ORDER BY created_at", [event, sequenceId])

describe("sequences and steps", () => {
  it("creates a sequence and steps in the spec's shapes; another key's sequence is not found", async () => {
    const created = await api("POST", "/v1/bulk/sequences", { name: "Onboarding", from_email: sender.from })
    expect(created.status).toBe(201)
    expect(created.json).toEqual({
      id: expect.stringMatching(/^sq_/), name: "Onboarding", status: "active", from_email: sender.from, from_name: null, reply_to: null, trigger: null,
      created_at: expect.any(String), step_count: 0, subscriptions: { active: 0, paused: 0, completed: 0, cancelled: 0 }
    })
    const id = created.json.id
    const step = await addStep(id, { offset_seconds: 60, subject: "Hi {{ name }}", html: "<p>Hello</p>" })
    expect(step).toEqual({
      id: 1, sequence_id: id, position: 1, offset_seconds: 60, subject: "Hi {{ name }}", preheader: null, mjml: null,
      html: "<p>Hello</p>", body_text: null, from_email: null, from_name: null, reply_to: null, template_id: null
    })
    const second = await addStep(id, { subject: "Two", body_text: "text" })
    expect(second).toMatchObject({ id: 2, position: 2 })
    expect((await api("GET", `/v1/bulk/sequences/${id}`)).json.step_count).toBe(2)
    expect((await api("GET", `/v1/bulk/sequences/${id}/steps/2`)).json).toEqual(second)
    expect((await api("PATCH", `/v1/bulk/sequences/${id}/steps/2`, { offset_seconds: 120 })).json.offset_seconds).toBe(120)
    const otherKey = await siblingKey(rig.app, sender)
    expect((await api("GET", `/v1/bulk/sequences/${id}`, undefined, otherKey.token)).status).toBe(404)
    expect((await api("GET", `/v1/bulk/sequences/${id}/steps`, undefined, otherKey.token)).status).toBe(404)
    expect((await api("GET", "/v1/bulk/sequences?limit=0")).status).toBe(400)
    expect((await api("DELETE", `/v1/bulk/sequences/${id}/steps/1`)).json).toEqual({ id: 1, deleted: true })
    expect((await api("GET", `/v1/bulk/sequences/${id}/steps`)).json.map((s: any) => [s.id, s.position])).toEqual([[2, 1]])
    expect((await api("DELETE", `/v1/bulk/sequences/${id}`)).json).toEqual({ id, deleted: true })
  })

  it("takes content from the template where the step has none, compiles MJML, and refuses an empty or broken step", async () => {
    const template = await api("POST", "/v1/bulk/templates", { name: "T", subject: "From template", html: "<p>T</p>" })
    const id = await newSequence()
    const step = await addStep(id, { template_id: template.json.id })
    expect(step).toMatchObject({ template_id: template.json.id, subject: null })
    const mjml = await addStep(id, { subject: "M", mjml: "<mjml><mj-body><mj-section><mj-column><mj-text>Hi</mj-text></mj-column></mj-section></mj-body></mjml>" })
    expect(mjml.html).toContain("Hi")
    const empty = await api("POST", `/v1/bulk/sequences/${id}/steps`, { html: "<p>x</p>" })
    expect(empty.status).toBe(400)
    expect(empty.json.error).toMatchObject({ code: "validation_failed", param: "subject" })
    const broken = await api("POST", `/v1/bulk/sequences/${id}/steps`, { subject: "{{ unclosed", html: "<p>x</p>" })
    expect(broken.json.error).toMatchObject({ code: "render_failed", param: "subject" })
    const unknown = await api("POST", `/v1/bulk/sequences/${id}/steps`, { template_id: "tp_nope" })
    expect(unknown.json.error).toMatchObject({ code: "validation_failed", param: "template_id" })
    // A template a step uses is not deleted.
    const deleting = await api("DELETE", `/v1/bulk/templates/${template.json.id}`)
    expect(deleting.status).toBe(409)
    expect(deleting.json.error.message).toContain(`sequence ${id} step ${step.id}`)
  })
})

describe("the sequence's default sender", () => {
  it("is not removed while a step takes its sender from it (the step could never be sent)", async () => {
    const id = await newSequence()
    const step = await addStep(id, { subject: "A", html: "<p>a</p>" })
    const refused = await api("PATCH", `/v1/bulk/sequences/${id}`, { from_email: null })
    expect(refused.status, refused.text).toBe(400)
    expect(refused.json.error).toMatchObject({ code: "validation_failed", param: "from_email" })
    expect((await api("GET", `/v1/bulk/sequences/${id}`)).json.from_email).toBe(sender.from)
    // Once the step has its own sender, the default may go.
    expect((await api("PATCH", `/v1/bulk/sequences/${id}/steps/${step.id}`, { from_email: sender.from })).status).toBe(200)
    const removed = await api("PATCH", `/v1/bulk/sequences/${id}`, { from_email: null, name: "Renamed" })
    expect(removed.status, removed.text).toBe(200)
    expect(removed.json).toMatchObject({ from_email: null, name: "Renamed" })
    // A step whose template names the sender does not need the default either.
    const template = await api("POST", "/v1/bulk/templates", { name: "With sender", subject: "T", html: "<p>t</p>", from_email: sender.from })
    expect(template.status, template.text).toBe(201)
    const other = await newSequence()
    await addStep(other, { template_id: template.json.id })
    expect((await api("PATCH", `/v1/bulk/sequences/${other}`, { from_email: null })).status).toBe(200)
  })
})

describe("reorder", () => {
  it("checks the body first (400 param order), then refuses with a paused subscriber (409), then renumbers", async () => {
    const id = await newSequence()
    const a = await addStep(id, { subject: "A", html: "<p>a</p>", offset_seconds: 86_400 })
    const b = await addStep(id, { subject: "B", html: "<p>b</p>" })
    const c = await addStep(id, { subject: "C", html: "<p>c</p>" })
    const list = await newList(["reorder@example.org"])
    expect((await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list })).json.enrolled).toBe(1)
    const [sub] = await subscriptionsOf(id)
    expect((await api("POST", `/v1/bulk/sequences/${id}/subscriptions/${sub.id}/pause`)).json.state).toBe("paused")
    expect((await api("POST", `/v1/bulk/sequences/${id}/subscriptions/${sub.id}/pause`)).status).toBe(409)

    for (const order of [[c.id, a.id], [c.id, a.id, a.id], [c.id, a.id, b.id, 99]]) {
      const bad = await api("PUT", `/v1/bulk/sequences/${id}/steps/order`, { order })
      expect(bad.status).toBe(400)
      expect(bad.json.error).toMatchObject({ code: "validation_failed", param: "order" })
    }
    const refused = await api("PUT", `/v1/bulk/sequences/${id}/steps/order`, { order: [c.id, a.id, b.id] })
    expect(refused.status).toBe(409)
    expect(refused.json.error.code).toBe("conflict")
    expect((await api("DELETE", `/v1/bulk/sequences/${id}/steps/${b.id}`)).status).toBe(409)
    expect((await api("DELETE", `/v1/bulk/sequences/${id}`)).status).toBe(409)

    expect((await api("POST", `/v1/bulk/sequences/${id}/subscriptions/${sub.id}/cancel`)).json).toMatchObject({ state: "cancelled", reason: "manual" })
    expect((await api("POST", `/v1/bulk/sequences/${id}/subscriptions/${sub.id}/resume`)).status).toBe(409)
    const reordered = await api("PUT", `/v1/bulk/sequences/${id}/steps/order`, { order: [c.id, a.id, b.id] })
    expect(reordered.status).toBe(200)
    expect(reordered.json.map((s: any) => [s.id, s.position])).toEqual([[c.id, 1], [a.id, 2], [b.id, 3]])
    expect((await eventsOf("sequence.cancelled", id)).map((e) => e.payload)).toEqual([
      { email: "reorder@example.org", campaign_id: id, reason: "manual" }
    ])
  })
})

describe("enrolment", () => {
  it("counts every category, stops at HERALD_ENROLL_CAP and continues on the next call", async () => {
    const id = await newSequence()
    await addStep(id, { subject: "A", html: "<p>a</p>", offset_seconds: 86_400 })
    const emails = ["e1@example.org", "e2@example.org", "e3@example.org", "e4@example.org", "e5@example.org", "sup@example.org", "gone@example.org", "old@example.org"]
    const list = await newList(emails)
    // old: enrolled through another list, then cancelled (terminal); gone: unsubscribed contact (not active); sup: suppressed.
    const oldList = await newList(["old@example.org"])
    expect((await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: oldList })).json.enrolled).toBe(1)
    const [old] = await subscriptionsOf(id)
    await api("POST", `/v1/bulk/sequences/${id}/subscriptions/${old.id}/cancel`)
    expect((await api("POST", "/v1/client/suppressions", { email: "sup@example.org" })).status).toBe(201)
    const gone = await api("GET", "/v1/bulk/contacts/gone%40example.org")
    expect((await api("PATCH", `/v1/bulk/contacts/${gone.json.id}`, { status: "unsubscribed" })).status).toBe(200)

    const first = await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list })
    expect(first.status).toBe(200)
    expect(first.headers.get("ratelimit-limit")).not.toBeNull()
    expect(first.json).toEqual({ enrolled: 3, already_in: 0, skipped_terminal: 1, suppressed: 1, total: 7, truncated: true })
    const second = await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list })
    expect(second.json).toEqual({ enrolled: 2, already_in: 3, skipped_terminal: 1, suppressed: 1, total: 7, truncated: false })
    const third = await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list })
    expect(third.json).toEqual({ enrolled: 0, already_in: 5, skipped_terminal: 1, suppressed: 1, total: 7, truncated: false })
    expect(await eventsOf("sequence.subscribed", id)).toHaveLength(6)
  })

  it("enrols each contact once when two enrolments run at once", async () => {
    const id = await newSequence()
    await addStep(id, { subject: "A", html: "<p>a</p>", offset_seconds: 86_400 })
    const list = await newList(["c1@example.org", "c2@example.org", "c3@example.org"])
    const both = await Promise.all([1, 2].map(() => api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list })))
    expect(both.map((r) => r.json.enrolled).sort()).toEqual([0, 3])
    expect(await subscriptionsOf(id)).toHaveLength(3)
    expect(await eventsOf("sequence.subscribed", id)).toHaveLength(3)
  })

  it("refuses a missing list_id, an inactive sequence, a sequence without steps (400 with param) and an unknown sequence or list (404)", async () => {
    const id = await newSequence()
    const list = await newList(["x@example.org"])
    const invalid = async (route: string, body: unknown, param: string) => {
      const res = await api("POST", route, body)
      expect(res.status, res.text).toBe(400)
      expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param })
    }
    const notFound = async (route: string, body: unknown, token = sender.token) => {
      const res = await api("POST", route, body, token)
      expect(res.status, res.text).toBe(404)
      expect(res.json.error.code).toBe("not_found")
    }
    await invalid(`/v1/bulk/sequences/${id}/enroll`, { list_id: list }, "steps")
    await addStep(id, { subject: "A", html: "<p>a</p>", offset_seconds: 86_400 })
    await invalid(`/v1/bulk/sequences/${id}/enroll`, {}, "list_id")
    await invalid(`/v1/bulk/sequences/${id}/enroll`, { list_id: 5 }, "list_id")
    await notFound(`/v1/bulk/sequences/${id}/enroll`, { list_id: "ls_nope" })
    await notFound("/v1/bulk/sequences/sq_nope/enroll", { list_id: list })
    // Another key's sequence or list is not found either (DESIGN "Owner").
    const otherKey = await siblingKey(rig.app, sender)
    await notFound(`/v1/bulk/sequences/${id}/enroll`, { list_id: list }, otherKey.token)
    const otherList = await api("POST", "/v1/bulk/lists", { name: "Theirs" }, otherKey.token)
    await notFound(`/v1/bulk/sequences/${id}/enroll`, { list_id: otherList.json.id })
    await api("PATCH", `/v1/bulk/sequences/${id}`, { status: "inactive" })
    await invalid(`/v1/bulk/sequences/${id}/enroll`, { list_id: list }, "status")
    // Nothing was enrolled by any refused call.
    expect(await subscriptionsOf(id)).toEqual([])
    expect(await eventsOf("sequence.subscribed", id)).toEqual([])
  })

  it("enrols only the sendable: a pending member of a list that requires confirmation waits, a platform suppression counts as suppressed", async () => {
    const id = await newSequence()
    await addStep(id, { subject: "A", html: "<p>a</p>", offset_seconds: 86_400 })
    const list = await newList(["early@optin.example"])
    const confirming = await api("PUT", `/v1/bulk/lists/${list}/confirmation`, { require_confirmation: true, confirm_from_email: sender.from })
    expect(confirming.status, confirming.text).toBe(200)
    // Members added from now on pend until they confirm; the early one stays confirmed.
    expect((await api("POST", `/v1/bulk/lists/${list}/contacts`, { contacts: ["late@optin.example", "later@optin.example"] })).status).toBe(200)
    await withServices(rig.app, insertSuppression({ accountId: null, email: "early@optin.example", reason: "manual", source: "test", at: new Date(), onExisting: "keep" }).pipe(Effect.asVoid))
    const res = await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list })
    expect(res.json).toEqual({ enrolled: 0, already_in: 0, skipped_terminal: 0, suppressed: 1, total: 3, truncated: false })
    // The list's own count agrees: nobody is sendable on it.
    expect((await api("GET", `/v1/bulk/lists/${list}`)).json).toMatchObject({ sendable_count: 0, pending_count: 2 })
    const opened = await api("PUT", `/v1/bulk/lists/${list}/confirmation`, { require_confirmation: false })
    expect(opened.status, opened.text).toBe(200)
    expect((await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list })).json).toEqual({
      enrolled: 2, already_in: 0, skipped_terminal: 0, suppressed: 1, total: 3, truncated: false
    })
  })
})

describe("cancellation by suppression", () => {
  it("cancels every running subscription of the address with the mapped reason, once", async () => {
    const id = await newSequence()
    await addStep(id, { subject: "A", html: "<p>a</p>", offset_seconds: 86_400 })
    const emails = ["unsub@example.org", "bounce@example.org", "complaint@example.org", "manual@example.org"]
    const list = await newList(emails)
    // HERALD_ENROLL_CAP is 3 in this file: the second call enrols the fourth.
    await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list })
    await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list })
    const paused = (await subscriptionsOf(id)).find((s) => s.email === "bounce@example.org")
    await api("POST", `/v1/bulk/sequences/${id}/subscriptions/${paused.id}/pause`)

    const unsub = await api("GET", "/v1/bulk/contacts/unsub%40example.org")
    await api("PATCH", `/v1/bulk/contacts/${unsub.json.id}`, { status: "unsubscribed" })
    await api("POST", "/v1/client/suppressions", { email: "manual@example.org" })
    const at = new Date()
    for (const [email, reason] of [["bounce@example.org", "bounce"], ["complaint@example.org", "complaint"]] as const) {
      await withServices(rig.app, insertSuppression({ accountId: sender.accountId, email, reason, source: "test", at, onExisting: "keep" }).pipe(Effect.asVoid))
    }
    // Suppressed again: nothing left to cancel, nothing emitted.
    await withServices(rig.app, insertSuppression({ accountId: sender.accountId, email: "bounce@example.org", reason: "bounce", source: "again", at, onExisting: "replace" }).pipe(Effect.asVoid))

    const byEmail = Object.fromEntries((await subscriptionsOf(id)).map((s) => [s.email, [s.state, s.reason]]))
    expect(byEmail).toEqual({
      "unsub@example.org": ["cancelled", "unsubscribed"],
      "bounce@example.org": ["cancelled", "bounced"],
      "complaint@example.org": ["cancelled", "complained"],
      "manual@example.org": ["cancelled", "suppressed"]
    })
    const events = (await eventsOf("sequence.cancelled", id)).map((e) => e.payload)
    expect(events).toHaveLength(4)
    expect(events).toContainEqual({ email: "bounce@example.org", campaign_id: id, reason: "bounced" })
    expect((await api("GET", `/v1/bulk/sequences/${id}`)).json.subscriptions).toEqual({ active: 0, paused: 0, completed: 0, cancelled: 4 })
  })
})
