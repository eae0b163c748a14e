/**
 * The campaign fan-out's messages are built by PostgreSQL (src/mta/queue/campaign-batch.ts,
 * `jsonb_build_object`), a second writer of the stored message's contract: every row a real
 * fan-out writes decodes with the StoredMessage schema, as the MTA decodes it at delivery, and
 * carries its contact. Contacts with and without a name and metadata, in
 * batches of two so several statements write them. The MTA is off: the rows stay as written.
 */
import { Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeStoredMessage } from "../../src/mta/queue/StoredMessage.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type SendingApp, startSendingApp } from "../support/sending.ts"

let env: SendingApp

beforeAll(async () => {
  env = await startSendingApp({ HERALD_CAMPAIGN_FANOUT_BATCH: "2" })
})
afterAll(() => env.stop())

const CONTACTS = [
  { email: "named@dest.example", name: "Ada Lovelace", metadata: { plan: "pro", visits: 3, tags: ["a", "b"] } },
  { email: "nameless@dest.example" },
  { email: "null-name@dest.example", name: null, metadata: { nested: { deep: true } } },
  { email: "unicode@dest.example", name: "Zoë \"Q\" Ångström", metadata: { note: "multi\nline" } },
  { email: "metadata-only@dest.example", metadata: { city: "Oslo" } }
] as const

interface Row extends Record<string, unknown> {
  readonly id: string
  readonly own: unknown
  readonly shared: unknown
  readonly recipient: string
}

describe("a campaign batch's stored messages", () => {
  it("decode with the StoredMessage schema, one per contact, with its address and variables", async () => {
    const api = (method: string, route: string, body?: unknown) =>
      env.app.request(method, route, { token: env.sender.token, ...(body === undefined ? {} : { body }) })
    const contactIds = new Map<string, string>()
    for (const contact of CONTACTS) {
      const created = await api("POST", "/v1/bulk/contacts", contact)
      expect(created.status).toBe(201)
      contactIds.set(contact.email, String(created.json.id))
    }
    const list = await api("POST", "/v1/bulk/lists", { name: "batch" })
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: CONTACTS.map((c) => c.email) })).status).toBe(200)
    const campaign = await api("POST", "/v1/bulk/campaigns", {
      name: "Batch", from_email: env.sender.from, subject: "Hi {{ name }}", body_text: "Hello", list_ids: [list.json.id]
    })
    expect(campaign.status).toBe(201)
    const id = String(campaign.json.id)
    expect((await api("POST", `/v1/bulk/campaigns/${id}/send`)).json).toMatchObject({ status: "sending", total_contacts: CONTACTS.length })

    const rowsOf = () =>
      query<Row>(env.app.databaseUrl, `SELECT m.id, m.content AS own, c.content AS shared, d.recipient
        FROM messages m JOIN message_contents c ON c.id = m.content_id JOIN deliveries d ON d.message_id = m.id
        WHERE m.campaign_id = $1 ORDER BY m.personalization_index`, [id])
    const rows = await eventually(async () => {
      const written = await rowsOf()
      return written.length === CONTACTS.length ? written : undefined
    }, "the fan-out")

    const decoded = rows.map((row) => ({ row, message: decodeStoredMessage(row.own, row.shared) }))
    expect(decoded.filter((d) => Either.isLeft(d.message)).map((d) => [d.row.recipient, d.message])).toEqual([])
    const byRecipient = new Map(decoded.map((d) => [d.row.recipient, Either.getOrThrow(d.message)]))
    for (const contact of CONTACTS) {
      const name = "name" in contact ? contact.name : null
      const metadata = "metadata" in contact ? contact.metadata : {}
      const message = byRecipient.get(contact.email)
      expect(message).toMatchObject({
        _tag: "campaign",
        origin: "campaign",
        channel: "bulk",
        campaign_id: id,
        contact_id: contactIds.get(contact.email),
        message: { subject: "Hi {{ name }}", from: { email: env.sender.from } }
      })
      if (message?._tag !== "campaign") continue
      expect(message.to).toEqual(name === null ? { email: contact.email } : { email: contact.email, name })
      expect(message.variables).toEqual(name === null ? { email: contact.email, metadata } : { email: contact.email, name, metadata })
    }
  })
})
