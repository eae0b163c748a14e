/**
 * A trigger's enrolment across a kill -9 (issue 30 item 10): an appliance process is SIGKILLed in
 * the middle of a large import onto a list a sequence's trigger names — after the import's
 * transaction has enrolled a first batch and before it commits. After the restart nobody of the
 * rolled-back import is a member nor enrolled, the members committed before it are enrolled once;
 * the same import run again enrols every member exactly once, each with one `sequence.subscribed`.
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

/** Members committed before the kill, and the import's rows (several 5,000-row batches, so the kill lands mid-import). */
const BEFORE = 50
const IMPORTED = 12_000

/**
 * Each phase's wall time, printed at the end: the file took 11–16 s alone and once 166 s in a
 * full run, and the phase that stalled is what a second look needs.
 */
const phases = () => {
  let last = Date.now()
  const took: Array<string> = []
  return {
    mark: (phase: string) => {
      const now = Date.now()
      took.push(`${phase} ${now - last} ms`)
      last = now
    },
    print: () => console.info(`sequence-triggers-crash phases: ${took.join(", ")}`)
  }
}

describe("a triggered list's import killed -9 mid-transaction", () => {
  it("enrols every sendable member exactly once after the restart: none of the rolled-back import, no double", async () => {
    const databaseUrl = await freshDatabase()
    const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(databaseUrl, text, params)
    const env = { HERALD_DNS_SERVERS: dns.address }
    const bootstrapKey = newToken()
    const started: Array<ApplianceProcess> = []
    const timing = phases()
    const spawn = async () => {
      const p = await spawnAppliance({ databaseUrl, env, bootstrapKey })
      started.push(p)
      return p
    }
    try {
      const a = await spawn()
      const sender = await newSender(a, dns, { packageId: "scale" })
      const api = (app: ApplianceProcess, method: string, route: string, body: unknown) => app.request(method, route, { token: sender.token, body })
      const list = await api(a, "POST", "/v1/bulk/lists", { name: "Joiners" })
      const seq = await api(a, "POST", "/v1/bulk/sequences", { name: "Welcome", from_email: sender.from, trigger: { type: "list_joined", list_id: list.json.id } })
      expect(seq.status).toBe(201)
      const sequenceId = seq.json.id as string
      expect((await api(a, "POST", `/v1/bulk/sequences/${sequenceId}/steps`, { subject: "Hi", html: "<p>x</p>", offset_seconds: 3600 })).status).toBe(201)
      const early = Array.from({ length: BEFORE }, (_, i) => `early${i}@crash.test`)
      expect((await api(a, "POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: early })).status).toBe(200)

      const importBody = { contacts: Array.from({ length: IMPORTED }, (_, i) => ({ email: `joiner${i}@crash.test` })), list_ids: [list.json.id] }
      timing.mark("set-up")
      const importStarted = new Date()
      const doomed = api(a, "POST", "/v1/bulk/contacts/import", importBody).catch(() => undefined)
      // The import's transaction has enrolled a batch and not committed: it holds sequence_subscriptions for writing.
      const enrolling = async () =>
        (await db<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity s JOIN pg_locks l ON l.pid = s.pid
           WHERE s.datname = current_database() AND s.xact_start > $1
             AND l.relation = 'sequence_subscriptions'::regclass AND l.mode = 'RowExclusiveLock'`,
          [importStarted]
        ))[0]!.n > 0
      const deadline = Date.now() + 120_000
      while (!(await enrolling())) {
        expect(Date.now()).toBeLessThan(deadline)
        await sleep(5)
      }
      timing.mark("import enrolling")
      a.child.kill("SIGKILL")
      await a.exited
      await doomed
      timing.mark("killed")

      const b = await spawn()
      timing.mark("restarted")
      const subscriptions = async () =>
        db<{ email: string; n: number }>("SELECT lower(email) AS email, count(*)::int AS n FROM sequence_subscriptions WHERE sequence_id = $1 GROUP BY 1", [sequenceId])
      const events = async () =>
        (await db<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE event = 'sequence.subscribed' AND payload->>'campaign_id' = $1", [sequenceId]))[0]!.n
      const members = async () =>
        (await db<{ n: number }>("SELECT count(*)::int AS n FROM list_memberships WHERE list_id = $1", [list.json.id]))[0]!.n
      // The import rolled back whole: no member of it, nobody of it enrolled; the earlier members once each.
      expect(await members()).toBe(BEFORE)
      const afterKill = await subscriptions()
      expect(afterKill.map((r) => r.email).sort()).toEqual([...early].sort())
      expect(afterKill.every((r) => r.n === 1)).toBe(true)
      expect(await events()).toBe(BEFORE)

      // The same import on the restarted appliance: every member enrolled exactly once, with its event.
      timing.mark("checked after the kill")
      const again = await api(b, "POST", "/v1/bulk/contacts/import", importBody)
      timing.mark("imported again")
      expect(again.status).toBe(200)
      expect(again.json.created).toBe(IMPORTED)
      expect(await members()).toBe(BEFORE + IMPORTED)
      const final = await subscriptions()
      expect(final).toHaveLength(BEFORE + IMPORTED)
      expect(final.every((r) => r.n === 1)).toBe(true)
      expect(await events()).toBe(BEFORE + IMPORTED)
      // Every sendable member is enrolled, and nobody without a membership.
      const [unmatched] = await db<{ missing: number; stray: number }>(
        `SELECT (SELECT count(*)::int FROM list_memberships m LEFT JOIN sequence_subscriptions s ON s.sequence_id = $2 AND s.contact_id = m.contact_id
                 WHERE m.list_id = $1 AND s.id IS NULL) AS missing,
                (SELECT count(*)::int FROM sequence_subscriptions s LEFT JOIN list_memberships m ON m.list_id = $1 AND m.contact_id = s.contact_id
                 WHERE s.sequence_id = $2 AND m.contact_id IS NULL) AS stray`,
        [list.json.id, sequenceId]
      )
      expect(unmatched).toEqual({ missing: 0, stray: 0 })
      timing.mark("checked after the second import")
    } finally {
      timing.print()
      for (const p of started) if (p.child.exitCode === null) p.child.kill("SIGKILL")
    }
  }, 480_000)
})
