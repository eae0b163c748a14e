/**
 * npm run bench:webhooks — the webhook dispatcher, three figures:
 *
 * 1. events/s from outbox rows to a local receiver, beside a bare loop of signed POSTs (same
 *    HMAC, same body shape, same receiver, same concurrency) measured in the same run, before
 *    and after Herald: one key (its cap: 4 workers) against a bare loop of 4, and 8 keys (the
 *    dispatcher's 32 slots) against a bare loop of 32. Target: Herald at least 50 % of the bare
 *    loop. Herald's figure runs from the INSERT of the events to the last one received.
 *    The bare loop runs twice over: with undici, the client Herald posts with (the target's
 *    baseline: the same HTTP work without the dispatcher), and with `node:http` for reference.
 * 2. the delay from event row created to its delivery arriving, p50/p99, at 100 events/s
 *    (open loop). Target: p99 under 1 s.
 * 3. RSS of the appliance while every key's receiver is down for the whole run (connection
 *    refused) and events keep coming at 100/s: retries wait in the database, so RSS stays flat.
 *
 * Beside each throughput figure: the appliance's and PostgreSQL's CPU ms per event (from /proc,
 * steadier than events/s on a shared machine) and, when the server has pg_stat_statements, SQL
 * statements per event (round trips are what a delivery mostly costs).
 *
 * BENCH_EVENTS (5000) sets the size of the throughput runs, BENCH_SECONDS (20) the delay run and
 * BENCH_DOWN_SECONDS (60) the receiver-down run. Prints figures; asserts nothing.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import pg from "pg"
import { Pool } from "undici"
import { signPayload, verifySignature } from "../src/webhooks/signature.ts"
import { benchPostgres, cpuMeter, createDatabase, freePort, spawnNode, sql, statementCounter, table, waitFor } from "./lib.ts"

const EVENTS = Number(process.env["BENCH_EVENTS"] ?? 5000)
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 20)
const DOWN_SECONDS = Number(process.env["BENCH_DOWN_SECONDS"] ?? 60)
const SECRET = "whsec_bench_secret_0123456789abcdef"
const TOKEN = "hrld_bench_token_0123456789abcdef"
const FIELDS = { request_id: "req_bench", to: ["someone@example.org"], subject: "A usual subject line", message_id: "msg_bench" }
const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)))

// The receiver: verifies every signature (constant time, as the README's receiver does) and
// notes when each event arrived and how old its event row was.
let received = 0
let badSignatures = 0
let delays: Array<number> = []
const receiver = http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const raw = Buffer.concat(chunks).toString("utf8")
    const now = new Date()
    if (!verifySignature(SECRET, String(req.headers["x-herald-timestamp"]), raw, String(req.headers["x-herald-signature"]), now)) badSignatures += 1
    received += 1
    delays.push(now.getTime() - Date.parse((JSON.parse(raw) as { ts: string }).ts))
    res.writeHead(204).end()
  })
})
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`

/** The delivery-shaped body of bare POST `i` and its signed headers. */
const bodyOf = (i: number) => {
  const ts = new Date().toISOString()
  const body = JSON.stringify({ id: `evt_bare_${i}`, event: "email.sent", ts, app: "key_bare", ...FIELDS })
  return {
    body,
    headers: { "content-type": "application/json", "x-herald-signature": signPayload(SECRET, ts, body), "x-herald-timestamp": ts, "x-herald-event-id": `evt_bare_${i}` }
  }
}
const target = new URL(receiverUrl)
/** One signed POST through `node:http`, for reference. */
const postNodeHttp = (i: number) =>
  new Promise<void>((resolve) => {
    const { body, headers } = bodyOf(i)
    const req = http.request({
      host: target.hostname, port: target.port, path: target.pathname, method: "POST",
      headers: { ...headers, "content-length": Buffer.byteLength(body) }
    }, (res) => {
      res.resume()
      res.on("end", () => resolve())
    })
    req.on("error", () => resolve())
    req.end(body)
  })
const undiciPool = new Pool(target.origin)
/** One signed POST through undici's dispatcher API, as Herald posts: the target's baseline. */
const postUndici = (i: number) =>
  new Promise<void>((resolve) => {
    const { body, headers } = bodyOf(i)
    undiciPool.dispatch({ path: target.pathname, method: "POST", headers, body }, {
      onRequestStart: () => {},
      onResponseEnd: () => resolve(),
      onResponseError: () => resolve()
    })
  })

/** The bare loop: `n` signed POSTs, `concurrency` at a time. */
const bareLoop = async (n: number, concurrency: number, post: (i: number) => Promise<void>) => {
  const start = received
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) await post(next++)
  }))
  return (received - start) / ((performance.now() - started) / 1000)
}

/** A Herald on its own database with `keys` keys whose webhooks go to `url`. */
const startHerald = async (adminUrl: string, name: string, keys: number, url: string) => {
  const databaseUrl = await createDatabase(adminUrl, name)
  const port = await freePort()
  const child = spawnNode("src/main.ts", {
    DATABASE_URL: databaseUrl, HERALD_HTTP_PORT: String(port), HERALD_HTTP_HOST: "127.0.0.1",
    HERALD_SMTP_PORT: String(await freePort()), HERALD_BOOTSTRAP_KEY: TOKEN, HERALD_MTA_ENABLED: "false",
    HERALD_WEBHOOK_ALLOW_PRIVATE: "true"
  })
  await waitFor(`http://127.0.0.1:${port}/health`)
  const api = (method: string, route: string, body: unknown) =>
    fetch(`http://127.0.0.1:${port}${route}`, {
      method, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(body)
    }).then((r) => r.json() as Promise<{ id: string }>)
  const ids: Array<string> = []
  for (let i = 0; i < keys; i++) {
    const key = await api("POST", "/v1/client/keys", { label: `bench ${i}` })
    await api("PATCH", `/v1/client/keys/${key.id}`, { label: `bench ${i}`, webhook_url: url, webhook_secret: SECRET })
    ids.push(key.id)
  }
  const [owner] = await sql(databaseUrl, "SELECT account_id FROM api_keys WHERE id = $1", [ids[0]])
  return { child, databaseUrl, keyIds: ids, accountId: String(owner?.["account_id"]) }
}

/** `n` email.sent events in one statement, spread over the keys, stamped now. */
const insertEvents = (databaseUrl: string, accountId: string, keyIds: ReadonlyArray<string>, n: number, tag: string) =>
  sql(databaseUrl, `
    INSERT INTO events (id, account_id, key_id, event, payload, created_at)
    SELECT 'evt_' || $4 || '_' || i, $1, ($2::text[])[1 + i % array_length($2::text[], 1)], 'email.sent', $3::jsonb, now()
    FROM generate_series(1, $5) AS i`, [accountId, keyIds, JSON.stringify(FIELDS), tag, n])

const waitReceived = async (target: number, ms: number) => {
  const end = Date.now() + ms
  while (received < target && Date.now() < end) await sleep(5)
}

/** Events written one at a time at `perSecond` (open loop: the schedule does not wait for Herald). */
const feed = async (pool: pg.Pool, accountId: string, keyIds: ReadonlyArray<string>, perSecond: number, seconds: number, tag: string) => {
  const start = Date.now()
  const pending: Array<Promise<unknown>> = []
  for (let i = 0; i < perSecond * seconds; i++) {
    await sleep(start + (i * 1000) / perSecond - Date.now())
    pending.push(pool.query(
      "INSERT INTO events (id, account_id, key_id, event, payload, created_at) VALUES ($1, $2, $3, 'email.sent', $4::jsonb, $5)",
      [`evt_${tag}_${i}`, accountId, keyIds[i % keyIds.length], JSON.stringify(FIELDS), new Date()]
    ))
  }
  await Promise.all(pending)
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024

const pgRun = await benchPostgres()
try {
  // 1. Throughput: the bare loop before and after Herald on the same receiver (the mean is the
  // baseline, so a machine whose load changes during the run skews both sides alike).
  const bareLoops = async () => ({
    http4: await bareLoop(EVENTS, 4, postNodeHttp), http32: await bareLoop(EVENTS, 32, postNodeHttp),
    undici4: await bareLoop(EVENTS, 4, postUndici), undici32: await bareLoop(EVENTS, 32, postUndici)
  })
  await bareLoop(500, 4, postNodeHttp) // warm-up
  await bareLoop(500, 4, postUndici)
  const bareBefore = await bareLoops()
  const herald = await startHerald(pgRun.adminUrl, "bench_webhooks", 8, receiverUrl)
  const statements = await statementCounter(herald.databaseUrl)
  const throughput = async (keyIds: ReadonlyArray<string>, tag: string) => {
    const target = received + EVENTS
    const perEvent = cpuMeter(herald.child)
    const statementsBefore = await statements()
    const started = performance.now()
    await insertEvents(herald.databaseUrl, herald.accountId, keyIds, EVENTS, tag)
    await waitReceived(target, 120_000)
    const perSecond = (EVENTS - Math.max(0, target - received)) / ((performance.now() - started) / 1000)
    await sleep(500) // the last attempts' records are written after their POSTs
    const statementsAfter = await statements()
    return {
      perSecond,
      ...perEvent(EVENTS),
      // Less the two statements of this bench's own (the INSERT of the events, the count itself).
      statements: statementsBefore === null || statementsAfter === null ? null : (statementsAfter - statementsBefore - 2) / EVENTS
    }
  }
  await throughput(herald.keyIds, "warm")
  const oneRun = await throughput(herald.keyIds.slice(0, 1), "one")
  const eightRun = await throughput(herald.keyIds, "eight")
  const one = oneRun.perSecond
  const eight = eightRun.perSecond
  const bareAfter = await bareLoops()
  const mean = (k: keyof typeof bareAfter) => (bareBefore[k] + bareAfter[k]) / 2
  const ratios = (herald: number, concurrency: "4" | "32") =>
    `${((herald / mean(`undici${concurrency}`)) * 100).toFixed(1)} % of undici (target ≥ 50 %), ${((herald / mean(`http${concurrency}`)) * 100).toFixed(1)} % of node:http`

  // 2. Delay from event row to delivery at 100 events/s, one key.
  const pool = new pg.Pool({ connectionString: herald.databaseUrl, max: 4 })
  const warm = received
  await feed(pool, herald.accountId, herald.keyIds.slice(0, 1), 100, 2, "delaywarm")
  await waitReceived(warm + 200, 10_000)
  const before = received
  delays = []
  const steadyPerEvent = cpuMeter(herald.child)
  const steadyStatements = await statements()
  await feed(pool, herald.accountId, herald.keyIds.slice(0, 1), 100, SECONDS, "delay")
  await waitReceived(before + 100 * SECONDS, 30_000)
  await sleep(500)
  const steadyStatementsAfter = await statements()
  const steady = {
    cpuMs: steadyPerEvent(100 * SECONDS).cpuMs,
    // Less the bench's own: its INSERTs of the events and the first count.
    statements: steadyStatements === null || steadyStatementsAfter === null ? null : (steadyStatementsAfter - steadyStatements - 1) / (100 * SECONDS) - 1
  }
  const sorted = [...delays].sort((a, b) => a - b)
  await pool.end()
  const heraldPeak = herald.child.peakRssMb()
  await herald.child.stop()

  // 3. Every receiver down (a closed port) for the whole run, events at 100/s over 8 keys.
  const deadUrl = `http://127.0.0.1:${await freePort()}/hook`
  const down = await startHerald(pgRun.adminUrl, "bench_webhooks_down", 8, deadUrl)
  const downPool = new pg.Pool({ connectionString: down.databaseUrl, max: 4 })
  const pid = down.child.process.pid!
  const samples: Array<{ s: number; rss: number }> = [{ s: 0, rss: rssMb(pid) }]
  const downStart = Date.now()
  const sampler = setInterval(() => samples.push({ s: Math.round((Date.now() - downStart) / 1000), rss: rssMb(pid) }), 1000)
  await feed(downPool, down.accountId, down.keyIds, 100, DOWN_SECONDS, "down")
  clearInterval(sampler)
  const [state] = await sql(down.databaseUrl, `
    SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE attempts = 0)::int AS unattempted,
      count(*) FILTER (WHERE attempts >= 4)::int AS queued, (SELECT count(*)::int FROM webhook_attempts) AS attempts
    FROM webhook_deliveries`)
  await downPool.end()
  await down.child.stop()

  console.log(`\nwebhook benchmark: ${EVENTS} events per throughput run, receiver verifies every signature\n`)
  table([
    ...(["http4", "undici4", "http32", "undici32"] as const).map((k) => ({
      run: `bare loop, ${k.startsWith("http") ? "node:http" : "undici"}, ${k.endsWith("32") ? 32 : 4} at a time`,
      "events/s": mean(k),
      "Herald / bare": `(before ${bareBefore[k].toFixed(0)}, after ${bareAfter[k].toFixed(0)})`
    })),
    { run: "Herald, 1 key (4 in progress per key)", "events/s": one, "Herald / bare": ratios(one, "4") },
    { run: "Herald, 8 keys (32 slots)", "events/s": eight, "Herald / bare": ratios(eight, "32") }
  ])
  const cost = (name: string, run: typeof oneRun) =>
    console.log(`  ${name}: ${run.cpuMs.toFixed(3)} ms Herald CPU and ${run.pgCpuMs.toFixed(3)} ms PostgreSQL CPU per event` +
      (run.statements === null ? "" : `, ${run.statements.toFixed(3)} SQL statements per event`))
  cost("1 key ", oneRun)
  cost("8 keys", eightRun)
  console.log(`\ndelay from event row to delivery at 100 events/s for ${SECONDS} s (${sorted.length} events):`)
  console.log(`  p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms, max ${sorted.at(-1)?.toFixed(0)} ms (target: p99 < 1000 ms)`)
  console.log(`  ${steady.cpuMs.toFixed(3)} ms Herald CPU per event` + (steady.statements === null ? "" : `, ${steady.statements.toFixed(3)} SQL statements per event`))
  console.log(`  bad signatures seen by the receiver: ${badSignatures}; Herald peak RSS ${heraldPeak.toFixed(0)} MB`)
  const at = (s: number) => samples.reduce((best, x) => (Math.abs(x.s - s) < Math.abs(best.s - s) ? x : best)).rss
  const settle = Math.min(30, Math.round(DOWN_SECONDS / 2))
  const settled = at(settle)
  const last = samples.at(-1)!.rss
  console.log(`\nreceivers down for ${DOWN_SECONDS} s, 100 events/s over 8 keys (${100 * DOWN_SECONDS} events):`)
  table([0, 10, 20, 30, 45, 60, 90, 120, DOWN_SECONDS].filter((s, i, all) => all.indexOf(s) === i && s <= DOWN_SECONDS)
    .map((s) => ({ "after s": s, "RSS MB": at(s) })))
  console.log(`RSS growth from ${settle} s (bursts under way) to the end: ${(last - settled).toFixed(1)} MB (target: flat)`)
  console.log(`in the database: ${state?.["pending"]} deliveries pending (${state?.["unattempted"]} not yet tried, `
    + `${state?.["queued"]} on the queued ladder), ${state?.["attempts"]} attempts on record`)
} finally {
  receiver.close()
  await undiciPool.close()
  await pgRun.stop()
}
