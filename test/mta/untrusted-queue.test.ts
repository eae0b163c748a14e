/**
 * The MTA does not trust its queue (issue #22): rows written by an older version, by hand, or
 * accepted before a limit existed reach it too. A delivery whose attempts keep ending with no
 * outcome (the process died during each, the lease ran out) is failed after five such claims
 * instead of being tried forever; a message too many-parted to compose (300,000 tiny
 * attachments: 12 MB of JSON that ran the process out of heap) or too large to read fails its
 * delivery with a clear error — and the appliance keeps delivering everything else.
 *
 * Each scenario queues through the API with the MTA off, then shapes the rows as the bad case
 * would have left them (claims made with the real queue code, contents written by SQL), and
 * starts an appliance with the MTA on the same database.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
// The queue tells bulk of its outcomes through ports (src/appliance.ts wires them).
import { PortsLive } from "../../src/appliance.ts"
import { DeliveryQueue } from "../../src/mta/queue/DeliveryQueue.ts"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, sendBody } from "../support/sending.ts"
import { type SmtpSink, startSmtpSink } from "../support/smtp-sink.ts"
import { deliveryOf, eventsOf, until, waitForState } from "./outbound.ts"
import { sleep } from "../support/net.ts"

let dns: DnsServer
let sink: SmtpSink

beforeAll(async () => {
  sink = await startSmtpSink()
  dns = await startDnsServer({ "mx.sink.test": { A: ["127.0.0.1"] } })
  for (const domain of ["abandon.example", "defer.example", "poison.example"]) {
    dns.set(domain, { MX: [{ preference: 10, exchange: "mx.sink.test" }] })
  }
})
afterAll(async () => {
  await sink.close()
  await dns.close()
})

/** MAX_JSON_MB 8: a stored request over 16 MB is "too large to read" (the 300,000 attachments are 11 MB), without writing a 30 MB row. */
const env = (mta: boolean) => ({
  HERALD_DNS_SERVERS: dns.address,
  HERALD_MX_PORT: String(sink.port),
  HERALD_HOSTNAME: "mta.herald.test",
  HERALD_MTA_ENABLED: String(mta),
  MAX_JSON_MB: "8"
})

/** Queues one message per recipient with the MTA off; answers their message ids. */
const queueWithMtaOff = async (recipients: ReadonlyArray<string>) => {
  const app = await startAppliance({ env: env(false) })
  const sender = await newSender(app, dns, { packageId: "growth" })
  const ids: Array<string> = []
  for (const to of recipients) {
    const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to) })
    expect(res.status).toBe(202)
    ids.push(res.json.items[0].message_id)
  }
  return { app, sender, ids }
}

/** Runs the real queue code against the appliance's database. */
const withQueue = <A>(app: Appliance, use: (queue: DeliveryQueue) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(DeliveryQueue, use).pipe(
    Effect.provide(DeliveryQueue.Default.pipe(Layer.provide(PortsLive), Layer.provide(PgClient.layer({ url: Redacted.make(app.databaseUrl) }))))
  )))

/**
 * Claims the due deliveries outside `skip` `times` times, each lease lapsing at once — as a
 * replica that claimed them and died during the attempt, again and again.
 */
const claimAndDie = (app: Appliance, times: number, skip: ReadonlyArray<string>) =>
  withQueue(app, (queue) =>
    Effect.gen(function*() {
      for (let i = 0; i < times; i++) {
        const now = new Date()
        const claimed = yield* queue.claim(`crashed-${i}`, now, new Date(now.getTime() + 1), 10, skip, "transactional")
        expect(claimed).toHaveLength(1)
        yield* Effect.promise(() => sleep(5))
      }
    }))

describe("deliveries the MTA cannot trust", () => {
  it("fails a delivery claimed five times without an outcome, with email.failed, and a deferral still counts as an outcome", async () => {
    const victim = "victim@abandon.example"
    const slow = "slow@defer.example"
    const { app: setup, sender, ids: [victimId, slowId] } = await queueWithMtaOff([victim, slow])
    await claimAndDie(setup, 5, ["defer.example"])
    await claimAndDie(setup, 4, ["abandon.example"])
    await setup.stop()

    sink.replies.set(slow, "451 4.3.0 Try again later")
    const app = await startAppliance({ databaseUrl: setup.databaseUrl, env: env(true) })
    try {
      const failed = await waitForState(app, victimId!, victim, ["failed", "sent", "deferred", "bounced"])
      expect(failed).toMatchObject({ state: "failed", attempts: 1, last_status: "5.3.0" })
      expect(failed.last_reply).toMatch(/abandoned after 5 claims without an outcome/)
      expect(sink.received.filter((m) => m.rcptTo.includes(victim))).toEqual([])
      const events = await eventsOf(app, "email.failed", victimId!)
      expect(events.map((e) => e.payload)).toEqual([expect.objectContaining({
        to: [victim],
        message_id: victimId,
        error: expect.stringMatching(/abandoned after 5 claims without an outcome/)
      })])
      const audit = await app.request("GET", `/v1/mail/audit?search=${victim}`, { token: sender.token })
      expect(audit.json.items[0].event).toBe("failed")

      // Four lapsed claims, then an attempt that ended (deferred): the count starts again.
      const deferred = await waitForState(app, slowId!, slow, ["deferred", "failed", "sent", "bounced"])
      expect(deferred).toMatchObject({ state: "deferred", attempts: 1, last_code: 451 })
      const [row] = await query<{ claims_since_outcome: number }>(app.databaseUrl,
        "SELECT claims_since_outcome FROM deliveries WHERE id = $1", [deferred.id])
      expect(row!.claims_since_outcome).toBe(0)
    } finally {
      await app.stop()
      sink.replies.delete(slow)
    }
  })

  it("fails a queued message of 300,000 tiny attachments, or too large to read, and keeps delivering the rest", async () => {
    const parts = "parts@poison.example"
    const headers = "headers@poison.example"
    const large = "large@poison.example"
    const fine = "fine@poison.example"
    const { app: setup, sender, ids: [partsId, headersId, largeId, fineId] } = await queueWithMtaOff([parts, headers, large, fine])
    // As anything writing the tables could have stored them (the request's shared part, in
    // message_contents): content_bytes is what the queue writer measures, both parts.
    const shared = (set: string, id: string) =>
      query(setup.databaseUrl, `UPDATE message_contents c SET content = ${set} FROM messages m WHERE c.id = m.content_id AND m.id = $1`, [id])
    await shared(`jsonb_set(c.content, '{attachments}',
        (SELECT jsonb_agg(jsonb_build_object('content', 'QQ==', 'filename', 'a')) FROM generate_series(1, 300000)))`, partsId!)
    await shared(`jsonb_set(c.content, '{headers}', (SELECT jsonb_object_agg('X-Probe-' || i, 'v') FROM generate_series(1, 5000) i))`, headersId!)
    await shared(`jsonb_set(c.content, '{content,0,value}', to_jsonb(repeat('x', 17 * 1048576)))`, largeId!)
    await query(setup.databaseUrl, `UPDATE messages m SET content_bytes = octet_length(m.content::text) + octet_length(c.content::text)
        FROM message_contents c WHERE c.id = m.content_id AND m.id = ANY($1)`, [[partsId, headersId, largeId]])
    await setup.stop()

    const app = await startAppliance({ databaseUrl: setup.databaseUrl, env: env(true) })
    try {
      const states = ["failed", "sent", "deferred", "bounced"]
      const partsRow = await waitForState(app, partsId!, parts, states)
      expect(partsRow).toMatchObject({ state: "failed", last_status: "5.3.4" })
      expect(partsRow.last_reply).toBe("the message has 300000 attachments; at most 1000 can be composed")
      const headersRow = await waitForState(app, headersId!, headers, states)
      expect(headersRow).toMatchObject({ state: "failed", last_status: "5.3.4" })
      expect(headersRow.last_reply).toMatch(/more than 1000 custom header fields/)
      const largeRow = await waitForState(app, largeId!, large, states)
      expect(largeRow).toMatchObject({ state: "failed", last_status: "5.3.4" })
      expect(largeRow.last_reply).toMatch(/^the stored message is \d+ bytes; at most 16777216 \(twice MAX_JSON_MB\) are read for delivery$/)
      const events = await eventsOf(app, "email.failed", partsId!)
      expect(events.map((e) => e.payload.error)).toEqual(["the message has 300000 attachments; at most 1000 can be composed"])

      expect((await waitForState(app, fineId!, fine, states)).state).toBe("sent")
      // The same appliance goes on accepting and delivering.
      const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "after@poison.example") })
      expect(res.status).toBe(202)
      const after = await until("the next message delivered", async () => {
        const row = await deliveryOf(app, res.json.items[0].message_id, "after@poison.example")
        return row?.state === "sent" ? row : undefined
      })
      expect(after.attempts).toBe(1)
      expect(sink.received.filter((m) => [parts, headers, large].some((r) => m.rcptTo.includes(r)))).toEqual([])
    } finally {
      await app.stop()
    }
  }, 60_000)
})
