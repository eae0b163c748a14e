/**
 * Scheduled sends: the 202 with the scheduled send's id, reading and cancelling it, and its release
 * at the moment it is due — driven by calling the scheduler's step with chosen moments, not by
 * waiting — with permissions re-checked then.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ScheduledSends } from "../../src/transactional/scheduled/ScheduledSends.ts"
import { type Appliance, startAppliance, withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

let app: Appliance
let dns: DnsServer
let sender: Sender

beforeAll(async () => {
  dns = await startDnsServer()
  app = await startAppliance({ env: { HERALD_DNS_SERVERS: dns.address } })
  sender = await newSender(app, dns, { packageId: "growth" })
})
afterAll(async () => {
  await app.stop()
  await dns.close()
})

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString()
const releaseAt = (moment: Date) => withServices(app, Effect.flatMap(ScheduledSends, (s) => s.releaseDue(moment)))

const schedule = async (to: string, s: Sender = sender) => {
  const res = await app.request("POST", "/v1/mail/send", { token: s.token, body: sendBody(s, to, { send_at: inAnHour() }) })
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

  it("is discarded and recorded when the account is suspended by its moment", async () => {
    const other = await newSender(app, dns, { packageId: "growth" })
    const accepted = await schedule("suspended@example.org", other)
    expect((await app.request("POST", `/v1/admin/accounts/${other.accountId}/suspend`)).status).toBe(200)
    await releaseAt(new Date(Date.now() + 2 * 3_600_000))
    const view = await app.request("GET", `/v1/mail/scheduled/${accepted.id}`, { token: other.token })
    expect(view.json.status).toBe("discarded")
    expect(view.json.reason).toContain("suspended")
    const events = await query<{ payload: any }>(app.databaseUrl, "SELECT payload FROM events WHERE key_id = $1 AND event = 'email.failed'", [other.keyId])
    expect(events[0]!.payload.message_id).toBe(accepted.items[0].message_id)
  })

  it("is not visible to another account", async () => {
    const accepted = await schedule("private@example.org")
    const other = await newSender(app, dns)
    const res = await app.request("GET", `/v1/mail/scheduled/${accepted.id}`, { token: other.token })
    expect(res.status).toBe(404)
  })
})
