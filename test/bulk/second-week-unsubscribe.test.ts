/**
 * Issue 30 item 8 against a running appliance (DESIGN "Unsubscribing from one list"): the
 * unsubscribe page offers "stop mail from <list>" for a campaign sent to lists and always "stop all
 * mail"; the one-click leaves the campaign's lists (a segment-only campaign: all mail); a list
 * unsubscribe emits `contact.unsubscribed` with `scope: list` and `list_id`, suppresses nothing,
 * and the member is never sendable from that list again; re-adding it leaves it unsubscribed (the
 * answer says so), or, where the list requires confirmation, pending with a new confirmation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender } from "../support/sending.ts"

let rig: DeliveryRig
let sender: Sender
let weekly: string
let offers: string

beforeAll(async () => {
  rig = await startDeliveryRig()
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("dest.example")
  weekly = (await api("POST", "/v1/bulk/lists", { name: "Weekly <b>news</b>" })).json.id
  offers = (await api("POST", "/v1/bulk/lists", { name: "Offers" })).json.id
  for (const list of [weekly, offers]) {
    expect((await api("POST", `/v1/bulk/lists/${list}/contacts`, { contacts: ["ada@dest.example", "bob@dest.example"] })).status).toBe(200)
  }
})
afterAll(() => rig.stop())

function api(method: string, route: string, body?: unknown) {
  return rig.app.request(method, route, { token: sender.token, ...(body === undefined ? {} : { body }) })
}
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

/** Sends a campaign to `target` and answers the unsubscribe path of the message `email` got. */
const unsubscribePath = async (target: Record<string, unknown>, email: string) => {
  const campaign = await api("POST", "/v1/bulk/campaigns", { name: "C", from_email: sender.from, subject: "Hi", body_text: "x", ...target })
  const before = rig.sink.received.length
  const sent = await api("POST", `/v1/bulk/campaigns/${campaign.json.id}/send`)
  expect(sent.status).toBe(200)
  // Another test's campaign may still be arriving: wait for this recipient's message itself.
  const mail = await eventually(async () => rig.sink.received.slice(before).find((m) => m.rcptTo[0] === email), `the campaign's message to ${email}`)
  const url = /^List-Unsubscribe: <(http[^>]+)>/m.exec(mail.raw.toString().replace(/\r?\n[ \t]+/g, " "))![1]!
  return new URL(url).pathname
}
const post = (path: string, body: string) =>
  fetch(`${rig.app.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body })
const memberships = async (email: string) =>
  Object.fromEntries(((await api("GET", `/v1/bulk/contacts/${encodeURIComponent(email)}`)).json.lists as Array<{ list_id: string; status: string }>)
    .map((l) => [l.list_id, l.status]))
const events = (email: string) =>
  db<{ payload: { scope: string; list_id?: string } }>("SELECT payload FROM events WHERE event = 'contact.unsubscribed' AND payload->>'email' = $1 ORDER BY id", [email])

describe("the unsubscribe page", () => {
  it("offers the campaign's list (escaped) and all mail, without script, and changes nothing on GET", async () => {
    const path = await unsubscribePath({ list_ids: [weekly] }, "bob@dest.example")
    const page = await fetch(`${rig.app.baseUrl}${path}`)
    const html = await page.text()
    expect(page.status).toBe(200)
    expect(html).toContain("Stop mail from Weekly &lt;b&gt;news&lt;/b&gt;")
    expect(html).toContain("Stop all mail from")
    expect(html).not.toMatch(/<script|<b>news/i)
    expect(await memberships("bob@dest.example")).toEqual({ [weekly]: "confirmed", [offers]: "confirmed" })

    // The page's "all mail" button: the account-wide unsubscribe, scope account.
    const all = await post(path, "List-Unsubscribe=One-Click&page=1&scope=all")
    expect(all.status).toBe(200)
    expect(await all.text()).toContain("will get no more of these emails from")
    expect((await api("GET", "/v1/bulk/contacts/bob%40dest.example")).json.status).toBe("unsubscribed")
    expect((await events("bob@dest.example")).map((e) => e.payload.scope)).toEqual(["account"])
  })
})

describe("one list", () => {
  it("the one-click of a campaign sent to a list leaves that list only: scope list, list_id, no suppression", async () => {
    const path = await unsubscribePath({ list_ids: [weekly] }, "ada@dest.example")
    expect((await post(path, "List-Unsubscribe=One-Click")).status).toBe(200)
    expect(await memberships("ada@dest.example")).toEqual({ [weekly]: "unsubscribed", [offers]: "confirmed" })
    expect((await api("GET", "/v1/bulk/contacts/ada%40dest.example")).json.status).toBe("active")
    expect(await db("SELECT email FROM suppressions WHERE email = 'ada@dest.example'")).toEqual([])
    expect((await events("ada@dest.example")).map((e) => e.payload)).toEqual([{ email: "ada@dest.example", scope: "list", list_id: weekly }])
    // A repeat changes nothing and emits nothing.
    expect((await post(path, "List-Unsubscribe=One-Click")).status).toBe(200)
    expect(await events("ada@dest.example")).toHaveLength(1)
    const members = await api("GET", `/v1/bulk/lists/${weekly}/contacts?status=unsubscribed`)
    expect(members.json.items.map((m: { email: string; membership_status: string }) => [m.email, m.membership_status])).toEqual([["ada@dest.example", "unsubscribed"]])
  })

  it("is never sendable from that list again, still from the other; re-adding leaves it unsubscribed and says so", async () => {
    const again = await api("POST", `/v1/bulk/lists/${weekly}/contacts`, { contacts: ["ada@dest.example"] })
    expect(again.status).toBe(200)
    const ada = (await api("GET", "/v1/bulk/contacts/ada%40dest.example")).json
    expect(again.json.left_unsubscribed).toEqual([ada.id])
    expect(again.json.sendable_count).toBe(0)
    expect((await memberships("ada@dest.example"))[weekly]).toBe("unsubscribed")
    const toWeekly = await api("POST", "/v1/bulk/campaigns", { name: "W", from_email: sender.from, subject: "Hi", body_text: "x", list_ids: [weekly] })
    expect((await api("POST", `/v1/bulk/campaigns/${toWeekly.json.id}/send`)).json.total_contacts).toBe(0)
    const toOffers = await api("POST", "/v1/bulk/campaigns", { name: "O", from_email: sender.from, subject: "Hi", body_text: "x", list_ids: [offers] })
    expect((await api("POST", `/v1/bulk/campaigns/${toOffers.json.id}/send`)).json.total_contacts).toBe(1)
  })

  it("a campaign sent to a segment alone unsubscribes from all mail on one-click", async () => {
    expect((await api("POST", "/v1/bulk/contacts", { email: "carol@dest.example", tags: ["carol"] })).status).toBe(201)
    const segment = await api("POST", "/v1/bulk/segments", { name: "Carol", rules: { match: "all", rules: [{ field: "tag", op: "has", value: "carol" }] } })
    expect(segment.status).toBe(201)
    const path = await unsubscribePath({ segment_id: segment.json.id }, "carol@dest.example")
    const page = await (await fetch(`${rig.app.baseUrl}${path}`)).text()
    expect(page).not.toContain("Stop mail from")
    expect((await post(path, "List-Unsubscribe=One-Click")).status).toBe(200)
    expect((await api("GET", "/v1/bulk/contacts/carol%40dest.example")).json.status).toBe("unsubscribed")
    expect((await events("carol@dest.example")).map((e) => e.payload.scope)).toEqual(["account"])
  })

  it("re-added on a list that requires confirmation, an unsubscribed member is pending again with a new confirmation", async () => {
    const gated = (await api("POST", "/v1/bulk/lists", { name: "Gated" })).json.id
    expect((await api("POST", `/v1/bulk/lists/${gated}/contacts`, { contacts: ["dan@dest.example"] })).status).toBe(200)
    expect((await api("PUT", `/v1/bulk/lists/${gated}/confirmation`, { require_confirmation: true, confirm_from_email: sender.from })).status).toBe(200)
    const path = await unsubscribePath({ list_ids: [gated] }, "dan@dest.example")
    expect((await post(path, "List-Unsubscribe=One-Click&page=1&scope=list")).status).toBe(200)
    expect((await memberships("dan@dest.example"))[gated]).toBe("unsubscribed")
    const readded = await api("POST", `/v1/bulk/lists/${gated}/contacts`, { contacts: ["dan@dest.example"] })
    expect(readded.json).toMatchObject({ confirmations_queued: 1, left_unsubscribed: [] })
    expect((await memberships("dan@dest.example"))[gated]).toBe("pending")
  })
})
