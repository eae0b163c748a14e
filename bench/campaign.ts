/**
 * npm run bench:campaign — issue 20's campaign benchmark: a campaign to BENCH_CONTACTS contacts
 * (default 100,000; a smaller count for trial runs) of one list, sent with the MTA on into a local
 * SMTP sink (in this process, counting and discarding), in one appliance under `npm start`'s heap
 * cap. Prints:
 *
 * 1. fan-out: rows per second from `POST /v1/bulk/campaigns/{id}/send` (which freezes the
 *    recipients) until all deliveries are written (the campaign's `queued_count` reaches its
 *    total, advanced in the transaction that writes each batch). Target: 100,000 in under 10 s.
 * 2. delivery: the campaign's delivered/s (from the send call until the sink has every message)
 *    beside the transactional outbound bench's run with one recipient per message (BENCH_BATCH=1
 *    of bench/outbound.ts: BENCH_TX_MESSAGES single-recipient sends of ~5 KB through
 *    `POST /v1/mail/send`, 8 clients), before and after the campaign in the same appliance (the
 *    mean is the baseline: this VM's speed drifts within minutes). Each message is composed and
 *    DKIM-signed once in both. Target: campaign ≥ 90 % of that rate.
 * 3. tracking: `GET /o/<token>` and `GET /c/<token>` alternately (8 clients, keep-alive, for
 *    BENCH_TRACK_SECONDS) with tokens of BENCH_TRACK_DELIVERIES real deliveries of the campaign
 *    (minted as the delivery would: `recipientTokens`, links recorded with `recordCampaignLinks`),
 *    beside bench/bare-redirect-server.ts, a bare `node:http` server that INSERTs one row per hit
 *    into the same PostgreSQL, run before and after Herald. Target: ≥ 50 % of the bare server.
 *
 * Also printed: the appliance's and PostgreSQL's CPU per message of each phase and its peak RSS.
 * Prints figures; asserts nothing. The database is dropped at the end (BENCH_KEEP_DATABASE=1 keeps it).
 */
import * as http from "node:http"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { makeTokens } from "../src/bulk/public/tokens.ts"
import { recordCampaignLinks } from "../src/bulk/tracking/store.ts"
import { recipientTokens } from "../src/bulk/tracking/tokens.ts"
import { writeShapingFile } from "../test/support/shaping.ts"
import { apiCaller, benchPostgres, benchSender, cpuMeter, createDatabase, freePort, load, spawnDeliveringAppliance, spawnNode, sql, startCountingSink, startSinkDns, table, waitFor } from "./lib.ts"

const CONTACTS = Number(process.env["BENCH_CONTACTS"] ?? 100_000)
const TX_MESSAGES = Number(process.env["BENCH_TX_MESSAGES"] ?? 5_000)
/** BENCH_FANOUT_ONLY=1: the fan-out phase alone (no transactional baseline, no delivery wait, no tracking), for tuning it. */
const FANOUT_ONLY = process.env["BENCH_FANOUT_ONLY"] === "1"
const TRACK_SECONDS = Number(process.env["BENCH_TRACK_SECONDS"] ?? 10)
const TRACK_DELIVERIES = Math.min(CONTACTS, Number(process.env["BENCH_TRACK_DELIVERIES"] ?? 2_000))
const TOKEN = "hrld_bench_token_0123456789abcdef"
/**
 * BENCH_MAX_CONNECTIONS: the sink's connection cap (config/shaping.json's default, 10, unless
 * set). With the default, both deliveries wait on the sink's round trips over 10 connections, of
 * which bulk may use 8 (Destinations: the rest is kept for transactional mail); a larger cap
 * makes the appliance's own work per message decide both rates.
 */
const MAX_CONNECTIONS = process.env["BENCH_MAX_CONNECTIONS"]
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"

/** ~5 KB, as bench/outbound.ts sends: the campaign's text part is the same body with a greeting per contact. */
const BODY = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(85)
const LINKS = ["https://shop.example/pricing", "https://shop.example/blog?a=1&b=2"]
const HTML = `<html><body><p>Hello {{ name }}</p><p><a href="${LINKS[0]}">Pricing</a> · <a href="${LINKS[1]}">Blog</a></p>` +
  `<p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p></body></html>`

// The sink: counts messages and connections (how many messages a connection carried in each phase), discards them.
const sink = await startCountingSink()

/** `concurrency` closed loops GETting `urls` in turn for `seconds` after a 2 s warm-up; ok = the expected status. */
const getLoad = async (urls: ReadonlyArray<{ readonly url: string; readonly status: number }>, seconds: number, concurrency = 8) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  let next = 0
  const get = (target: { readonly url: string; readonly status: number }) =>
    new Promise<boolean>((resolve) => {
      const req = http.get(target.url, { agent, headers: { "user-agent": BROWSER } }, (res) => {
        res.resume()
        res.on("end", () => resolve(res.statusCode === target.status))
      })
      req.setTimeout(30_000, () => req.destroy(new Error("no answer")))
      req.on("error", () => resolve(false))
    })
  const run = async (ms: number) => {
    const until = Date.now() + ms
    const tally = { ok: 0, total: 0 }
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        const ok = await get(urls[next++ % urls.length]!)
        tally.total += 1
        if (ok) tally.ok += 1
      }
    }))
    return tally
  }
  await run(2_000)
  const started = performance.now()
  const tally = await run(seconds * 1000)
  agent.destroy()
  return { ...tally, perSecond: tally.ok / ((performance.now() - started) / 1000) }
}

const dns = await startSinkDns()
const pgRun = await benchPostgres()
const databaseUrl = await createDatabase(pgRun.adminUrl, "bench_campaign")
/**
 * HERALD_TRACKING_REPEAT_SECONDS=0: the tracking phase fetches each token several times within
 * seconds, and with a repeat window those repeats are answered without a write while the bare
 * server INSERTs every hit. Without a window every hit is logged and counted: the worst case, and
 * the same work as the bare server's (BENCH_TRACK_REPEAT_SECONDS measures another window).
 */
const herald = await spawnDeliveringAppliance({
  databaseUrl, token: TOKEN, dnsAddress: dns.address, mxPort: sink.port,
  env: {
    HERALD_TRACKING_REPEAT_SECONDS: process.env["BENCH_TRACK_REPEAT_SECONDS"] ?? "0",
    ...(MAX_CONNECTIONS === undefined ? {} : { HERALD_SHAPING_FILE: writeShapingFile({ max_connections: Number(MAX_CONNECTIONS), messages_per_connection: 100, max_messages_per_minute: null }) })
  }
})
const base = herald.base
try {
  // A labelled block: BENCH_FANOUT_ONLY leaves it after the fan-out (and still stops everything in `finally`).
  phases: {
  await waitFor(`${base}/health`)
  const call = apiCaller(base, TOKEN)
  const key = await benchSender(call, databaseUrl)
  const list = await call("POST", "/v1/bulk/lists", { name: "bench list" })

  // The audience, seeded straight into the database (not measured): CONTACTS contacts, all on the list.
  await sql(databaseUrl, `INSERT INTO contacts (id, account_id, key_id, email, name, status, metadata, created_at, updated_at)
    SELECT 'ct_bench' || i, $1, $2, 'c' || i || '@dest.example', 'Contact ' || i, 'active', jsonb_build_object('plan', 'plan' || (i % 3)),
      now() - i * interval '1 second', now()
    FROM generate_series(1, $3::int) AS i`, [key!["account_id"], key!["id"], CONTACTS])
  await sql(databaseUrl, `INSERT INTO list_memberships (list_id, contact_id, status, created_at, confirmed_at)
    SELECT $1, id, 'confirmed', now(), now() FROM contacts`, [list["id"]])
  await sql(databaseUrl, "ANALYZE contacts; ANALYZE list_memberships")

  // The transactional baseline: bench/outbound.ts with BENCH_BATCH=1, in this appliance.
  const transactional = async () => {
    const from = sink.received
    const connected = sink.connections
    const meter = cpuMeter(herald)
    const started = performance.now()
    let sent = 0
    const accept = await load({
      url: `${base}/v1/mail/send`, headers: { authorization: `Bearer ${TOKEN}` }, concurrency: 8, seconds: 3600, warmup: 0, expectStatus: 202,
      body: (i) => JSON.stringify({ from: { email: "bench@bench.example" }, to: [{ email: `t${i}@dest.example` }], subject: `Bench ${i}`, text: BODY }),
      until: () => ++sent > TX_MESSAGES
    })
    await sink.waitReceived(from + accept.ok)
    return { rate: accept.ok / ((performance.now() - started) / 1000), connections: sink.connections - connected, ...meter(accept.ok) }
  }
  const txBefore = FANOUT_ONLY ? { rate: 0, connections: 0, cpuMs: 0, pgCpuMs: 0 } : await transactional()

  // The campaign.
  const campaign = await call("POST", "/v1/bulk/campaigns", {
    name: "bench campaign", subject: "News for {{ name }}", body_text: `Hello {{ name }}\n\n${BODY}`, html: HTML,
    from_email: "news@bench.example", from_name: "Bench", list_ids: [list["id"]]
  })
  const campaignId = String(campaign["id"])
  const from = sink.received
  const connected = sink.connections
  const meter = cpuMeter(herald)
  const started = performance.now()
  const sending = await call("POST", `/v1/bulk/campaigns/${campaignId}/send`)
  const frozenSeconds = (performance.now() - started) / 1000
  const total = Number(sending["total_contacts"])
  for (;;) {
    const [row] = await sql(databaseUrl, "SELECT queued_count FROM campaigns WHERE id = $1", [campaignId])
    if (Number(row!["queued_count"]) >= total) break
    await new Promise((r) => setTimeout(r, 50))
  }
  const fanOutSeconds = (performance.now() - started) / 1000
  const fanOutCpu = meter(total)
  if (FANOUT_ONLY) {
    console.log(`\nfan-out of ${total} in ${fanOutSeconds.toFixed(2)} s (recipients frozen by the send call in ${frozenSeconds.toFixed(2)} s): ` +
      `${(total / fanOutSeconds).toFixed(1)} rows/s, ${fanOutCpu.cpuMs.toFixed(3)} ms appliance and ${fanOutCpu.pgCpuMs.toFixed(3)} ms PostgreSQL CPU per row (target < 10 s for 100,000)`)
    break phases
  }
  // Every message at the sink, or the campaign completed (a delivery that failed never arrives).
  let checkedAt = 0
  while (sink.received < from + total) {
    await new Promise((r) => setTimeout(r, 20))
    if (performance.now() - checkedAt < 500) continue
    checkedAt = performance.now()
    const [row] = await sql(databaseUrl, "SELECT status FROM campaigns WHERE id = $1", [campaignId])
    if (row!["status"] === "completed") break
  }
  const campaignDelivered = sink.received - from
  const deliveredSeconds = (performance.now() - started) / 1000
  const campaignCpu = meter(total)
  const campaignRss = herald.peakRssMb()
  const campaignConnections = sink.connections - connected
  const txAfter = await transactional()

  // Tracking: tokens of real deliveries, the campaign's links recorded as its freeze would.
  await Effect.runPromise(Effect.scoped(Effect.provide(recordCampaignLinks(campaignId, LINKS), PgClient.layer({ url: Redacted.make(databaseUrl) }))))
  const [secret] = await sql(databaseUrl, "SELECT value FROM appliance_settings WHERE name = 'public_token_secret'")
  const tokens = makeTokens(String(secret!["value"]))
  const deliveries = await sql(databaseUrl, `SELECT d.id FROM deliveries d JOIN messages m ON m.id = d.message_id
    WHERE m.campaign_id = $1 ORDER BY d.id LIMIT $2`, [campaignId, TRACK_DELIVERIES])
  const paths = deliveries.flatMap((d, i) => {
    const t = recipientTokens(tokens, { deliveryId: String(d["id"]), campaignId })
    return [{ path: `/o/${t.open}`, status: 200 }, { path: `/c/${t.click(i % LINKS.length)}`, status: 302 }]
  })
  await sql(databaseUrl, "CREATE TABLE bare_hits (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, token text NOT NULL, kind text NOT NULL, at timestamptz NOT NULL)")
  const bareTracking = async () => {
    const barePort = await freePort()
    const bare = spawnNode("bench/bare-redirect-server.ts", { DATABASE_URL: databaseUrl, PORT: String(barePort) })
    try {
      await waitForStatus(`http://127.0.0.1:${barePort}/o/x`)
      return await getLoad(paths.map((p) => ({ url: `http://127.0.0.1:${barePort}${p.path}`, status: p.status })), TRACK_SECONDS)
    } finally {
      await bare.stop()
    }
  }
  const bareBefore = await bareTracking()
  const trackMeter = cpuMeter(herald)
  const tracked = await getLoad(paths.map((p) => ({ url: `${base}${p.path}`, status: p.status })), TRACK_SECONDS)
  const trackCpu = trackMeter(tracked.total + 2 * 8)
  const bareAfter = await bareTracking()
  const [counters] = await sql(databaseUrl, "SELECT opens_total, opens_unique, clicks_total, clicks_unique FROM campaign_tracking WHERE campaign_id = $1", [campaignId])
  const [sentRows] = await sql(databaseUrl, `SELECT count(*) FILTER (WHERE d.state = 'sent')::int AS n,
      count(*) FILTER (WHERE d.state = 'failed')::int AS failed, min(d.last_reply) FILTER (WHERE d.state = 'failed') AS reply
    FROM deliveries d JOIN messages m ON m.id = d.message_id WHERE m.campaign_id = $1`, [campaignId])

  const txRate = (txBefore.rate + txAfter.rate) / 2
  const campaignRate = campaignDelivered / deliveredSeconds
  const bareRate = (bareBefore.perSecond + bareAfter.perSecond) / 2
  console.log(`\ncampaign benchmark: ${total} contacts of one list, ~5 KB text + html each, DKIM RSA-2048, to a local SMTP sink, ${MAX_CONNECTIONS ?? 10} connections at most\n`)
  table([
    { phase: "fan-out (send call → all delivery rows)", items: total, seconds: fanOutSeconds, "per second": total / fanOutSeconds, "ms CPU/item": fanOutCpu.cpuMs, "PG ms CPU/item": fanOutCpu.pgCpuMs },
    { phase: "campaign delivered (send call → sink has all)", items: campaignDelivered, seconds: deliveredSeconds, "per second": campaignRate, "ms CPU/item": campaignCpu.cpuMs, "PG ms CPU/item": campaignCpu.pgCpuMs },
    { phase: "transactional, 1 recipient/request, before", items: TX_MESSAGES, seconds: TX_MESSAGES / txBefore.rate, "per second": txBefore.rate, "ms CPU/item": txBefore.cpuMs, "PG ms CPU/item": txBefore.pgCpuMs },
    { phase: "transactional, 1 recipient/request, after", items: TX_MESSAGES, seconds: TX_MESSAGES / txAfter.rate, "per second": txAfter.rate, "ms CPU/item": txAfter.cpuMs, "PG ms CPU/item": txAfter.pgCpuMs },
    { phase: "tracking: Herald /o and /c", items: tracked.ok, seconds: TRACK_SECONDS, "per second": tracked.perSecond, "ms CPU/item": trackCpu.cpuMs, "PG ms CPU/item": trackCpu.pgCpuMs },
    { phase: "tracking: bare node:http + INSERT, before", items: bareBefore.ok, seconds: TRACK_SECONDS, "per second": bareBefore.perSecond, "ms CPU/item": 0, "PG ms CPU/item": 0 },
    { phase: "tracking: bare node:http + INSERT, after", items: bareAfter.ok, seconds: TRACK_SECONDS, "per second": bareAfter.perSecond, "ms CPU/item": 0, "PG ms CPU/item": 0 }
  ])
  console.log(`\nrecipients frozen by the send call in ${frozenSeconds.toFixed(2)} s; fan-out of ${total} in ${fanOutSeconds.toFixed(2)} s (target < 10 s for 100,000)`)
  console.log(`campaign delivered/s ÷ transactional (mean of ${txBefore.rate.toFixed(1)} and ${txAfter.rate.toFixed(1)}/s): ${((campaignRate / txRate) * 100).toFixed(1)} % (target ≥ 90 %); marked sent: ${sentRows?.["n"]}, failed: ${sentRows?.["failed"]}${sentRows?.["failed"] ? ` (${sentRows["reply"]})` : ""}; appliance peak RSS ${campaignRss.toFixed(0)} MB`)
  console.log(`SMTP connections to the sink: campaign ${campaignConnections}, transactional ${txBefore.connections} and ${txAfter.connections}`)
  console.log(`tracking ÷ bare (mean of ${bareBefore.perSecond.toFixed(1)} and ${bareAfter.perSecond.toFixed(1)}/s): ${((tracked.perSecond / bareRate) * 100).toFixed(1)} % (target ≥ 50 %); ` +
    `Herald answered ${tracked.ok} of ${tracked.total} as expected; counters ${JSON.stringify(counters)}`)
  }
} finally {
  await herald.stop()
  if (process.env["BENCH_KEEP_DATABASE"] !== "1") await sql(pgRun.adminUrl, "DROP DATABASE IF EXISTS bench_campaign").catch(() => undefined)
  await pgRun.stop()
  await dns.close()
  sink.close()
}

async function waitForStatus(url: string) {
  const end = Date.now() + 30_000
  while (Date.now() < end) {
    const up = await fetch(url).then(() => true, () => false)
    if (up) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${url} not answering`)
}
