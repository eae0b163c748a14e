/**
 * What a marketer meets in a campaign's second week (issue 30 items 1-6 and 11), against a real
 * appliance, SMTP sink and DNS server: a scheduled campaign taken off its schedule and a paused
 * one put back on it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, siblingKey } from "../support/sending.ts"

let rig: DeliveryRig
let sender: Sender

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
}, 60_000)
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })

const listWith = async (emails: ReadonlyArray<string>, token = sender.token) => {
  const list = await api("POST", "/v1/bulk/lists", { name: `list ${Math.random()}` }, token)
  expect(list.status).toBe(201)
  const added = await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: emails }, token)
  expect(added.status).toBe(200)
  return list.json.id as string
}

const draft = async (fields: Record<string, unknown>, who: { readonly token: string; readonly from: string } = sender) => {
  const created = await api("POST", "/v1/bulk/campaigns", { name: "Week two", from_email: who.from, subject: "Hi", body_text: "Hello", ...fields }, who.token)
  expect(created.status).toBe(201)
  return created.json.id as string
}

const campaign = async (id: string) => (await api("GET", `/v1/bulk/campaigns/${id}`)).json
const call = (id: string, action: string, body?: unknown) => api("POST", `/v1/bulk/campaigns/${id}/${action}`, body)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("item 1: a scheduled campaign can be changed", () => {
  it("unschedule takes a scheduled campaign back to an editable draft; 409 from any other state, 404 for another key", async () => {
    const listId = await listWith(["delivered+u1@simulator.herald.invalid"])
    const id = await draft({ list_ids: [listId] })
    const at = new Date(Date.now() + 3_600_000).toISOString()
    expect((await call(id, "send", { scheduled_at: at })).json).toMatchObject({ status: "scheduled", scheduled_at: at })

    const other = await siblingKey(rig.app, sender)
    expect((await api("POST", `/v1/bulk/campaigns/${id}/unschedule`, undefined, other.token)).status).toBe(404)

    const back = await call(id, "unschedule")
    expect(back.status).toBe(200)
    expect(back.json).toMatchObject({ id, status: "draft", scheduled_at: null, pause_reason: null, total_contacts: null })
    expect((await api("PATCH", `/v1/bulk/campaigns/${id}`, { subject: "Changed" })).json).toMatchObject({ subject: "Changed" })

    // draft, paused, sending: not scheduled, so 409 conflict and nothing changed.
    const refused = async () => {
      const before = await campaign(id)
      const res = await call(id, "unschedule")
      expect({ status: res.status, code: res.json.error?.code }).toEqual({ status: 409, code: "conflict" })
      expect(await campaign(id)).toEqual(before)
    }
    await refused()
    expect((await call(id, "send", { scheduled_at: at })).status).toBe(200)
    expect((await call(id, "pause")).status).toBe(200)
    await refused()
    expect((await call(id, "send", {})).json).toMatchObject({ status: "sending" })
    await refused()
  })

  it("resume puts a campaign paused before its start back on its schedule while its time is ahead, and sends once it has passed", async () => {
    const listId = await listWith(["delivered+u2@simulator.herald.invalid"])
    const later = await draft({ list_ids: [listId] })
    const at = new Date(Date.now() + 3_600_000).toISOString()
    expect((await call(later, "send", { scheduled_at: at })).status).toBe(200)
    expect((await call(later, "pause")).json).toMatchObject({ status: "paused", pause_reason: "manual" })
    const resumed = await call(later, "resume")
    expect(resumed.status).toBe(200)
    expect(resumed.json).toMatchObject({ status: "scheduled", scheduled_at: at, pause_reason: null, total_contacts: null, started_at: null })

    // Its time passed while paused: resume sends now, as before.
    const soon = await draft({ list_ids: [listId] })
    expect((await call(soon, "send", { scheduled_at: new Date(Date.now() + 1_500).toISOString() })).status).toBe(200)
    expect((await call(soon, "pause")).status).toBe(200)
    await sleep(2_000)
    expect((await call(soon, "resume")).json).toMatchObject({ status: "sending", total_contacts: 1 })
  })
})
