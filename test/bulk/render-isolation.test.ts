/**
 * Issue 26, finding 2: one request of one account froze the event loop for every account. Here an
 * appliance runs as its own process (so a frozen event loop shows as a slow `/health`, not as a
 * slow test), with a sink as its MX and a short render deadline (HERALD_RENDER_TIMEOUT_MS=1500),
 * and an attacker's account sends the worst inputs:
 * - the Liquid string-doubling template in a preview (5.7 s of one filter between two of liquidjs's
 *   time checks, measured on the main thread) → stopped at the deadline, 400 `render_failed`;
 * - 503 KB of `<mj-section>` MJML (3.6 s of compiling before) → refused before any work, 400
 *   `validation_failed`, `param: mjml`;
 * - the same template in a campaign → its renders stopped at delivery, and after 3 stops the
 *   campaign pauses with `pause_reason: render_failed`, nothing delivered;
 * - a flood of such previews → they take at most half the render workers: another account's
 *   preview is answered at once.
 * While each runs, the appliance stays fine for the others (`expectResponsive`: `/health` answers
 * 200, the median probe within 100 ms, every one within 1 s; another account's send gets 202).
 * Without the render workers each of these held `/health` for seconds (5.7 s for one render of
 * the template).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApplianceProcess, spawnAppliance } from "../support/appliance.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { expectResponsive, formatHealth, probeHealthWhile } from "../support/health-probe.ts"
import { sleep } from "../support/net.ts"
import { newSender, type Sender } from "../support/sending.ts"
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts"

/** The template: 2^17 × 24 characters split and sorted in one filter call. */
const DOUBLING = `{% assign s = "xxxxxxxxxxxxxxxxxxxxxabc" %}{% for i in (1..17) %}{% assign s = s | append: s %}{% endfor %}{{ s | split: "" | sort_natural | size }}`
/** 503 KB of empty sections, as in the issue. */
const SECTIONS = `<mjml><mj-body>${"<mj-section></mj-section>".repeat(Math.floor(503 * 1024 / 25))}</mj-body></mjml>`

let app: ApplianceProcess
let dns: DnsServer
let sink: SmtpSink
let attacker: Sender
let other: Sender

beforeAll(async () => {
  sink = await startSmtpSink()
  dns = await startDnsServer({ "mx.sink.test": { A: ["127.0.0.1"] } })
  app = await spawnAppliance({
    env: {
      HERALD_DNS_SERVERS: dns.address,
      HERALD_MX_PORT: String(sink.port),
      HERALD_HOSTNAME: "mta.herald.test",
      HERALD_MTA_ENABLED: "true",
      HERALD_RENDER_WORKERS: "2",
      HERALD_RENDER_TIMEOUT_MS: "1500"
    }
  })
  attacker = await newSender(app, dns, { packageId: "growth" })
  other = await newSender(app, dns, { packageId: "growth" })
  dns.set("victims.example", { MX: [{ preference: 10, exchange: "mx.sink.test" }] })
}, 180_000)
afterAll(async () => {
  await app?.stop()
  await sink?.close()
  await dns?.close()
})

/**
 * Probes the appliance while `attack` runs (at least `minMs`): `/health` every 50 ms and one send
 * of the other account part-way. Prints the probe times.
 */
const whileRunning = async <A>(attack: Promise<A>, minMs = 500) => {
  const run = await probeHealthWhile(app, attack, { minMs, bystander: { sender: other, to: "friend@elsewhere.example" } })
  console.log(`while the attack ran: ${formatHealth(run.health)}`)
  return run
}

const preview = (sender: Sender, body: Record<string, unknown>) =>
  app.request("POST", "/v1/bulk/templates/preview", { token: sender.token, body: { subject: "s", ...body } })

describe("a render that would freeze the appliance", () => {
  it("the string-doubling template in a preview is stopped at the deadline, off the main thread", { timeout: 90_000 }, async () => {
    const { result, health } = await whileRunning(preview(attacker, { html: DOUBLING }), 2_000)
    expect(result.status).toBe(400)
    expect(result.json.error).toMatchObject({ code: "render_failed", param: "html" })
    expect(result.json.error.message).toMatch(/longer than 1500 ms/)
    expectResponsive(health)
  })

  it("503 KB of <mj-section> is refused before compiling: 400 validation_failed, param mjml", async () => {
    const started = Date.now()
    const refused = preview(attacker, { mjml: SECTIONS, html: "" }).then((res) => ({ ...res, tookMs: Date.now() - started }))
    const { result, health } = await whileRunning(refused, 2_000)
    expect(result.status).toBe(400)
    expect(result.json.error).toMatchObject({ code: "validation_failed", param: "mjml" })
    expect(result.tookMs).toBeLessThan(2_000)
    expectResponsive(health)
  })

  it("one account's flood of slow previews takes half the workers: another account's preview answers at once", async () => {
    const flood = Promise.all(Array.from({ length: 3 }, () => preview(attacker, { html: DOUBLING })))
    await sleep(300)
    const started = Date.now()
    const mine = await preview(other, { html: "<p>Hi {{ name }}</p>", vars: { name: "Ada" } })
    const waited = Date.now() - started
    expect(mine.status).toBe(200)
    expect(mine.json.html).toBe("<p>Hi Ada</p>")
    // Behind the flood (every worker taken) it waited for a 1.5 s deadline at least.
    expect(waited).toBeLessThan(1_000)
    const { result, health } = await whileRunning(flood)
    expect(result.map((r) => r.status)).toEqual([400, 400, 400])
    expectResponsive(health)
  }, 150_000)

  it("in a campaign, three stopped renders pause it (render_failed) instead of every recipient paying the deadline", async () => {
    const api = (method: string, route: string, body?: unknown) =>
      app.request(method, route, { token: attacker.token, ...(body === undefined ? {} : { body }) })
    const list = await api("POST", "/v1/bulk/lists", { name: "victims" })
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: ["a@victims.example", "b@victims.example", "c@victims.example"] })).status).toBe(200)
    const campaign = await api("POST", "/v1/bulk/campaigns", { name: "Doubling", from_email: attacker.from, subject: "Hi", html: DOUBLING, list_ids: [list.json.id] })
    expect(campaign.status).toBe(201)
    expect((await api("POST", `/v1/bulk/campaigns/${campaign.json.id}/send`)).status).toBe(200)

    const paused = eventually(async () => {
      const read = await api("GET", `/v1/bulk/campaigns/${campaign.json.id}`)
      return read.json.status === "paused" ? read.json : undefined
    }, "the campaign paused", 120_000)
    const { result, health } = await whileRunning(paused, 3_000)
    expect(result.pause_reason).toBe("render_failed")
    expectResponsive(health)
    expect(sink.received.some((m) => m.rcptTo.some((r) => r.endsWith("@victims.example")))).toBe(false)
  }, 180_000)

  it("in a sequence, three stopped renders hold the step's subscriptions (hold_reason render_failed) and their deliveries; resume tries again", async () => {
    const api = (method: string, route: string, body?: unknown) =>
      app.request(method, route, { token: attacker.token, ...(body === undefined ? {} : { body }) })
    const list = await api("POST", "/v1/bulk/lists", { name: "drip victims" })
    const contacts = ["d@victims.example", "e@victims.example", "f@victims.example"]
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts })).status).toBe(200)
    const sequence = await api("POST", "/v1/bulk/sequences", { name: "Doubling drip", from_email: attacker.from })
    expect(sequence.status).toBe(201)
    const id = String(sequence.json.id)
    expect((await api("POST", `/v1/bulk/sequences/${id}/steps`, { subject: "Hi", html: DOUBLING, offset_seconds: 0 })).status).toBe(201)
    expect((await api("POST", `/v1/bulk/sequences/${id}/enroll`, { list_id: list.json.id })).json.enrolled).toBe(3)

    const subscriptions = async () => (await api("GET", `/v1/bulk/sequences/${id}/subscriptions`)).json.items as Array<Record<string, unknown>>
    const held = eventually(async () => {
      const items = await subscriptions()
      return items.every((s) => s.hold_reason === "render_failed") ? items : undefined
    }, "the step's subscriptions held", 120_000)
    const { result, health } = await whileRunning(held, 3_000)
    expect(result.map((s) => s.state)).toEqual(["paused", "paused", "paused"])
    expectResponsive(health)
    // The step's deliveries are held, not rendered again at every retry for 120 h: made due now (as
    // their retry or the hold's recheck would), each is claimed, held again and not rendered.
    const steps = `FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.origin = 'sequence' AND m.account_id = $1`
    const before = await query<{ id: string; last_reply: string | null }>(app.databaseUrl, `SELECT d.id, d.last_reply ${steps} ORDER BY d.id`, [attacker.accountId])
    expect(before).toHaveLength(3)
    await query(app.databaseUrl, `UPDATE deliveries SET next_attempt_at = now() WHERE id IN (SELECT d.id ${steps})`, [attacker.accountId])
    const rows = await eventually(async () => {
      const now = await query<{ id: string; state: string; last_reply: string | null; rechecked: boolean }>(app.databaseUrl,
        `SELECT d.id, d.state, d.last_reply, d.held_at IS NOT NULL AND d.next_attempt_at > now() + interval '5 minutes' AS rechecked ${steps} ORDER BY d.id`, [attacker.accountId])
      return now.every((row) => row.rechecked) ? now : undefined
    }, "the step's deliveries held", 30_000)
    expect(rows.map((row) => row.state).every((state) => state === "queued" || state === "deferred")).toBe(true)
    expect(rows.map((row) => row.last_reply)).toEqual(before.map((row) => row.last_reply))
    expect(sink.received.some((m) => m.rcptTo.some((r) => contacts.includes(r)))).toBe(false)
    // Resumed the way a paused subscription resumes: active again, the reason gone.
    const resumed = await api("POST", `/v1/bulk/sequences/${id}/subscriptions/${String(result[0]!.id)}/resume`)
    expect(resumed.status).toBe(200)
    expect(resumed.json).toMatchObject({ state: "active", hold_reason: null })
  }, 180_000)
})
