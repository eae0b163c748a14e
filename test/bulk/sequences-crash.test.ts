/**
 * Exactly once with real processes: two appliance processes on one database run the step
 * scheduler at once; one of them is SIGKILLed while the schedulers are queueing a backlog of due
 * steps (its batch in flight rolls back) and then started again, and more contacts are enrolled
 * through it. Every subscription gets each step queued exactly once — one
 * `sequence_step_sends` row, one message and one delivery per subscription and step — and none is
 * missing. The MTA is off, so the queue rows stay to be counted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApplianceProcess, newToken, spawnAppliance } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender } from "../support/sending.ts"

let dns: DnsServer
beforeAll(async () => {
  dns = await startDnsServer()
})
afterAll(() => dns.close())

/** Contacts enrolled before the kill, and after the restart. */
const FIRST = 300
const MORE = 100
const STEPS = 2
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("the step scheduler across a kill -9 and two appliances", () => {
  it("queues each step once per subscription, none missing", async () => {
    const databaseUrl = await freshDatabase()
    const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(databaseUrl, text, params)
    const env = { HERALD_DNS_SERVERS: dns.address }
    const bootstrapKey = newToken()
    const started: Array<ApplianceProcess> = []
    const spawn = async () => {
      const p = await spawnAppliance({ databaseUrl, env, bootstrapKey })
      started.push(p)
      return p
    }
    try {
      // Two processes on one database (the migrations take a lock: starting both at once is safe).
      const [a, b] = await Promise.all([spawn(), spawn()])
      const sender = await newSender(a, dns, { packageId: "scale" })
      const api = (app: ApplianceProcess, method: string, route: string, body: unknown) => app.request(method, route, { token: sender.token, body })
      const seq = await api(a, "POST", "/v1/bulk/sequences", { name: "Crash", from_email: sender.from })
      // Both steps due at once: a backlog of steps, queued 50 subscriptions a transaction by each scheduler.
      for (const i of [1, 2]) {
        expect((await api(a, "POST", `/v1/bulk/sequences/${seq.json.id}/steps`, { subject: `Step ${i}`, html: "<p>x</p>", offset_seconds: 0 })).status)
          .toBe(201)
      }
      const enrol = async (app: ApplianceProcess, from: number, count: number) => {
        const list = await api(app, "POST", "/v1/bulk/lists", { name: `From ${from}` })
        const emails = Array.from({ length: count }, (_, i) => `delivered+c${from + i}@simulator.herald.invalid`)
        expect((await api(app, "POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: emails })).status).toBe(200)
        expect((await api(app, "POST", `/v1/bulk/sequences/${seq.json.id}/enroll`, { list_id: list.json.id })).json.enrolled).toBe(count)
      }
      await enrol(b, 0, FIRST)

      const sent = async () => (await db<{ n: number }>("SELECT count(*)::int AS n FROM sequence_step_sends"))[0]!.n
      // Kill the first appliance once the schedulers have committed their first batches: it is in the middle of the backlog.
      for (let waited = 0; (await sent()) < 100; waited += 10) {
        expect(waited).toBeLessThan(30_000)
        await sleep(10)
      }
      a.child.kill("SIGKILL")
      await a.exited
      expect(await sent()).toBeLessThan(FIRST * STEPS)
      // Started again on the same database, beside the one that kept running, and given more to do.
      const again = await spawn()
      await enrol(again, FIRST, MORE)

      for (let waited = 0; ; waited += 200) {
        const [left] = await db<{ n: number }>("SELECT count(*)::int AS n FROM sequence_subscriptions WHERE next_due_at IS NOT NULL")
        if (left!.n === 0) break
        expect(waited, `${left!.n} subscriptions still due`).toBeLessThan(60_000)
        await sleep(200)
      }
      const perStep = await db<{ subscription_id: string; step: number; sends: number; messages: number; deliveries: number }>(
        `SELECT s.id AS subscription_id, t.id AS step,
           (SELECT count(*)::int FROM sequence_step_sends x WHERE x.subscription_id = s.id AND x.step_id = t.id) AS sends,
           (SELECT count(*)::int FROM messages m WHERE m.request_id = s.id AND (m.content->>'step')::int = t.id) AS messages,
           (SELECT count(*)::int FROM deliveries d JOIN messages m ON m.id = d.message_id
              WHERE m.request_id = s.id AND (m.content->>'step')::int = t.id) AS deliveries
         FROM sequence_subscriptions s JOIN sequence_steps t ON t.sequence_id = s.sequence_id`)
      expect(perStep).toHaveLength((FIRST + MORE) * STEPS)
      const wrong = perStep.filter((r) => r.sends !== 1 || r.messages !== 1 || r.deliveries !== 1)
      expect(wrong).toEqual([])
      // Every recorded send names the message that was queued for it, and nothing else was queued.
      const orphans = await db("SELECT 1 FROM sequence_step_sends x LEFT JOIN messages m ON m.id = x.message_id WHERE m.id IS NULL")
      expect(orphans).toEqual([])
      const [total] = await db<{ n: number }>("SELECT count(*)::int AS n FROM messages")
      expect(total!.n).toBe((FIRST + MORE) * STEPS)
    } finally {
      await Promise.all(started.map((p) => p.stop()))
    }
  }, 120_000)
})
