/**
 * Issue 26 finding 9: nothing bounded what one read may cost the database. 50 engagement rules over
 * 620,000 contacts ran 4 s per preview, and `custom contains` over large metadata as long, each call
 * repeatable by any key. With a statement timeout on the reads a request runs (HERALD_QUERY_TIMEOUT_MS),
 * such a preview is stopped by PostgreSQL and answered 422 `query_too_expensive` naming `rules`;
 * cheaper reads and other accounts go on as before.
 *
 * The audience is small (5,000 contacts, DESIGN "Test sizes") and the timeout small to match:
 * 50 `custom contains` rules matched with `any`, over 2 KB of metadata each, cost about 4 s of
 * PostgreSQL time here, four times the configured 1 s, while a cheap preview of the same contacts
 * answers in about 40 ms. (At the smallest limit, 100 ms, a cheap preview on a loaded 2-core CI
 * machine ran past it too: the margin must hold both ways.) The same rules as a campaign's segment
 * make its freeze (the long work's own limit, HERALD_LONG_QUERY_TIMEOUT_MS, here 1 s) run for
 * seconds: stopped too, answered 422 and rolled back.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/database.ts"
import { expectAnswered, formatHealth, probeHealthWhile } from "../support/health-probe.ts"
import { newSender, type Sender, type SendingApp, sendBody, startSendingApp } from "../support/sending.ts"

const CONTACTS = 5_000
const TIMEOUT_MS = 1_000
/** The long work's limit at its smallest: the same rules freeze for several seconds here. */
const LONG_TIMEOUT_MS = 1_000

let rig: SendingApp
let attacker: Sender
let other: Sender

const api = (method: string, route: string, token: string, body?: unknown) =>
  rig.app.request(method, route, { token, ...(body === undefined ? {} : { body }) })

const expensiveRules = {
  match: "any",
  rules: Array.from({ length: 50 }, (_, i) => ({ field: "custom", op: "contains", field_name: "bio", value: `never-there-${i}` }))
}

beforeAll(async () => {
  rig = await startSendingApp({ HERALD_QUERY_TIMEOUT_MS: String(TIMEOUT_MS), HERALD_LONG_QUERY_TIMEOUT_MS: String(LONG_TIMEOUT_MS) })
  attacker = rig.sender
  other = await newSender(rig.app, rig.dns, { packageId: "growth" })
  for (const owner of [attacker, other]) {
    await query(rig.app.databaseUrl, `INSERT INTO contacts (id, account_id, key_id, email, name, tags, metadata, created_at, updated_at)
      SELECT 'ct_' || $2 || i, $1, $2, 'c' || i || '@example.org', 'C ' || i, ARRAY['news'],
        jsonb_build_object('bio', repeat('Lorem ipsum dolor sit amet ', 80) || i), now() - i * interval '1 minute', now()
      FROM generate_series(1, $3::int) AS i`, [owner.accountId, owner.keyId, CONTACTS])
  }
  await query(rig.app.databaseUrl, "ANALYZE contacts")
}, 180_000)
afterAll(async () => {
  await rig.stop()
})

describe("a segment preview past HERALD_QUERY_TIMEOUT_MS", () => {
  it("is stopped and answered 422 query_too_expensive naming rules; nothing changes, others go on", async () => {
    const before = await query(rig.app.databaseUrl, "SELECT count(*)::int AS n FROM segments")
    const started = performance.now()
    const res = await api("POST", "/v1/bulk/segments/preview", attacker.token, { rules: expensiveRules })
    const took = performance.now() - started
    expect(res.status).toBe(422)
    expect(res.json.error).toMatchObject({ type: "invalid_request_error", code: "query_too_expensive", param: "rules" })
    expect(res.json.error.message).toContain(`${TIMEOUT_MS} ms`)
    // Stopped by the server, not run to the end.
    expect(took).toBeLessThan(3_000)
    expect(await query(rig.app.databaseUrl, "SELECT count(*)::int AS n FROM segments")).toEqual(before)
    // No statement of the preview is left running.
    const running = await query(rig.app.databaseUrl, `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active' AND query LIKE '%WITH matched%'`)
    expect(running).toEqual([{ n: 0 }])

    // A cheap preview of the same key still answers, and so does everything of another account.
    const cheap = await api("POST", "/v1/bulk/segments/preview", attacker.token, { rules: { match: "all", rules: [{ field: "tag", op: "has", value: "news" }] } })
    expect(cheap.status).toBe(200)
    expect(cheap.json.total).toBe(CONTACTS)
    const theirs = await api("POST", "/v1/bulk/segments/preview", other.token, { rules: { match: "all", rules: [{ field: "status", op: "is", value: "active" }] } })
    expect(theirs.status).toBe(200)
    expect(theirs.json.total).toBe(CONTACTS)
    const sent = await api("POST", "/v1/mail/send", other.token, sendBody(other, "friend@example.org"))
    expect(sent.status).toBe(202)
    const health = await fetch(`${rig.app.baseUrl}/health`)
    expect(health.status).toBe(200)
  })

  it("repeated in parallel, each call is stopped: the pool stays free for /health and other accounts", async () => {
    const attacks = Promise.all(Array.from({ length: 12 }, () => api("POST", "/v1/bulk/segments/preview", attacker.token, { rules: expensiveRules })))
    const { result, health } = await probeHealthWhile(rig.app, attacks, { bystander: { sender: other, to: "friend@example.org", afterMs: 0 } })
    // Answered, not judged by time: each preview holds a pool connection up to its 1 s timeout.
    console.log(`12 expensive previews: ${formatHealth(health)}`)
    expectAnswered(health)
    for (const res of result) {
      expect(res.status).toBe(422)
      expect(res.json.error.code).toBe("query_too_expensive")
    }
  })

})

describe("the long bulk work past HERALD_LONG_QUERY_TIMEOUT_MS", () => {
  it("a campaign's freeze of its audience is stopped: 422 naming segment_id, the campaign still a draft", async () => {
    const segment = await api("POST", "/v1/bulk/segments", attacker.token, { name: "expensive", rules: expensiveRules })
    expect(segment.status).toBe(201)
    const campaign = await api("POST", "/v1/bulk/campaigns", attacker.token, {
      name: "Expensive", from_email: attacker.from, subject: "Hello", body_text: "Hello", segment_id: segment.json.id
    })
    expect(campaign.status).toBe(201)
    const sent = await api("POST", `/v1/bulk/campaigns/${campaign.json.id}/send`, attacker.token)
    expect(sent.status).toBe(422)
    expect(sent.json.error).toMatchObject({ type: "invalid_request_error", code: "query_too_expensive", param: "segment_id" })
    expect(sent.json.error.message).toContain("HERALD_LONG_QUERY_TIMEOUT_MS")
    const after = await api("GET", `/v1/bulk/campaigns/${campaign.json.id}`, attacker.token)
    expect(after.json.status).toBe("draft")
    expect(await query(rig.app.databaseUrl, "SELECT count(*)::int AS n FROM campaign_recipients WHERE campaign_id = $1", [campaign.json.id]))
      .toEqual([{ n: 0 }])
  })
})

describe("a plain list page past HERALD_QUERY_TIMEOUT_MS", () => {
  it("is stopped: 422 naming offset, its connection freed; other accounts answer", async () => {
    // A page whose statement cannot finish in time held a pooled connection for as long as it took
    // (a key may create as many segments as it likes and page as far as it likes). Made
    // deterministic here: another session holds the table, so the page's statement waits on the
    // lock — statement_timeout counts that time as it counts work — for 5 s, 5× the limit.
    const holder = new pg.Client({ connectionString: rig.app.databaseUrl })
    await holder.connect()
    try {
      await holder.query("BEGIN")
      await holder.query("LOCK TABLE segments IN ACCESS EXCLUSIVE MODE")
      const released = new Promise((r) => setTimeout(r, 5_000)).then(() => holder.query("COMMIT"))
      const started = performance.now()
      const page = await api("GET", "/v1/bulk/segments?limit=200&offset=0", attacker.token)
      const took = performance.now() - started
      expect(page.status).toBe(422)
      expect(page.json.error).toMatchObject({ type: "invalid_request_error", code: "query_too_expensive", param: "offset" })
      expect(page.json.error.message).toContain(`${TIMEOUT_MS} ms`)
      expect(took).toBeLessThan(3_000)
      // Another account's page of another resource and its send are not held up meanwhile.
      expect((await api("GET", "/v1/bulk/lists", other.token)).status).toBe(200)
      expect((await api("POST", "/v1/mail/send", other.token, sendBody(other, "friend@example.org"))).status).toBe(202)
      await released
    } finally {
      await holder.end()
    }
    expect((await api("GET", "/v1/bulk/segments", attacker.token)).status).toBe(200)
  }, 60_000)
})
