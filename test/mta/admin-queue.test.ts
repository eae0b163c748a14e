/**
 * GET /v1/admin/queue on a real appliance delivering to a real SMTP sink: one destination defers
 * every recipient (451 at RCPT), another takes 10 s to answer DATA (so an SMTP transaction is
 * running). The view shows each site's waiting deliveries, deferrals, running transactions and
 * limits; it is answered from one snapshot per period (HERALD_ADMIN_QUEUE_SNAPSHOT_SECONDS, 5 s here
 * rather than the 15 s default) whatever the request rate; it is refused to a non-admin key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { type DeliveryRig, startDeliveryRig } from "../support/mta.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"

/**
 * The snapshot period: long enough that the first, the forty and the last request of the burst
 * below (a fraction of a second on a quiet machine) fall within two snapshots.
 */
const SNAPSHOT_MS = 5_000

let rig: DeliveryRig
let sender: Sender

/** The deliveries to busy.example whose 451 is on record. */
const busyDeferred = async () =>
  (await query<{ n: number }>(rig.app.databaseUrl,
    "SELECT count(*)::int AS n FROM deliveries WHERE recipient_domain = 'busy.example' AND state = 'deferred'"))[0]!.n

interface Site {
  readonly site: string
  readonly queued: number
  readonly deferred: number
  readonly deferrals_last_hour: number
  readonly connections: number
  readonly slots_held: number
  readonly max_connections: number
  readonly max_per_minute: number | null
  readonly oldest_due_at: string | null
  readonly shaping: string
}

const queue = (query = "") => rig.app.request("GET", `/v1/admin/queue${query}`)
const siteOf = (items: ReadonlyArray<Site>, domain: string) =>
  items.find((s) => s.site === `domain:${domain}` || s.site.includes("mx.sink.test") && s.site.includes(domain)) ??
    items.find((s) => s.site.includes("mx.sink.test"))

beforeAll(async () => {
  // 10 s: two snapshot periods, so the transaction still runs at the next snapshot should the first
  // miss the deferrals; the file's end waits for it (it was 20 s when a period was 15 s).
  rig = await startDeliveryRig({ HERALD_ADMIN_QUEUE_SNAPSHOT_SECONDS: String(SNAPSHOT_MS / 1000) }, { delayMs: 10_000 })
  sender = await newSender(rig.app, rig.dns, { packageId: "growth" })
  rig.route("busy.example")
  rig.route("slow.example")
  for (const r of ["a", "b", "c", "d"]) rig.sink.replies.set(`${r}@busy.example`, "451 4.3.0 Try again later")
}, 60_000)
afterAll(async () => {
  await rig?.stop()
})

describe("GET /v1/admin/queue", () => {
  it("refuses a non-admin key with 403 permission_error / forbidden", async () => {
    const res = await rig.app.request("GET", "/v1/admin/queue", { token: sender.token })
    expect(res.status).toBe(403)
    expect(res.json.error).toMatchObject({ type: "permission_error", code: "forbidden" })
  })

  it("shows the sites' deferred deliveries, deferrals of the last hour, running transactions and limits", async () => {
    const busy = await rig.app.request("POST", "/v1/mail/send", {
      token: sender.token,
      body: sendBody(sender, ["a@busy.example", "b@busy.example", "c@busy.example"])
    })
    expect(busy.status).toBe(202)
    const slow = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "someone@slow.example") })
    expect(slow.status).toBe(202)
    // Both domains share the sink's MX host set: one site, whose transaction to slow.example runs for 10 s.
    // The view is first asked once the three deferrals are written and that transaction is past its
    // RCPT: asked before, its first snapshot is taken too early and the next one is a period away.
    await eventually(async () =>
      (await busyDeferred()) === 3 && rig.sink.rcpts.some((r) => r.address === "someone@slow.example") ? true : undefined,
      "the deferrals written and the slow transaction running", 40_000)
    const page = await eventually(async () => {
      const res = await queue()
      const site = res.json.items.find((s: Site) => s.site.includes("mx.sink.test"))
      return site !== undefined && site.deferred === 3 && site.connections === 1 ? res.json : undefined
    }, "the deferrals and the running transaction in a snapshot", 40_000)
    const site = page.items.find((s: Site) => s.site.includes("mx.sink.test")) as Site
    expect(site).toMatchObject({
      // The delivery in flight: a claimed delivery stays queued until its outcome is written.
      queued: 1,
      deferred: 3,
      deferrals_last_hour: 3,
      connections: 1,
      max_connections: 10,
      max_per_minute: null,
      shaping: "default"
    })
    expect(site.slots_held).toBeGreaterThanOrEqual(1)
    expect(Date.parse(site.oldest_due_at!)).toBeGreaterThan(Date.now())
    expect(page.total).toBeGreaterThanOrEqual(1)
    expect(siteOf(page.items, "busy.example")).toBeDefined()
  }, 60_000)

  it("answers every request from one snapshot per period, however many arrive", async () => {
    const first = await queue()
    // Forty requests at once, then more while a new delivery waits: all get the same snapshot.
    const burst = await Promise.all(Array.from({ length: 40 }, () => queue()))
    const more = await rig.app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, "d@busy.example") })
    expect(more.status).toBe(202)
    const after = await queue()
    const taken = new Set([first, ...burst, after].map((r) => r.json.generated_at))
    // At most two: the period may have ended between the first and the last request.
    expect(taken.size).toBeLessThanOrEqual(2)
    for (const r of [first, ...burst, after]) {
      expect(r.status).toBe(200)
      expect(Date.now() - Date.parse(r.json.generated_at)).toBeLessThanOrEqual(SNAPSHOT_MS + 2_000)
    }
    // A later snapshot sees the new delivery, once its 451 is on record (a period may now end first).
    await eventually(async () => ((await busyDeferred()) === 4 ? true : undefined), "the fourth deferral written", 20_000)
    const writtenAt = Date.now()
    const fresh = await eventually(async () => {
      const res = await queue()
      return res.json.generated_at !== after.json.generated_at && Date.parse(res.json.generated_at) >= writtenAt ? res.json : undefined
    }, "the next snapshot taken after it", 20_000)
    const site = fresh.items.find((s: Site) => s.site.includes("mx.sink.test")) as Site
    expect(site.deferred).toBe(4)
  }, 60_000)

  it("pages with limit and offset, and bounds them", async () => {
    const res = await queue("?limit=1&offset=0")
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ limit: 1, offset: 0 })
    expect(res.json.items.length).toBeLessThanOrEqual(1)
    const beyond = await queue("?offset=1000")
    expect(beyond.json.items).toEqual([])
    for (const q of ["?limit=0", "?limit=201", "?offset=-1", "?limit=x"]) {
      const bad = await queue(q)
      expect(bad.status).toBe(400)
      expect(bad.json.error.code).toBe("validation_failed")
    }
  })
})
