/**
 * Simulator recipients end to end, on a real appliance with no DNS server at all (its resolver
 * points at a closed port: any MX or TXT lookup would fail) and a sending domain that was added but
 * never verified: each scenario goes through the queue, the MTA, the outcome writer, the outbox,
 * the webhooks and the audit, and ends as its name says — without suppressions, quota or
 * reputation.
 */
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { receiverBody } from "../../src/events/schema.ts"
import { DeliveryQueue } from "../../src/mta/queue/DeliveryQueue.ts"
import { Reputation } from "../../src/platform/reputation/Reputation.ts"
import { ScheduledSends } from "../../src/transactional/scheduled/ScheduledSends.ts"
import { type Appliance, startAppliance, withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/net.ts"
import { type Hit, type Receiver, startReceiver } from "../webhooks/receiver.ts"

let app: Appliance
let receiver: Receiver
let accountId = ""
let token = ""
let keyId = ""
const domain = "unverified-shop.example"

const body = (to: ReadonlyArray<string>, extra: Record<string, unknown> = {}) => ({
  personalizations: [{ to: to.map((email) => ({ email })) }],
  from: { email: `hello@${domain}` },
  subject: "Trying Herald",
  content: [{ type: "text/plain", value: "Hello, simulator" }],
  ...extra
})
const send = (to: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
  app.request("POST", "/v1/mail/send", { token, body: body(to, extra) })

const ofEvent = (event: string, recipient: string) => (h: Hit) =>
  h.json?.event === event && (h.json.to?.[0] === recipient || h.json.recipient === recipient || h.json.email === recipient)
const strictly = (event: Parameters<typeof receiverBody>[0], json: unknown) =>
  Schema.decodeUnknownEither(receiverBody(event))(json, { onExcessProperty: "error" })._tag

const auditOf = async (recipient: string) => {
  const res = await app.request("GET", `/v1/mail/audit?search=${encodeURIComponent(recipient)}`, { token })
  expect(res.status).toBe(200)
  return res.json.items.filter((i: { recipient: string }) => i.recipient === recipient)
}

beforeAll(async () => {
  receiver = await startReceiver(200)
  app = await startAppliance({
    env: {
      // Nowhere: a closed port on loopback. Simulator mail must need no lookup at all.
      HERALD_DNS_SERVERS: `127.0.0.1:${await freePort()}`,
      HERALD_MTA_ENABLED: "true",
      HERALD_WEBHOOK_ALLOW_PRIVATE: "true",
      // A single hard bounce among a few deliveries would pause the account if simulator mail counted.
      HERALD_REPUTATION_MIN_VOLUME: "1"
    }
  })
  const account = await app.request("POST", "/v1/admin/accounts", {
    body: { name: "First hour", email: "first@customers.test", password: "correct horse battery", package_id: "growth" }
  })
  expect(account.status).toBe(201)
  accountId = account.json.id
  const key = await app.request("POST", `/v1/admin/accounts/${accountId}/keys`, { body: { label: "first" } })
  token = key.json.token
  keyId = key.json.id
  const created = await app.request("POST", "/v1/client/domains", { token, body: { domain } })
  expect(created.status).toBe(201)
  const hook = await app.request("PATCH", `/v1/client/keys/${keyId}`, { token, body: { label: "first", webhook_url: receiver.url() } })
  expect(hook.status).toBe(200)
}, 60_000)
afterAll(async () => {
  await app?.stop()
  await receiver?.close()
})

describe("simulator recipients", () => {
  it("delivered@ ends sent, with email.sent and a sent audit row, from an unverified domain", async () => {
    const res = await send(["delivered@simulator.herald.invalid"])
    expect(res.status).toBe(202)
    expect(res.json.items[0].status).toBe("queued")
    const [hit] = await receiver.waitFor(1, ofEvent("email.sent", "delivered@simulator.herald.invalid"))
    expect(hit!.json).toMatchObject({ event: "email.sent", app: keyId, message_id: res.json.items[0].message_id, request_id: res.json.request_id })
    expect(strictly("email.sent", hit!.json)).toBe("Right")
    const [row] = await eventually(async () => {
      const rows = await auditOf("delivered@simulator.herald.invalid")
      return rows[0]?.event === "sent" ? rows : undefined
    }, "the sent audit row")
    expect(row).toMatchObject({ event: "sent", attempts: 1, smtp_code: 250, smtp_status: "2.0.0", message_id: res.json.items[0].message_id })
  })

  it("bounce@ ends with a hard 5.1.1 email.bounced and a failed audit row, suppressing nothing", async () => {
    const res = await send(["bounce@simulator.herald.invalid"])
    expect(res.status).toBe(202)
    const [hit] = await receiver.waitFor(1, ofEvent("email.bounced", "bounce@simulator.herald.invalid"))
    expect(hit!.json).toMatchObject({ event: "email.bounced", status: "5.1.1", category: "hard", message_id: res.json.items[0].message_id })
    expect(strictly("email.bounced", hit!.json)).toBe("Right")
    const [row] = await eventually(async () => {
      const rows = await auditOf("bounce@simulator.herald.invalid")
      return rows[0]?.event === "failed" ? rows : undefined
    }, "the failed audit row")
    expect(row).toMatchObject({ event: "failed", smtp_code: 550, smtp_status: "5.1.1" })
  })

  it("complaint@ ends sent, then email.complained with isp simulator, suppressing nothing", async () => {
    const res = await send(["complaint@simulator.herald.invalid"])
    expect(res.status).toBe(202)
    const [complained] = await receiver.waitFor(1, ofEvent("email.complained", "complaint@simulator.herald.invalid"))
    const [sent] = await receiver.waitFor(1, ofEvent("email.sent", "complaint@simulator.herald.invalid"))
    expect(complained!.json).toMatchObject({ event: "email.complained", email: "complaint@simulator.herald.invalid", isp: "simulator", subject: "Trying Herald" })
    expect(strictly("email.complained", complained!.json)).toBe("Right")
    expect(sent!.json.message_id).toBe(res.json.items[0].message_id)
    // The complaint follows the delivery in the outbox's order.
    expect(Date.parse(complained!.json.ts)).toBeGreaterThan(Date.parse(sent!.json.ts))
    const [row] = await auditOf("complaint@simulator.herald.invalid")
    expect(row.event).toBe("sent")
    // No record of an inbound report: the simulated complaint feeds no reputation count.
    expect(await query(app.databaseUrl, "SELECT id FROM inbound_complaints")).toEqual([])
    // The message lookup still shows it, after the sent outcome.
    const lookup = await app.request("GET", `/v1/mail/messages/${res.json.items[0].message_id}`, { token })
    expect(lookup.json, JSON.stringify(lookup.json)).toMatchObject({ recipients: [{ email: "complaint@simulator.herald.invalid", state: "complained" }] })
    expect(lookup.json.timeline.map((t: { type: string }) => t.type).slice(-2)).toEqual(["sent", "complained"])
  })

  it("defer@ is deferred twice, retried 2 s then 4 s later, then sent", async () => {
    const recipient = "defer@simulator.herald.invalid"
    const res = await send([recipient])
    expect(res.status).toBe(202)
    // When each attempt's outcome is first seen, polled on the delivery row.
    const seen = new Map<number, { at: number; state: string; next: Date; updated: Date; status: string }>()
    await eventually(async () => {
      const [d] = await query<{ attempts: number; state: string; next_attempt_at: Date; updated_at: Date; last_status: string }>(
        app.databaseUrl,
        "SELECT attempts, state, next_attempt_at, updated_at, last_status FROM deliveries WHERE recipient = $1",
        [recipient]
      )
      if (d !== undefined && d.attempts > 0 && !seen.has(d.attempts)) {
        seen.set(d.attempts, { at: Date.now(), state: d.state, next: d.next_attempt_at, updated: d.updated_at, status: d.last_status })
      }
      return d?.state === "sent" ? true : undefined
    }, "the deferred delivery sent", 20_000)
    const [first, second, third] = [seen.get(1)!, seen.get(2)!, seen.get(3)!]
    expect([first.state, second.state, third.state]).toEqual(["deferred", "deferred", "sent"])
    expect(first.status).toBe("4.2.0")
    // The simulator's own schedule, exactly as written on the row...
    expect(first.next.getTime() - first.updated.getTime()).toBe(2_000)
    expect(second.next.getTime() - second.updated.getTime()).toBe(4_000)
    // ...and as it happened (each outcome is seen within the 50 ms poll).
    expect(second.updated.getTime() - first.updated.getTime()).toBeGreaterThanOrEqual(2_000)
    expect(third.updated.getTime() - second.updated.getTime()).toBeGreaterThanOrEqual(4_000)
    expect(third.at - first.at).toBeGreaterThanOrEqual(5_900)
    const [hit] = await receiver.waitFor(1, ofEvent("email.sent", recipient))
    expect(hit!.at).toBeGreaterThanOrEqual(third.at - 100)
    const [row] = await auditOf(recipient)
    expect(row).toMatchObject({ event: "sent", attempts: 3 })
    // A deferral emits nothing.
    expect(receiver.hits.filter((h) => JSON.stringify(h.json).includes(recipient)).map((h) => h.json.event)).toEqual(["email.sent"])
  }, 30_000)

  it("suppressed@ makes the item suppressed: nothing queued, nothing put on a list", async () => {
    const res = await send(["suppressed@simulator.herald.invalid"])
    expect(res.status).toBe(202)
    expect(res.json.items[0]).toMatchObject({ status: "suppressed", error: expect.stringContaining("suppressed@simulator.herald.invalid: simulator") })
    expect(await query(app.databaseUrl, "SELECT id FROM deliveries WHERE recipient = 'suppressed@simulator.herald.invalid'")).toEqual([])
    // Mixed with a deliverable one, it is left out like a suppressed address.
    const mixed = await send(["suppressed+1@simulator.herald.invalid", "delivered+mixed@simulator.herald.invalid"])
    expect(mixed.json.items[0].status).toBe("queued")
    const rows = await query<{ recipient: string }>(app.databaseUrl, "SELECT recipient FROM deliveries WHERE message_id = $1", [mixed.json.items[0].message_id])
    expect(rows.map((r) => r.recipient)).toEqual(["delivered+mixed@simulator.herald.invalid"])
  })

  it("takes a +tag and any case", async () => {
    const res = await send(["Delivered+42@Simulator.Herald.Invalid", "BOUNCE+x@SIMULATOR.HERALD.INVALID"])
    expect(res.status).toBe(202)
    await receiver.waitFor(1, ofEvent("email.sent", "Delivered+42@Simulator.Herald.Invalid"))
    const [bounced] = await receiver.waitFor(1, ofEvent("email.bounced", "BOUNCE+x@SIMULATOR.HERALD.INVALID"))
    expect(bounced!.json.status).toBe("5.1.1")
  })

  it("refuses an address at the simulator domain that names no scenario, naming the field", async () => {
    const full = await send(["delivered@simulator.herald.invalid", "nobody@simulator.herald.invalid"])
    expect(full.status).toBe(400)
    expect(full.json.error).toMatchObject({ type: "invalid_request_error", code: "validation_failed", param: "personalizations[0].to[1].email" })
    expect(full.json.error.message).toContain("delivered@simulator.herald.invalid")
    const cc = await send(["delivered@simulator.herald.invalid"], { personalizations: [{ to: [{ email: "delivered@simulator.herald.invalid" }], cc: ["x+delivered@simulator.herald.invalid"] }] })
    expect(cc.json.error).toMatchObject({ code: "validation_failed", param: "personalizations[0].cc[0]" })
    const flat = await app.request("POST", "/v1/mail/send", {
      token,
      body: { from: `hello@${domain}`, to: "deliver@simulator.herald.invalid", subject: "Hi", text: "Hi" }
    })
    expect(flat.json.error).toMatchObject({ code: "validation_failed", param: "to" })
    expect(await query(app.databaseUrl, "SELECT id FROM deliveries WHERE recipient LIKE '%deliver@%' OR recipient LIKE 'nobody@%'")).toEqual([])
  })

  it("needs a verified domain as soon as one real recipient is mixed in, and an added domain always", async () => {
    const mixed = await send(["delivered@simulator.herald.invalid", "someone@customer.example"])
    expect(mixed.status).toBe(403)
    expect(mixed.json.error.code).toBe("domain_not_verified")
    const unknown = await app.request("POST", "/v1/mail/send", {
      token,
      body: { ...body(["delivered@simulator.herald.invalid"]), from: { email: "hello@never-added.example" } }
    })
    expect(unknown.status).toBe(403)
    expect(unknown.json.error.message).toContain("not registered")
  })

  it("counts against the rate limit, never the monthly quota", async () => {
    const first = await send(["delivered+rate1@simulator.herald.invalid"])
    const second = await send(["delivered+rate2@simulator.herald.invalid"])
    expect(Number(second.headers.get("ratelimit-remaining"))).toBe(Number(first.headers.get("ratelimit-remaining")) - 1)
    const usage = await app.request("GET", "/v1/client/usage", { token })
    expect(usage.status).toBe(200)
    expect(usage.json.keys.find((k: { id: string }) => k.id === keyId).sent_this_period).toBe(0)
    expect(usage.json.keys[0].quota_remaining).toBe(usage.json.subscriptions[0].monthly_quota)
  })

  it("a scheduled send to the simulator is released without charging the quota", async () => {
    const res = await send(["delivered+scheduled@simulator.herald.invalid"], { send_at: new Date(Date.now() + 1_000).toISOString() })
    expect(res.status).toBe(202)
    expect(res.json.message).toBe("scheduled")
    // Released now (the appliance's own scheduler may have taken it first: then it is released already).
    await new Promise((r) => setTimeout(r, 1_100))
    await withServices(app, Effect.flatMap(ScheduledSends, (s) => s.releaseDue(new Date())))
    await receiver.waitFor(1, ofEvent("email.sent", "delivered+scheduled@simulator.herald.invalid"))
    const usage = await app.request("GET", "/v1/client/usage", { token })
    expect(usage.json.keys.find((k: { id: string }) => k.id === keyId).sent_this_period).toBe(0)
  })

  it("puts no simulator address on a suppression list and leaves the reputation alone", async () => {
    expect(await query(app.databaseUrl, "SELECT email FROM suppressions")).toEqual([])
    const listed = await app.request("GET", "/v1/client/suppressions", { token })
    expect(listed.json.items).toEqual([])
    // Bounces and sends of the simulator happened above: counted, they would pass the 5 % hard-bounce rate.
    const reason = await withServices(app, Effect.flatMap(Reputation, (r) => r.evaluate(accountId, new Date())), { HERALD_REPUTATION_MIN_VOLUME: "1" })
    expect(reason).toBeNull()
    const still = await send(["delivered+after@simulator.herald.invalid"])
    expect(still.status).toBe(202)
  })
})

describe("the outcome writer", () => {
  let quiet: Appliance
  beforeAll(async () => {
    // No MTA: the test claims the delivery itself and hands the writer an outcome no simulator attempt produces.
    quiet = await startAppliance({ env: { HERALD_DNS_SERVERS: `127.0.0.1:${await freePort()}` } })
  }, 60_000)
  afterAll(async () => {
    await quiet?.stop()
  })

  it("never suppresses a simulator address, even for a bounce that asks for it", async () => {
    const account = await quiet.request("POST", "/v1/admin/accounts", {
      body: { name: "Writer", email: "writer@customers.test", password: "correct horse battery", package_id: "growth" }
    })
    const key = await quiet.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: "writer" } })
    await quiet.request("POST", "/v1/client/domains", { token: key.json.token, body: { domain } })
    const sent = await quiet.request("POST", "/v1/mail/send", { token: key.json.token, body: body(["bounce@simulator.herald.invalid"]) })
    expect(sent.status).toBe(202)
    const written = await withServices(quiet, Effect.gen(function*() {
      const queue = yield* DeliveryQueue
      const now = new Date()
      const [d] = yield* queue.claim("test-owner", now, new Date(now.getTime() + 60_000), 10, [], "transactional")
      const [m] = yield* queue.load([d!.message_id], [])
      return yield* queue.completeMany([{
        owner: "test-owner",
        d: d!,
        m: m!,
        outcome: { _tag: "bounced", code: 550, status: "5.1.1", category: "hard", reply: "5.1.1 no such user", suppress: true },
        now
      }])
    }))
    expect(written).toEqual([true])
    expect(await query(quiet.databaseUrl, "SELECT email FROM suppressions")).toEqual([])
  })
})
