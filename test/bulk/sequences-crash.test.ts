/**
 * Exactly once with real processes: two appliance processes on one database. The first one,
 * alone at work (the second frozen with SIGSTOP), is SIGKILLed in the middle of a scheduler batch
 * (a transaction holding subscriptions: it rolls back) while a backlog of due steps is queued; it
 * is started again and takes up the backlog; then the second one is thawed and both work at once,
 * with more contacts enrolled. Every subscription gets each step queued exactly once — one
 * `sequence_step_sends` row, one message and one delivery per subscription and step — and none is
 * missing. The MTA is off, so the queue rows stay to be counted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApplianceProcess, newToken, spawnAppliance } from "../support/appliance.ts"
import { freshDatabase, query } from "../support/database.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender } from "../support/sending.ts"
import { sleep } from "../support/net.ts"

let dns: DnsServer
beforeAll(async () => {
  dns = await startDnsServer()
})
afterAll(() => dns.close())

/** Contacts enrolled before the kill, and after the restart. */
const FIRST = 300
const MORE = 100
const STEPS = 2

describe("the step scheduler across a kill -9 and two appliances", () => {
  it("queues each step once per subscription, none missing", async () => {
    const databaseUrl = await freshDatabase()
    const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(databaseUrl, text, params)
    const env = { HERALD_DNS_SERVERS: dns.address }
    const bootstrapKey = newToken()
    const started: Array<ApplianceProcess> = []
    let stopped: ApplianceProcess | undefined
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
      // The second appliance is frozen (SIGSTOP) so that the first one alone works through the backlog.
      b.child.kill("SIGSTOP")
      stopped = b
      const enrolledAt = new Date()
      await enrol(a, 0, FIRST)

      const sent = async () => (await db<{ n: number }>("SELECT count(*)::int AS n FROM sequence_step_sends"))[0]!.n
      // A scheduler batch of the first appliance in flight: a transaction that has recorded steps and not
      // committed yet (only the scheduler writes sequence_step_sends; the frozen one began none since the enrolment).
      const inFlight = async () =>
        (await db<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
           WHERE a.datname = current_database() AND a.xact_start > $1
             AND l.relation = 'sequence_step_sends'::regclass AND l.mode = 'RowExclusiveLock'`,
          [enrolledAt]
        ))[0]!.n > 0
      // Killed after its first batches committed, in the middle of the next one.
      for (let waited = 0; (await sent()) < 100 || !(await inFlight()); waited += 5) {
        expect(waited).toBeLessThan(30_000)
        await sleep(5)
      }
      a.child.kill("SIGKILL")
      await a.exited
      const atKill = await sent()
      expect(atKill).toBeLessThan(FIRST * STEPS)
      // Started again: the restarted appliance alone takes up where the killed one stopped.
      const again = await spawn()
      for (let waited = 0; (await sent()) === atKill; waited += 50) {
        expect(waited, "the restarted appliance queued nothing").toBeLessThan(30_000)
        await sleep(50)
      }
      // Then both appliances at once, with more to do.
      b.child.kill("SIGCONT")
      stopped = undefined
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
      stopped?.child.kill("SIGCONT")
      await Promise.all(started.map((p) => p.stop()))
    }
  }, 120_000)
})
