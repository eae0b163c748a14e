/**
 * Sequences that start themselves (issue 30 item 10) against a running appliance: a trigger must
 * name a list of the sequence's key; a list a trigger names is in use; only a membership created
 * sendable (the members call, an import's list_ids) or moved pending → confirmed (the confirmation
 * page, confirmation switched off) enrols, with its `sequence.subscribed`, once, under the
 * enrolment rules (no backfill, active sequences only, suppressed and ended ones left out); a
 * refused call enrols nobody; and a members call onto a triggered list counts in the per-minute
 * window as `enroll` does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { query } from "../support/database.ts"
import { newSender, type Sender, type SendingApp, siblingKey, startSendingApp } from "../support/sending.ts"

let rig: SendingApp
let sender: Sender

beforeAll(async () => {
  rig = await startSendingApp()
  sender = rig.sender
}, 60_000)
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

const newList = async (token = sender.token) => {
  const list = await api("POST", "/v1/bulk/lists", { name: `L${Math.random()}` }, token)
  expect(list.status).toBe(201)
  return list.json.id as string
}
const addMembers = async (listId: string, contacts: ReadonlyArray<string>, token = sender.token) => {
  const res = await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts }, token)
  expect(res.status).toBe(200)
  return res
}
/** An active sequence with one step, triggered by `listId`. */
const triggeredSequence = async (listId: string, token = sender.token, from = sender.from) => {
  const seq = await api("POST", "/v1/bulk/sequences", { name: "Welcome", from_email: from, trigger: { type: "list_joined", list_id: listId } }, token)
  expect(seq.status).toBe(201)
  expect(seq.json.trigger).toEqual({ type: "list_joined", list_id: listId })
  expect((await api("POST", `/v1/bulk/sequences/${seq.json.id}/steps`, { subject: "Hi", html: "<p>x</p>", offset_seconds: 3600 }, token)).status).toBe(201)
  return seq.json.id as string
}
const enrolledEmails = async (sequenceId: string) =>
  (await db<{ email: string }>("SELECT email FROM sequence_subscriptions WHERE sequence_id = $1 ORDER BY email", [sequenceId])).map((r) => r.email)
const subscribedEvents = async (sequenceId: string) =>
  (await db<{ email: string }>(
    "SELECT payload->>'email' AS email FROM events WHERE event = 'sequence.subscribed' AND payload->>'campaign_id' = $1 ORDER BY 1",
    [sequenceId]
  )).map((r) => r.email)

describe("a sequence's trigger", () => {
  it("must name a list of the sequence's key (400 param trigger.list_id, nothing written), and shows on read; null removes it", async () => {
    const other = await siblingKey(rig.app, sender)
    const foreign = await newList(other.token)
    const before = (await db<{ n: number }>("SELECT count(*)::int AS n FROM sequences"))[0]!.n
    for (const listId of [foreign, "ls_unknown"]) {
      const res = await api("POST", "/v1/bulk/sequences", { name: "X", trigger: { type: "list_joined", list_id: listId } })
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ code: "validation_failed", param: "trigger.list_id" })
    }
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM sequences"))[0]!.n).toBe(before)
    expect((await api("POST", "/v1/bulk/sequences", { name: "X", trigger: { type: "tag_added", list_id: foreign } })).status).toBe(400)

    const mine = await newList()
    const seq = await api("POST", "/v1/bulk/sequences", { name: "Plain" })
    expect(seq.json.trigger).toBeNull()
    const refused = await api("PATCH", `/v1/bulk/sequences/${seq.json.id}`, { name: "Renamed", trigger: { type: "list_joined", list_id: foreign } })
    expect(refused.json.error).toMatchObject({ code: "validation_failed", param: "trigger.list_id" })
    expect((await api("GET", `/v1/bulk/sequences/${seq.json.id}`)).json).toMatchObject({ name: "Plain", trigger: null })
    const set = await api("PATCH", `/v1/bulk/sequences/${seq.json.id}`, { trigger: { type: "list_joined", list_id: mine } })
    expect(set.json.trigger).toEqual({ type: "list_joined", list_id: mine })
    expect((await api("GET", `/v1/bulk/sequences/${seq.json.id}`)).json.trigger).toEqual({ type: "list_joined", list_id: mine })
    expect((await api("PATCH", `/v1/bulk/sequences/${seq.json.id}`, { trigger: null })).json.trigger).toBeNull()
  })

  it("makes its list in use: 409 on delete, in_use in the bulk delete; deletable once the trigger is gone", async () => {
    const listId = await newList()
    const seq = await triggeredSequence(listId)
    const refused = await api("DELETE", `/v1/bulk/lists/${listId}`)
    expect(refused.status).toBe(409)
    expect(refused.json.error.code).toBe("conflict")
    expect(refused.json.error.message).toContain(seq)
    expect((await api("POST", "/v1/bulk/lists/delete", { ids: [listId] })).json).toMatchObject({ deleted: 0, in_use: [listId] })
    expect((await api("PATCH", `/v1/bulk/sequences/${seq}`, { trigger: null })).status).toBe(200)
    expect((await api("DELETE", `/v1/bulk/lists/${listId}`)).status).toBe(200)
  })
})

describe("enrolment by joining", () => {
  it("enrols members added sendable, once, with sequence.subscribed; no backfill; only while active; never suppressed or ended ones", async () => {
    const listId = await newList()
    await addMembers(listId, ["early@join.test"])
    const seq = await triggeredSequence(listId)
    // No backfill: a member already there is not enrolled by the trigger.
    expect(await enrolledEmails(seq)).toEqual([])

    expect((await api("POST", "/v1/client/suppressions", { email: "blocked@join.test" })).status).toBe(201)
    await addMembers(listId, ["a@join.test", "b@join.test", "blocked@join.test", "early@join.test"])
    expect(await enrolledEmails(seq)).toEqual(["a@join.test", "b@join.test"])
    expect(await subscribedEvents(seq)).toEqual(["a@join.test", "b@join.test"])
    const [sub] = (await api("GET", `/v1/bulk/sequences/${seq}/subscriptions`)).json.items
    expect(sub).toMatchObject({ state: "active" })
    expect(Date.parse(sub.next_due_at) - Date.parse(sub.enrolled_at)).toBe(3_600_000)

    // Re-added: nobody enrolled twice. Removed, cancelled, added again: an ended subscription is not re-enrolled.
    await addMembers(listId, ["a@join.test", "b@join.test"])
    const a = (await api("GET", `/v1/bulk/sequences/${seq}/subscriptions`)).json.items.find((s: any) => s.email === "a@join.test")
    expect((await api("POST", `/v1/bulk/sequences/${seq}/subscriptions/${a.id}/cancel`)).status).toBe(200)
    expect((await api("DELETE", `/v1/bulk/lists/${listId}/contacts/a%40join.test`)).status).toBe(200)
    await addMembers(listId, ["a@join.test"])
    expect(await enrolledEmails(seq)).toEqual(["a@join.test", "b@join.test"])
    expect(await subscribedEvents(seq)).toEqual(["a@join.test", "b@join.test"])

    // Inactive: joining enrols nobody, and nothing is made up for when it is active again.
    expect((await api("PATCH", `/v1/bulk/sequences/${seq}`, { status: "inactive" })).status).toBe(200)
    await addMembers(listId, ["while-off@join.test"])
    expect((await api("PATCH", `/v1/bulk/sequences/${seq}`, { status: "active" })).status).toBe(200)
    await addMembers(listId, ["after@join.test"])
    expect(await enrolledEmails(seq)).toEqual(["a@join.test", "after@join.test", "b@join.test"])
  })

  it("enrols an import's new members of the list in the import's statements; a refused import enrols nobody", async () => {
    const listId = await newList()
    const seq = await triggeredSequence(listId)
    const contacts = Array.from({ length: 120 }, (_, i) => ({ email: `imp${i}@join.test` }))
    const res = await api("POST", "/v1/bulk/contacts/import", { contacts, list_ids: [listId] })
    expect(res.status).toBe(200)
    expect(res.json.created).toBe(120)
    expect(await enrolledEmails(seq)).toHaveLength(120)
    expect(await subscribedEvents(seq)).toHaveLength(120)
    // Imported again: nobody twice.
    expect((await api("POST", "/v1/bulk/contacts/import", { contacts, list_ids: [listId] })).status).toBe(200)
    expect(await enrolledEmails(seq)).toHaveLength(120)

    // A members call refused part-way (an unknown contact id after new addresses): nothing joined, nobody enrolled.
    const refused = await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: ["new1@join.test", "ct_unknown"] })
    expect(refused.status).toBe(400)
    const gated = await api("POST", "/v1/bulk/contacts/import", { contacts: [{ email: "new2@join.test" }], list_ids: [listId, "ls_unknown"] })
    expect(gated.status).toBe(400)
    expect(await enrolledEmails(seq)).toHaveLength(120)
  })

  it("enrols a pending member when it confirms (once, however often pressed), and pending members when confirmation is switched off", async () => {
    const listId = await newList()
    const on = await api("PUT", `/v1/bulk/lists/${listId}/confirmation`, { require_confirmation: true, confirm_from_email: `news@${sender.domain}` })
    expect(on.status).toBe(200)
    const seq = await triggeredSequence(listId)
    await addMembers(listId, ["pend1@join.test", "pend2@join.test", "pend3@join.test"])
    // Pending is not sendable: nobody yet.
    expect(await enrolledEmails(seq)).toEqual([])

    const contact = (await api("GET", "/v1/bulk/contacts/pend1%40join.test")).json
    const [secret] = await db<{ value: string }>("SELECT value FROM appliance_settings WHERE name = 'public_token_secret'")
    const path = `/confirm/${makeTokens(secret!.value).mint("confirm", [listId, contact.id], Date.now() + 60_000)}`
    const press = () =>
      rig.app.request("POST", path, { token: null, rawBody: "", headers: { "content-type": "application/x-www-form-urlencoded" } })
    expect((await press()).status).toBe(200)
    expect((await press()).status).toBe(200)
    expect(await enrolledEmails(seq)).toEqual(["pend1@join.test"])
    expect(await subscribedEvents(seq)).toEqual(["pend1@join.test"])

    const off = await api("PUT", `/v1/bulk/lists/${listId}/confirmation`, { require_confirmation: false })
    expect(off.status).toBe(200)
    expect(await enrolledEmails(seq)).toEqual(["pend1@join.test", "pend2@join.test", "pend3@join.test"])
  })

  it("counts a members call onto a triggered list once in the per-minute window, as enroll does; over it, 429 and nothing joined", async () => {
    const limited = await newSender(rig.app, rig.dns, { packageId: "growth" })
    expect((await rig.app.request("PATCH", `/v1/admin/accounts/${limited.accountId}/limits`, { body: { rate_per_min: 2 } })).status).toBe(200)
    const plain = await newList(limited.token)
    const listId = await newList(limited.token)
    const seq = await triggeredSequence(listId, limited.token, limited.from)
    // A list no trigger names and that needs no confirmation: never counted.
    for (let i = 0; i < 3; i++) await addMembers(plain, [`plain${i}@join.test`], limited.token)
    await addMembers(listId, ["w1@join.test"], limited.token)
    await addMembers(listId, ["w2@join.test"], limited.token)
    const over = await api("POST", `/v1/bulk/lists/${listId}/contacts`, { contacts: ["w3@join.test"] }, limited.token)
    expect(over.status).toBe(429)
    expect(over.json.error.code).toBe("rate_limit_exceeded")
    expect((await api("GET", "/v1/bulk/contacts/w3%40join.test", undefined, limited.token)).status).toBe(404)
    expect(await enrolledEmails(seq)).toEqual(["w1@join.test", "w2@join.test"])
  })
})
