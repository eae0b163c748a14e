/**
 * Issue 26 finding 4, reproduced against a running appliance: one open token and one click token
 * replayed thousands of times over loopback (8 clients, keep-alive), as the probe did (34,635
 * recorded opens in 30 s). Every fetch still gets its GIF or its redirect, but each token counts
 * once per repeat window (HERALD_TRACKING_REPEAT_SECONDS, short here so the test can wait it out),
 * the request path logs one row per token and window instead of one per fetch, and the detail
 * (tracking_hits, the contact's engagement history) holds one row per counted fetch. Once the
 * window has passed, the same token counts again. Many distinct tokens fetched from this one
 * address all count: the window is per token, never per address. Meanwhile the appliance stays
 * fine for another account: `/health` under 100 ms, its send 202.
 */
import { spawn } from "node:child_process"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTokens } from "../../src/bulk/public/tokens.ts"
import { recordCampaignLinks } from "../../src/bulk/tracking/store.ts"
import { recipientTokens } from "../../src/bulk/tracking/tokens.ts"
import { newId } from "../../src/lib/ids.ts"
import type { StoredMessage } from "../../src/mta/queue/StoredMessage.ts"
import { writeQueue } from "../../src/mta/queue/enqueue.ts"
import { withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { expectResponsive, formatHealth, probeHealthAtRest, probeHealthWhile } from "../support/health-probe.ts"
import { sleep } from "../support/net.ts"
import { newSender, type SendingApp, startSendingApp } from "../support/sending.ts"

/** The repeat window this appliance runs with: long enough for the replay, short enough to wait out. */
const REPEAT_SECONDS = 20
/** The replay stops at this many fetches of each token, or after REPLAY_MS, whichever comes first (well inside the window). */
const REPLAYS = 2_500
const REPLAY_MS = 12_000
/** Keep-alive clients of the replay: more only queue the /health probes behind the replay's own requests on 2 shared cores. */
const CLIENTS = 2
/** Recipients whose tokens are each fetched once, all from this test's one address. */
const CROWD = 200
const CAMPAIGN = newId("cp")
const HUMAN_UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)"
const LINKS = ["https://shop.example/pricing", "https://shop.example/blog"]

let t: SendingApp
/** Per recipient: its delivery and its open and click URLs. */
let targets: Array<{ email: string; deliveryId: string; open: string; clicks: Array<string> }> = []

const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(t.app.databaseUrl, text, params)
const counters = async () =>
  (await db<Record<string, string>>("SELECT opens_total, opens_unique, clicks_total, clicks_unique FROM campaign_tracking WHERE campaign_id = $1", [CAMPAIGN]))[0]
const linkTotals = async () =>
  (await db<{ clicks_total: string; clicks_unique: string }>("SELECT clicks_total, clicks_unique FROM campaign_links WHERE campaign_id = $1 ORDER BY link_index", [CAMPAIGN]))
const aggregated = () =>
  eventually(async () => (await db<{ n: number }>("SELECT count(*)::int AS n FROM tracking_ingest"))[0]!.n === 0 ? true : undefined, "hits counted")
/** Rows the request path has appended to the log so far (its identity sequence: taken rows leave no trace otherwise). */
const logged = async () => Number((await db<{ n: string }>("SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS n FROM tracking_ingest_id_seq"))[0]!.n)
const get = (url: string) => fetch(url, { redirect: "manual", headers: { "user-agent": HUMAN_UA } })
const rowsOf = async (deliveryId: string, email: string) => ({
  hits: (await db<{ n: number }>("SELECT count(*)::int AS n FROM tracking_hits WHERE delivery_id = $1", [deliveryId]))[0]!.n,
  facts: (await db<{ n: number }>("SELECT count(*)::int AS n FROM contact_engagement WHERE email = $1", [email]))[0]!.n
})

beforeAll(async () => {
  t = await startSendingApp({ HERALD_TRACKING_REPEAT_SECONDS: String(REPEAT_SECONDS) })
  await withServices(t.app, recordCampaignLinks(CAMPAIGN, LINKS))
  // One delivery per recipient in the campaign form, as the fan-out writes them.
  const emails = Array.from({ length: CROWD + 1 }, (_, i) => `r${i}@rcpt.example`)
  const message = { from: { email: t.sender.from }, subject: "News", content: [{ type: "text/html" as const, value: "<p>News</p>" }] }
  const queued = emails.map((email, i) => {
    const stored: StoredMessage = { _tag: "campaign", origin: "campaign", campaign_id: CAMPAIGN, channel: "bulk", contact_id: `ct_${i}`, to: { email }, variables: {}, message }
    return { messageId: newId("msg"), personalizationIndex: i, subject: "News", stored, recipients: [{ email, kind: "to" as const }] }
  })
  const context = { accountId: t.sender.accountId, keyId: t.sender.keyId, requestId: "req_campaign", fromEmail: t.sender.from, now: new Date() }
  await withServices(t.app, Effect.asVoid(writeQueue(context, queued)))
  const [setting] = await db<{ value: string }>("SELECT value FROM appliance_settings WHERE name = 'public_token_secret'")
  const tokens = makeTokens(setting!.value)
  const rows = await db<{ id: string; recipient: string }>(
    "SELECT d.id, d.recipient FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1", [CAMPAIGN])
  const byEmail = new Map(rows.map((r) => [r.recipient, r.id]))
  targets = emails.map((email) => {
    const deliveryId = byEmail.get(email)!
    const urls = recipientTokens(tokens, { deliveryId, campaignId: CAMPAIGN })
    return { email, deliveryId, open: `${t.app.baseUrl}/o/${urls.open}`, clicks: LINKS.map((_, i) => `${t.app.baseUrl}/c/${urls.click(i)}`) }
  })
}, 120_000)
afterAll(() => t?.stop())

/**
 * The replay, from a process of its own (so that the appliance's event loop, in this process,
 * serves only the server's side): CLIENTS keep-alive loops fetching the pixel and the link in
 * turn, up to REPLAYS of each or REPLAY_MS. Answers the counts, the answers that were not the
 * GIF or the redirect, and when the first answer came back (the server counted both tokens by then).
 */
const replayInChild = (open: string, click: string) =>
  new Promise<{ opens: number; clicks: number; wrong: Array<string>; firstAnswered: number }>((resolve, reject) => {
    const script = `
      const [open, click, link, clients, replays, ms] = process.argv.slice(1)
      const started = Date.now()
      let opens = 0, clicks = 0, firstAnswered = 0
      const wrong = []
      const loop = async (client) => {
        for (let i = client; i < 2 * Number(replays) && Date.now() - started < Number(ms); i += Number(clients)) {
          const isOpen = i % 2 === 0
          const res = await fetch(isOpen ? open : click, { redirect: "manual", headers: { "user-agent": ${JSON.stringify(HUMAN_UA)} } })
          const body = Buffer.from(await res.arrayBuffer())
          if (isOpen) {
            opens += 1
            if (res.status !== 200 || res.headers.get("content-type") !== "image/gif" || body.subarray(0, 6).toString() !== "GIF89a") wrong.push("open " + res.status)
          } else {
            clicks += 1
            if (res.status !== 302 || res.headers.get("location") !== link) wrong.push("click " + res.status)
          }
          if (firstAnswered === 0 && opens > 0 && clicks > 0) firstAnswered = Date.now()
        }
      }
      Promise.all(Array.from({ length: Number(clients) }, (_, c) => loop(c)))
        .then(() => process.stdout.write(JSON.stringify({ opens, clicks, wrong: wrong.slice(0, 10), firstAnswered })))`
    const child = spawn(process.execPath, ["-e", script, open, click, LINKS[0]!, String(CLIENTS), String(REPLAYS), String(REPLAY_MS)])
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    child.stderr.on("data", (chunk) => process.stderr.write(chunk))
    child.on("error", reject)
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the replay exited with ${code}`))))
  })

describe("replaying one token", () => {
  it("answers every fetch, counts the token once per window, logs and keeps one row per window, and counts again after it", async () => {
    const [victim] = targets
    const other = await newSender(t.app, t.dns)
    // /health on this machine as it is, with no replay (printed): the tests share 2 cores with others' runs.
    const quiet = await probeHealthAtRest(t.app, 1_500, { intervalMs: 100 })
    const logBefore = await logged()
    // The replay: the open pixel and link 0 fetched in turn by keep-alive clients, every answer checked.
    const started = Date.now()
    const replay = replayInChild(victim!.open, victim!.clicks[0]!)
    // Another account meanwhile, a second in (the replay is under way): /health every 100 ms and one send.
    const { result: replayed, health } = await probeHealthWhile(t.app, replay, {
      intervalMs: 100,
      bystander: { sender: other, to: "someone@rcpt.example", afterMs: 1_000 }
    })
    const { opens, clicks, firstAnswered } = replayed
    // Every fetch got its answer: the GIF, the redirect to the link.
    expect(replayed.wrong).toEqual([])
    expect(health.answers.length).toBeGreaterThan(3)
    console.log(`replay: ${opens + clicks} fetches in ${Date.now() - started} ms; ${formatHealth(health)} (quiet: median ${quiet.medianMs.toFixed(1)} ms)`)
    expect(Date.now() - started).toBeLessThan(REPEAT_SECONDS * 1000)

    await aggregated()
    // One open and one click, however many fetches; one log row each; one detail row and fact each.
    expect(await counters()).toEqual({ opens_total: "1", opens_unique: "1", clicks_total: "1", clicks_unique: "1" })
    expect(await linkTotals()).toEqual([{ clicks_total: "1", clicks_unique: "1" }, { clicks_total: "0", clicks_unique: "0" }])
    expect(await logged() - logBefore).toBe(2)
    // Meanwhile /health stayed quick and the other account's send was accepted.
    expectResponsive(health)
    // Thousands on a machine of its own (REPLAYS of each in a few seconds); 450–1,300 in REPLAY_MS on 2 cores shared with six other runs.
    expect(opens + clicks).toBeGreaterThanOrEqual(200)
    expect(await rowsOf(victim!.deliveryId, victim!.email)).toEqual({ hits: 2, facts: 2 })
    const timeline = await db<{ opens: string; clicks: string }>(
      "SELECT sum(opens)::text AS opens, sum(clicks)::text AS clicks FROM campaign_tracking_hours WHERE campaign_id = $1", [CAMPAIGN])
    expect(timeline[0]).toEqual({ opens: "1", clicks: "1" })

    // Past the window (counted from the first fetch), the same tokens count again: a person coming back.
    await sleep(Math.max(0, firstAnswered + REPEAT_SECONDS * 1000 + 200 - Date.now()))
    expect((await get(victim!.open)).status).toBe(200)
    expect((await get(victim!.clicks[0]!)).status).toBe(302)
    await aggregated()
    expect(await counters()).toEqual({ opens_total: "2", opens_unique: "1", clicks_total: "2", clicks_unique: "1" })
    expect(await linkTotals()).toEqual([{ clicks_total: "2", clicks_unique: "1" }, { clicks_total: "0", clicks_unique: "0" }])
    expect(await rowsOf(victim!.deliveryId, victim!.email)).toEqual({ hits: 4, facts: 4 })
  }, 120_000)
})

describe("many tokens from one address", () => {
  it("counts each token's first fetch, whatever the address they share (an image proxy, a reverse proxy)", async () => {
    await aggregated()
    const before = (await counters())!
    const crowd = targets.slice(1)
    // All at once, from 127.0.0.1: each recipient's pixel, then each one's link 1.
    const answers = await Promise.all(crowd.map((r) => get(r.open).then(async (res) => {
      await res.arrayBuffer()
      const click = await get(r.clicks[1]!)
      await click.arrayBuffer()
      return [res.status, click.status]
    })))
    expect(answers.every(([open, click]) => open === 200 && click === 302)).toBe(true)
    await aggregated()
    const plus = (field: string) => String(Number(before[field]) + CROWD)
    expect(await counters()).toEqual({
      opens_total: plus("opens_total"),
      opens_unique: plus("opens_unique"),
      clicks_total: plus("clicks_total"),
      clicks_unique: plus("clicks_unique")
    })
    expect((await linkTotals())[1]).toEqual({ clicks_total: String(CROWD), clicks_unique: String(CROWD) })
  }, 60_000)
})
