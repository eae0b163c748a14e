/**
 * Issue 30 item 9 against a running appliance: a key's postal address and footer
 * (`GET|PUT /v1/bulk/settings`), the footer added at render time to each part of a campaign without
 * `{{ unsubscribe_url }}` (escaped, before `</body>`, its link untracked), and no bulk mail without
 * the address: `send` → 400 `param: postal_address`, a due scheduled campaign pauses with
 * `postal_address_missing`, a due sequence step holds with the same reason.
 */
import { simpleParser } from "mailparser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { schedulerPassAt } from "../support/sequences.ts"
import { newSender, type Sender } from "../support/sending.ts"

let rig: DeliveryRig
let sender: Sender
/** A key of `sender`'s account that never set a postal address. */
let bare: { readonly token: string; readonly keyId: string }

beforeAll(async () => {
  rig = await startDeliveryRig({ HERALD_TRACK_URL: "http://track.herald.test", HERALD_BASE_URL: "http://pages.herald.test" })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  const key = await rig.app.request("POST", `/v1/admin/accounts/${sender.accountId}/keys`, { body: { label: "no address" } })
  expect(key.status).toBe(201)
  bare = { token: key.json.token, keyId: key.json.id }
  rig.route("dest.example")
})
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown, token = sender.token) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })

/** A draft campaign of `token`'s key to a new list of `emails`. */
const draft = async (token: string, emails: ReadonlyArray<string>, content: Record<string, unknown>) => {
  const list = await api("POST", "/v1/bulk/lists", { name: `L${Math.random()}` }, token)
  expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: emails }, token)).status).toBe(200)
  const campaign = await api("POST", "/v1/bulk/campaigns", { name: "C", from_email: sender.from, subject: "Hello", list_ids: [list.json.id], ...content }, token)
  expect(campaign.status).toBe(201)
  return campaign.json.id as string
}

describe("settings", () => {
  it("answers nulls until set; refuses a footer that does not compile (each field named) and an empty address, changing nothing", async () => {
    expect((await api("GET", "/v1/bulk/settings", undefined, bare.token)).json).toEqual({ postal_address: null, footer_html: null, footer_text: null, updated_at: null })
    const html = await api("PUT", "/v1/bulk/settings", { postal_address: "x", footer_html: "<p>{% if %}</p>" }, bare.token)
    expect(html.status).toBe(400)
    expect(html.json.error).toMatchObject({ code: "render_failed", param: "footer_html" })
    const text = await api("PUT", "/v1/bulk/settings", { postal_address: "x", footer_text: "{{ a | nope }}" }, bare.token)
    expect(text.json.error).toMatchObject({ code: "render_failed", param: "footer_text" })
    const empty = await api("PUT", "/v1/bulk/settings", { postal_address: "  " }, bare.token)
    expect(empty.json.error).toMatchObject({ code: "validation_failed", param: "postal_address" })
    const long = await api("PUT", "/v1/bulk/settings", { postal_address: "x".repeat(501) }, bare.token)
    expect(long.json.error).toMatchObject({ code: "validation_failed", param: "postal_address" })
    expect((await api("GET", "/v1/bulk/settings", undefined, bare.token)).json.postal_address).toBeNull()
  })
})

describe("the footer at render time", () => {
  it("goes into each part without its own unsubscribe link: escaped, before </body>, its link untracked", async () => {
    expect((await api("PUT", "/v1/bulk/settings", { postal_address: "Acme <Ltd> & Co, 1 Road" })).status).toBe(200)
    const id = await draft(sender.token, ["ada@dest.example"], {
      html: "<html><body><p>Hi</p><a href=\"https://shop.example/x\">Shop</a></body></html>",
      body_text: "Hi. Leave: {{ unsubscribe_url }}"
    })
    const before = rig.sink.received.length
    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`)).status).toBe(200)
    await rig.sink.waitFor(before + 1)
    const mail = await simpleParser(rig.sink.received[before]!.raw)
    const html = String(mail.html)
    expect(html).toContain("Acme &lt;Ltd&gt; &amp; Co, 1 Road")
    expect(html.indexOf("Acme &lt;Ltd&gt;")).toBeLessThan(html.lastIndexOf("</body>"))
    // The content's own link is tracked, the footer's is not.
    expect(html).toContain("http://track.herald.test/c/")
    expect(html).toMatch(/href="http:\/\/pages\.herald\.test\/u\/[A-Za-z0-9_.-]+"/)
    // The text part reads {{ unsubscribe_url }} itself: no footer there.
    expect(mail.text).not.toContain("Acme")
    expect(mail.text).toMatch(/Leave: http:\/\/pages\.herald\.test\/u\//)
  })

  it("uses the key's own footer_text, and the preview shows it too", async () => {
    expect((await api("PUT", "/v1/bulk/settings", { postal_address: "Acme, 1 Road", footer_text: "Write to {{ postal_address }} or leave: {{ unsubscribe_url }}" })).status).toBe(200)
    const id = await draft(sender.token, ["bob@dest.example"], { body_text: "Plain news" })
    const preview = await api("POST", `/v1/bulk/campaigns/${id}/preview`, { contact: "bob@dest.example" })
    expect(preview.json.body_text).toMatch(/^Plain news\n\nWrite to Acme, 1 Road or leave: http:\/\/pages\.herald\.test\/u\/\S+$/)
    const before = rig.sink.received.length
    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`)).status).toBe(200)
    await rig.sink.waitFor(before + 1)
    const mail = await simpleParser(rig.sink.received[before]!.raw)
    expect(mail.text?.trim()).toMatch(/^Plain news\n\nWrite to Acme, 1 Road or leave: http:\/\/pages\.herald\.test\/u\/\S+$/)
  })
})

describe("no bulk mail without a postal address", () => {
  it("refuses send (now or scheduled) with 400 param postal_address and leaves the campaign a draft", async () => {
    const id = await draft(bare.token, ["carol@dest.example"], { body_text: "x" })
    for (const body of [undefined, { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() }]) {
      const res = await api("POST", `/v1/bulk/campaigns/${id}/send`, body, bare.token)
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ code: "validation_failed", param: "postal_address" })
    }
    expect((await api("GET", `/v1/bulk/campaigns/${id}`, undefined, bare.token)).json).toMatchObject({ status: "draft", total_contacts: null })
  })

  it("pauses a scheduled campaign that comes due without one (postal_address_missing), nothing queued", async () => {
    const key = await rig.app.request("POST", `/v1/admin/accounts/${sender.accountId}/keys`, { body: { label: "later removed" } })
    const token = key.json.token as string
    expect((await api("PUT", "/v1/bulk/settings", { postal_address: "Somewhere 1" }, token)).status).toBe(200)
    const id = await draft(token, ["dan@dest.example"], { body_text: "x" })
    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`, { scheduled_at: new Date(Date.now() + 2_000).toISOString() }, token)).status).toBe(200)
    // As a campaign scheduled before the address was asked for (an upgrade): the key has none when it comes due.
    await query(rig.app.databaseUrl, "DELETE FROM bulk_settings WHERE key_id = $1", [key.json.id])
    const paused = await eventually(async () => {
      const res = await api("GET", `/v1/bulk/campaigns/${id}`, undefined, token)
      return res.json.status === "scheduled" ? undefined : res.json
    }, "the due campaign to leave scheduled")
    expect(paused).toMatchObject({ status: "paused", pause_reason: "postal_address_missing" })
    expect(await query(rig.app.databaseUrl, "SELECT id FROM messages WHERE content->>'campaign_id' = $1", [id])).toEqual([])
  })

  it("holds a due sequence step (hold_reason postal_address_missing) until the address is set", async () => {
    const seq = await api("POST", "/v1/bulk/sequences", { name: "Welcome", from_email: sender.from }, bare.token)
    expect((await api("POST", `/v1/bulk/sequences/${seq.json.id}/steps`, { subject: "One", body_text: "x", offset_seconds: 60 }, bare.token)).status).toBe(201)
    const list = await api("POST", "/v1/bulk/lists", { name: "Seq" }, bare.token)
    await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: ["erin@dest.example"] }, bare.token)
    expect((await api("POST", `/v1/bulk/sequences/${seq.json.id}/enroll`, { list_id: list.json.id }, bare.token)).json.enrolled).toBe(1)
    const [row] = await query<{ enrolled_at: Date }>(rig.app.databaseUrl, "SELECT enrolled_at FROM sequence_subscriptions WHERE sequence_id = $1", [seq.json.id])
    await schedulerPassAt(rig.app, row!.enrolled_at.getTime() + 120_000)
    const subs = await api("GET", `/v1/bulk/sequences/${seq.json.id}/subscriptions`, undefined, bare.token)
    expect(subs.json.items[0]).toMatchObject({ state: "active", hold_reason: "postal_address_missing", last_step_id: null })
    expect(await query(rig.app.databaseUrl, "SELECT id FROM messages WHERE content->>'sequence_id' = $1", [seq.json.id])).toEqual([])

    expect((await api("PUT", "/v1/bulk/settings", { postal_address: "Erin's sender, 2 Road" }, bare.token)).status).toBe(200)
    await schedulerPassAt(rig.app, row!.enrolled_at.getTime() + 3_600_000)
    const after = await api("GET", `/v1/bulk/sequences/${seq.json.id}/subscriptions`, undefined, bare.token)
    expect(after.json.items[0].hold_reason).toBeNull()
    expect(await query(rig.app.databaseUrl, "SELECT id FROM messages WHERE content->>'sequence_id' = $1", [seq.json.id])).toHaveLength(1)
  })
})
