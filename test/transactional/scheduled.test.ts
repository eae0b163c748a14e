/**
 * Scheduled sends: the 202 with the scheduled send's id, reading and cancelling it, and its release
 * at the moment it is due — driven by calling the scheduler's step with chosen moments, not by
 * waiting — with permissions re-checked then.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ScheduledSends } from "../../src/transactional/scheduled/ScheduledSends.ts"
import { type Appliance, withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import type { DnsServer } from "../support/dns-server.ts"
import { newSender, type Sender, type SendingApp, sendBody, startSendingApp } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
let sender: Sender
let setup: SendingApp

beforeAll(async () => {
  setup = await startSendingApp()
  ;({ app, dns, sender } = setup)
})
afterAll(() => setup.stop())

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString()
const releaseAt = (moment: Date) => withServices(app, Effect.flatMap(ScheduledSends, (s) => s.releaseDue(moment)))

const schedule = async (to: string, s: Sender = sender, extra: Record<string, unknown> = {}) => {
  const res = await app.request("POST", "/v1/mail/send", { token: s.token, body: sendBody(s, to, { send_at: inAnHour(), ...extra }) })
  expect(res.status).toBe(202)
  expect(res.json.message).toBe("scheduled")
  expect(res.json.id).toMatch(/^sch_/)
  return res.json
}

describe("scheduled sends", () => {
  it("answers 202 with the scheduled send's id and queues nothing before the moment", async () => {
    const accepted = await schedule("later@example.org")
    const view = await app.request("GET", `/v1/mail/scheduled/${accepted.id}`, { token: sender.token })
    expect(view.json).toMatchObject({ id: accepted.id, status: "scheduled", message_id: accepted.items[0].message_id })
    expect(await releaseAt(new Date())).toBe(0)
    const rows = await query(app.databaseUrl, "SELECT 1 FROM messages WHERE id = $1", [accepted.items[0].message_id])
    expect(rows).toHaveLength(0)
  })

  it("is released into the queue with the promised message_id once due", async () => {
    const accepted = await schedule("due@example.org")
    expect(await releaseAt(new Date(Date.now() + 2 * 3_600_000))).toBeGreaterThanOrEqual(1)
    const rows = await query(app.databaseUrl, "SELECT recipient FROM deliveries WHERE message_id = $1", [accepted.items[0].message_id])
    expect(rows).toEqual([{ recipient: "due@example.org" }])
    const view = await app.request("GET", `/v1/mail/scheduled/${accepted.id}`, { token: sender.token })
    expect(view.json.status).toBe("released")
    const cancel = await app.request("DELETE", `/v1/mail/scheduled/${accepted.id}`, { token: sender.token })
    expect(cancel.status).toBe(409)
  })

  it("can be cancelled before its moment, and then never sends", async () => {
    const accepted = await schedule("cancelled@example.org")
    const cancel = await app.request("DELETE", `/v1/mail/scheduled/${accepted.id}`, { token: sender.token })
    expect(cancel.status).toBe(200)
    expect(cancel.json.status).toBe("cancelled")
    await releaseAt(new Date(Date.now() + 2 * 3_600_000))
    const rows = await query(app.databaseUrl, "SELECT 1 FROM messages WHERE id = $1", [accepted.items[0].message_id])
    expect(rows).toHaveLength(0)
  })

  it("is discarded when the account is suspended by its moment, with one email.failed per recipient", async () => {
    const other = await newSender(app, dns, { packageId: "growth" })
    const accepted = await schedule("suspended@example.org", other, {
      personalizations: [{
        to: [{ email: "suspended@example.org" }, { email: "second@example.org" }],
        cc: [{ email: "copy@example.org" }],
        bcc: [{ email: "hidden@example.org" }],
        subject: "Own subject"
      }]
    })
    expect((await app.request("POST", `/v1/admin/accounts/${other.accountId}/suspend`)).status).toBe(200)
    await releaseAt(new Date(Date.now() + 2 * 3_600_000))
    const view = await app.request("GET", `/v1/mail/scheduled/${accepted.id}`, { token: other.token })
    expect(view.json.status).toBe("discarded")
    expect(view.json.reason).toContain("suspended")
    const events = await query<{ payload: any }>(app.databaseUrl,
      "SELECT payload FROM events WHERE key_id = $1 AND event = 'email.failed' ORDER BY payload->'to'->>0", [other.keyId])
    expect(events.map((e) => e.payload)).toEqual(
      ["copy@example.org", "hidden@example.org", "second@example.org", "suspended@example.org"].map((to) => ({
        to: [to],
        subject: "Own subject",
        message_id: accepted.items[0].message_id,
        request_id: accepted.request_id,
        error: expect.stringContaining("suspended")
      }))
    )
  })

  it("is not visible to another account", async () => {
    const accepted = await schedule("private@example.org")
    const other = await newSender(app, dns)
    const res = await app.request("GET", `/v1/mail/scheduled/${accepted.id}`, { token: other.token })
    expect(res.status).toBe(404)
  })
})

describe("scheduled sends, quota and domain grace", () => {
  it("reserves no quota when a send is scheduled: sent_this_period and the account's usage stay as they were", async () => {
    const own = await newSender(app, dns, { packageId: "growth" })
    const usage = async () => ({
      key: (await app.request("GET", "/v1/client/usage", { token: own.token })).json.keys.map((k: { sent_this_period: number }) => k.sent_this_period),
      account: await query(app.databaseUrl, "SELECT sent, overage FROM account_usage WHERE account_id = $1", [own.accountId])
    })
    const before = await usage()
    await schedule("quota-later@example.org", own, {
      personalizations: [{ to: [{ email: "quota-later@example.org" }, { email: "quota-later2@example.org" }] }]
    })
    expect(await usage()).toEqual(before)
  })

  it("is discarded at release when the sender domain's grace has expired by then, though it was in grace when scheduled", async () => {
    const own = await newSender(app, dns, { packageId: "growth" })
    // The record vanished 71 hours ago: still in the 72-hour grace (HERALD_DOMAIN_GRACE_HOURS) now…
    await query(app.databaseUrl, "UPDATE domains SET verification_lost_at = now() - interval '71 hours' WHERE domain = $1", [own.domain])
    const accepted = await schedule("grace-later@example.org", own)
    // …and past it at the moment of release, two hours on.
    await releaseAt(new Date(Date.now() + 2 * 3_600_000))
    const view = await app.request("GET", `/v1/mail/scheduled/${accepted.id}`, { token: own.token })
    expect(view.json.status).toBe("discarded")
    expect(view.json.reason).toContain("grace_expired")
    expect(await query(app.databaseUrl, "SELECT 1 FROM messages WHERE id = $1", [accepted.items[0].message_id])).toHaveLength(0)
    const events = await query<{ payload: any }>(app.databaseUrl,
      "SELECT payload FROM events WHERE key_id = $1 AND event = 'email.failed'", [own.keyId])
    expect(events.map((e) => e.payload.to)).toEqual([["grace-later@example.org"]])
  })
})
