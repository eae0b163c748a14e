/**
 * Checks at delivery time, end to end (API → queue → MTA → SMTP sink): a delivery deferred once
 * (the sink answers 451), whose facts then change, is not sent when it falls due again — its
 * recipient suppressed on the account's or the platform's list, its recipient domain blocked, its
 * account suspended, its sending domain unverified past its grace — and ends `failed` with
 * email.failed naming the reason (and the audit API's `failed`), with no SMTP transaction for it.
 * A reputation pause holds it instead: no attempt while paused, delivered once an admin lifts the
 * pause, failed at the queue's maximum age. Simulator recipients skip the sending-domain check
 * only. The facts are read by the claim statement itself: checked on its compiled text and plan
 * (and test/mta/queue-plan.test.ts explains the same statement over a long queue).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SIMULATOR_DOMAIN } from "../../src/lib/simulator.ts"
// The queue tells bulk of its outcomes through ports (src/appliance.ts wires them).
import { PortsLive } from "../../src/appliance.ts"
import { DeliveryQueue } from "../../src/mta/queue/DeliveryQueue.ts"
import { query } from "../support/database.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts"
import { deliveryOf, eventsOf, makeDue, type OutboundRig, startOutbound, until, waitForState } from "./outbound.ts"
import { sleep } from "../support/net.ts"

const HOUR = 3_600_000
const MX = { MX: [{ preference: 10, exchange: "mx.sink.test" }] }

let sink: SmtpSink
let rig: OutboundRig

beforeAll(async () => {
  sink = await startSmtpSink()
  rig = await startOutbound(sink.port, {
    "mx.sink.test": { A: ["127.0.0.1"] },
    "checks.example": MX,
    "blocked-checks.example": MX
  }, { HERALD_QUEUE_MAX_AGE_HOURS: "2", HERALD_DOMAIN_GRACE_HOURS: "72" })
})
afterAll(async () => {
  await rig.stop()
  await sink.close()
})

const senderOf = () => newSender(rig.app, rig.dns, { packageId: "growth" })

/** RCPT TO commands the sink was given for `address`, whatever it answered. */
const rcptsTo = (address: string) => sink.rcpts.filter((r) => r.address === address.toLowerCase()).length

/**
 * Sends from `sender` to each of `to`, which the sink answers 451 at first: returns once each
 * delivery is deferred after one attempt (one RCPT each), with the sink's 451 taken back.
 */
const sendDeferred = async (sender: Sender, to: ReadonlyArray<string>) => {
  for (const address of to) sink.replies.set(address.toLowerCase(), "451 4.3.0 Try again later")
  const res = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to) })
  expect(res.status, res.text).toBe(202)
  const messageId: string = res.json.items[0].message_id
  const rows = []
  for (const address of to) rows.push(await waitForState(rig.app, messageId, address, ["deferred"], { attempts: 1 }))
  // From now on the sink would accept them: a delivery the checks let through is sent.
  for (const address of to) sink.replies.delete(address.toLowerCase())
  for (const address of to) expect(rcptsTo(address)).toBe(1)
  return { messageId, requestId: res.json.request_id as string, ids: rows.map((r) => r.id) }
}

/** The delivery made due again ended `failed` with `reason`, without reaching the sink, with email.failed and the audit's `failed`. */
const expectFailedUnsent = async (sender: Sender, messageId: string, requestId: string, to: string, reason: string) => {
  const row = await waitForState(rig.app, messageId, to, ["failed", "sent", "bounced", "deferred"], { attempts: 2 })
  expect(row.state).toBe("failed")
  expect(row.last_reply).toBe(reason)
  expect(rcptsTo(to)).toBe(1)
  expect(sink.received.filter((m) => m.rcptTo.includes(to))).toEqual([])
  const events = await eventsOf(rig.app, "email.failed", messageId)
  expect(events.map((e) => e.payload).filter((p) => p.to[0] === to)).toEqual([{
    to: [to],
    subject: "Hello",
    message_id: messageId,
    request_id: requestId,
    error: reason
  }])
  const audit = await rig.app.request("GET", `/v1/mail/audit?search=${encodeURIComponent(to)}`, { token: sender.token })
  expect(audit.status).toBe(200)
  expect(audit.json.items.map((i: { event: string }) => i.event)).toEqual(["failed"])
}

const heldAt = async (id: string) =>
  (await query<{ held_at: Date | null }>(rig.app.databaseUrl, "SELECT held_at FROM deliveries WHERE id = $1", [id]))[0]!.held_at

describe("checks before every attempt", () => {
  // The platform case writes the address in mixed case: lists are kept in lower case.
  for (
    const [scope, to, reason, error] of [
      ["account", "account-suppressed@checks.example", "bounce", "recipient suppressed (bounce) since acceptance"],
      ["platform", "Platform-Suppressed@checks.example", "complaint", "recipient suppressed on the platform list (complaint) since acceptance"]
    ] as const
  ) {
    it(`fails a delivery whose recipient was put on the ${scope}'s suppression list since acceptance`, async () => {
      const sender = await senderOf()
      const { messageId, requestId, ids } = await sendDeferred(sender, [to])
      const added = await rig.app.request("POST", "/v1/admin/suppressions", {
        body: { email: to, scope, reason, ...(scope === "account" ? { account_id: sender.accountId } : {}) }
      })
      expect(added.status, added.text).toBe(201)
      await makeDue(rig.app, ids[0]!)
      await expectFailedUnsent(sender, messageId, requestId, to, error)
    })
  }

  it("fails a delivery whose recipient domain was blocked since acceptance, and sends the message's other recipient", async () => {
    const sender = await senderOf()
    const blocked = "someone@blocked-checks.example"
    const other = "other@checks.example"
    const { messageId, requestId, ids } = await sendDeferred(sender, [blocked, other])
    const added = await rig.app.request("POST", "/v1/admin/blocked-domains", { body: { domain: "blocked-checks.example" } })
    expect(added.status, added.text).toBe(201)
    // Both due at once: one claim decides both.
    for (const id of ids) await makeDue(rig.app, id)
    await expectFailedUnsent(sender, messageId, requestId, blocked, "recipient domain blocked-checks.example blocked")
    expect((await waitForState(rig.app, messageId, other, ["sent", "failed"])).state).toBe("sent")
  })

  it("fails a delivery whose account was suspended since acceptance", async () => {
    const sender = await senderOf()
    const to = "suspended@checks.example"
    const { messageId, requestId, ids } = await sendDeferred(sender, [to])
    expect((await rig.app.request("POST", `/v1/admin/accounts/${sender.accountId}/suspend`)).status).toBe(200)
    await makeDue(rig.app, ids[0]!)
    await expectFailedUnsent(sender, messageId, requestId, to, "account suspended")
  })

  it("sends within the sending domain's grace, fails past it; a simulator recipient is still sent", async () => {
    const sender = await senderOf()
    const inGrace = "within@checks.example"
    const to = "grace@checks.example"
    const simulated = `delivered@${SIMULATOR_DOMAIN}`
    const { messageId, requestId, ids } = await sendDeferred(sender, [inGrace, to])
    // The TXT record is gone: found missing 71 hours ago, within the grace (72), then 73.
    rig.dns.set(sender.domain, {})
    const lostHoursAgo = (hours: number) =>
      query(rig.app.databaseUrl,
        "UPDATE domains SET verification_lost_at = now() - make_interval(hours => $2), last_checked_at = now() WHERE domain = $1",
        [sender.domain, hours])
    await lostHoursAgo(71)
    await makeDue(rig.app, ids[0]!)
    expect((await waitForState(rig.app, messageId, inGrace, ["sent", "failed"])).state).toBe("sent")

    await lostHoursAgo(73)
    await makeDue(rig.app, ids[1]!)
    await expectFailedUnsent(sender, messageId, requestId, to, `sending domain ${sender.domain} unverified past its grace`)
    // Simulator mail never leaves the appliance (test/mta/simulator.test.ts): sent past the grace too.
    const tried = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, [simulated]) })
    expect(tried.status, tried.text).toBe(202)
    expect((await waitForState(rig.app, tried.json.items[0].message_id, simulated, ["sent", "failed"])).state).toBe("sent")
  })
})

describe("a reputation pause holds deliveries", () => {
  const pause = (sender: Sender) =>
    query(rig.app.databaseUrl, "UPDATE accounts SET sending_paused_at = now(), sending_paused_reason = 'complaint rate 0.50%' WHERE id = $1",
      [sender.accountId])

  it("does not attempt a paused account's delivery, and delivers it once an admin lifts the pause", async () => {
    const sender = await senderOf()
    const to = "held@checks.example"
    const { messageId, ids } = await sendDeferred(sender, [to])
    await pause(sender)
    await makeDue(rig.app, ids[0]!)
    await until("the delivery held", async () => ((await heldAt(ids[0]!)) === null ? undefined : true))
    const held = (await deliveryOf(rig.app, messageId, to))!
    expect(held).toMatchObject({ state: "deferred", attempts: 1 })
    expect(held.next_attempt_at.getTime()).toBeGreaterThan(Date.now() + 5 * 60_000)
    await sleep(1_500)
    expect(rcptsTo(to)).toBe(1)
    expect((await deliveryOf(rig.app, messageId, to))!.attempts).toBe(1)

    const lifted = await rig.app.request("POST", `/v1/admin/accounts/${sender.accountId}/unpause`)
    expect(lifted.status, lifted.text).toBe(200)
    const sent = await waitForState(rig.app, messageId, to, ["sent", "failed"], { timeoutMs: 10_000 })
    expect(sent).toMatchObject({ state: "sent", attempts: 2 })
    expect(sink.received.filter((m) => m.rcptTo.includes(to)).length).toBe(1)
    expect(await eventsOf(rig.app, "email.failed", messageId)).toEqual([])
  })

  it("fails a held delivery at the queue's maximum age", async () => {
    const sender = await senderOf()
    const to = "held-too-long@checks.example"
    const { messageId, requestId, ids } = await sendDeferred(sender, [to])
    await pause(sender)
    await makeDue(rig.app, ids[0]!, new Date(Date.now() - 3 * HOUR))
    await expectFailedUnsent(sender, messageId, requestId, to, "gave up at the queue's maximum age: account sending paused (complaint rate 0.50%)")
  })
})

describe("the claim reads the checks", () => {
  // With a long queue the claim's plan stays an index scan stopping at LIMIT: test/mta/queue-plan.test.ts
  // explains this same compiled statement, checks included, over 10,000 due rows.
  it("in its own statement: one compiled claim, every table of the checks read inside its plan", async () => {
    const now = new Date()
    const program = Effect.map(DeliveryQueue, (queue) => queue.claim("checks-test", now, new Date(now.getTime() + 60_000), 100, [], "transactional").compile())
    const layer = DeliveryQueue.Default.pipe(Layer.provide(PortsLive), Layer.provide(PgClient.layer({ url: Redacted.make(rig.app.databaseUrl) })))
    const [text, params] = await Effect.runPromise(Effect.scoped(Effect.provide(program, layer)))
    expect(text).toMatch(/^\s*UPDATE deliveries d\b/)
    expect(text.match(/\bAS checks\b/g)).toHaveLength(1)
    for (const table of ["suppressions", "blocked_domains", "accounts", "domains", "messages"]) expect(text).toMatch(new RegExp(`(FROM|JOIN) ${table} `))
    interface Node {
      readonly "Node Type": string
      readonly "Relation Name"?: string
      readonly Plans?: ReadonlyArray<Node>
    }
    const nodesOf = (node: Node): Array<Node> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]
    const plan = await query<{ "QUERY PLAN": Array<{ Plan: Node }> }>(rig.app.databaseUrl, `EXPLAIN (FORMAT JSON) ${text}`, params)
    const nodes = nodesOf(plan[0]!["QUERY PLAN"][0]!.Plan)
    const relations = new Set(nodes.map((n) => n["Relation Name"]).filter((r) => r !== undefined))
    for (const table of ["deliveries", "suppressions", "blocked_domains", "accounts", "domains", "messages"]) expect(relations).toContain(table)
  })
})
