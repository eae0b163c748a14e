/**
 * npx tsx bench/stats.ts — what the console's overview and admin queue reads cost at scale
 * (issue 28), against the appliance started as `npm start` starts it, on DATABASE_URL's PostgreSQL
 * when set, else on an embedded cluster (bench/lib.ts `benchPostgres`).
 *
 * 1. GET /v1/client/stats: BENCH_STATS_DELIVERIES (1,000,000) deliveries of one account spread
 *    over the last 30 days (one every 2.6 s), each with a `sent` attempt, one in ten also a `deferred` one, 2 % a
 *    bounce event and 0.2 % a complaint event, plus as many deliveries of another account (so the
 *    indexes must pick the account out), seeded with generate_series straight into the database
 *    (not measured). Then 24h, 7d and 30d: one warm-up and BENCH_STATS_RUNS (5) measured runs each,
 *    median and slowest printed beside HERALD_QUERY_TIMEOUT_MS (5 s), after a first 30d read that
 *    folds every settled hour into the rollup (timed on its own). BENCH_EXPLAIN=1 prints the plans
 *    of the three range scans over 30 days (what a read without the rollup would run).
 * 2. GET /v1/admin/queue: BENCH_QUEUE_WAITING (100,000) queued and deferred deliveries (of the other
 *    account) across 2,000 recipient domains; the first request takes the snapshot (timed), the next ones are answered
 *    from it (timed).
 * Prints figures; asserts nothing. The database is dropped at the end.
 */
import { apiCaller, benchPostgres, createDatabase, freePort, spawnNode, sql, table, waitFor } from "./lib.ts"

const DELIVERIES = Number(process.env["BENCH_STATS_DELIVERIES"] ?? 1_000_000)
const WAITING = Number(process.env["BENCH_QUEUE_WAITING"] ?? 100_000)
const RUNS = Number(process.env["BENCH_STATS_RUNS"] ?? 5)
const TOKEN = "hk_bench_stats_bootstrap_0123456789abcdef"

const seedActivity = async (url: string, accountId: string, keyId: string, prefix: string) => {
  // Spread over 30 days back from now; ids are text like the appliance's.
  await sql(url, `
    INSERT INTO deliveries (id, message_id, account_id, key_id, recipient, recipient_domain, recipient_kind, state, attempts,
                            next_attempt_at, created_at, updated_at, completed_at)
    SELECT '${prefix}' || g, 'msg_${prefix}' || g, $1, $2, 'r' || g || '@example.net', 'example.net', 'to', 'sent', 1,
           t, t, t, t
    FROM (SELECT g, now() - (g * 2592000.0 / $3) * interval '1 second' AS t FROM generate_series(1, $3::int) AS g) s`, [accountId, keyId, DELIVERIES])
  await sql(url, `
    INSERT INTO delivery_attempts (delivery_id, account_id, at, outcome)
    SELECT id, account_id, created_at + interval '2 seconds', 'sent' FROM deliveries WHERE id LIKE '${prefix}%'
    UNION ALL
    SELECT id, account_id, created_at + interval '1 second', 'deferred' FROM deliveries WHERE id LIKE '${prefix}%' AND right(id, 1) = '7'`)
  await sql(url, `
    INSERT INTO events (id, account_id, key_id, event, payload, created_at, dispatched_at)
    SELECT 'evt_${prefix}' || id, account_id, key_id, CASE WHEN right(id, 3) = '000' THEN 'email.complained' ELSE 'email.bounced' END,
           '{}'::jsonb, created_at + interval '3 seconds', now()
    FROM deliveries WHERE id LIKE '${prefix}%' AND (right(id, 2) IN ('13', '29') OR right(id, 3) = '000')`)
}

const seedWaiting = async (url: string, accountId: string, keyId: string) =>
  sql(url, `
    INSERT INTO deliveries (id, message_id, account_id, key_id, recipient, recipient_domain, recipient_kind, state, attempts,
                            next_attempt_at, created_at, updated_at)
    SELECT 'w' || g, 'msg_w' || g, $1, $2, 'r' || g || '@d' || (g % 2000) || '.example', 'd' || (g % 2000) || '.example', 'to',
           CASE WHEN g % 5 = 0 THEN 'deferred' ELSE 'queued' END, 0, now() + interval '1 day', now(), now()
    FROM generate_series(1, $3::int) AS g`, [accountId, keyId, WAITING])

const timed = async (f: () => Promise<unknown>) => {
  const start = performance.now()
  await f()
  return performance.now() - start
}

/** EXPLAIN (ANALYZE, BUFFERS) of each part of the 30-day stats read, with literal parameters. */
const explain = async (url: string, accountId: string) => {
  const from = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - 29 * 86_400_000).toISOString()
  const to = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000).toISOString()
  const parts = [
    `SELECT date_trunc('day', created_at, 'UTC'), count(*) FROM deliveries WHERE account_id = '${accountId}' AND created_at >= '${from}' AND created_at < '${to}' GROUP BY 1`,
    `SELECT date_trunc('day', at, 'UTC'), count(*) FILTER (WHERE outcome = 'sent') FROM delivery_attempts WHERE account_id = '${accountId}' AND at >= '${from}' AND at < '${to}' GROUP BY 1`,
    `SELECT date_trunc('day', created_at, 'UTC'), count(*) FROM events WHERE account_id = '${accountId}' AND event IN ('email.bounced', 'email.complained') AND created_at >= '${from}' AND created_at < '${to}' GROUP BY 1`
  ]
  for (const q of parts) {
    const plan = await sql(url, `EXPLAIN (ANALYZE, BUFFERS) ${q}`)
    console.log(plan.map((r) => r["QUERY PLAN"]).join("\n"), "\n")
  }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  const pg = await benchPostgres()
  const url = await createDatabase(pg.adminUrl, "herald_bench_stats")
  const port = await freePort()
  const app = spawnNode("src/main.ts", {
    DATABASE_URL: url,
    HERALD_HTTP_PORT: String(port),
    HERALD_HTTP_HOST: "127.0.0.1",
    HERALD_SMTP_PORT: String(await freePort()),
    HERALD_BOOTSTRAP_KEY: TOKEN,
    // The seeded queue must stay as seeded: nothing delivers it.
    HERALD_MTA_ENABLED: "false"
  })
  try {
    const base = `http://127.0.0.1:${port}`
    await waitFor(`${base}/health`)
    const call = apiCaller(base, TOKEN)
    const [admin] = await sql(url, "SELECT id, account_id FROM api_keys ORDER BY created_at LIMIT 1")
    const other = await call("POST", "/v1/admin/accounts", { name: "Other", email: "other@bench.example", password: "correct horse battery" })
    const otherKey = await call("POST", `/v1/admin/accounts/${other["id"]}/keys`, { label: "other" })
    console.log(`seeding ${DELIVERIES.toLocaleString()} deliveries for each of two accounts…`)
    await seedActivity(url, admin!["account_id"], admin!["id"], "a")
    await seedActivity(url, other["id"] as string, otherKey["id"] as string, "b")
    // The waiting deliveries are the other account's: accepted just now, they would all sit in the
    // measured account's unsettled hour (live scans) and measure a burst rather than a month.
    await seedWaiting(url, other["id"] as string, otherKey["id"] as string)
    await sql(url, "VACUUM ANALYZE deliveries")
    await sql(url, "VACUUM ANALYZE delivery_attempts")
    await sql(url, "VACUUM ANALYZE events")
    if (process.env["BENCH_EXPLAIN"] === "1") await explain(url, admin!["account_id"])
    const rows: Array<Record<string, string | number>> = []
    // The first read folds the settled hours of 31 days into the rollup, a day per statement.
    const first = await timed(() => call("GET", "/v1/client/stats?period=30d"))
    rows.push({ read: "stats 30d, first read (folds 31 days)", counted: "", "median ms": Math.round(first), "slowest ms": Math.round(first) })
    for (const period of ["24h", "7d", "30d"]) {
      await call("GET", `/v1/client/stats?period=${period}`)
      const runs: Array<number> = []
      for (let i = 0; i < RUNS; i++) runs.push(await timed(() => call("GET", `/v1/client/stats?period=${period}`)))
      const answer = await call("GET", `/v1/client/stats?period=${period}`) as { buckets: Array<{ sent: number }> }
      rows.push({
        read: `stats ${period}`,
        counted: answer.buckets.reduce((n, b) => n + b.sent, 0).toLocaleString(),
        "median ms": Math.round(median(runs)),
        "slowest ms": Math.round(Math.max(...runs))
      })
    }
    const snapshot = await timed(() => call("GET", "/v1/admin/queue?limit=200"))
    const cached: Array<number> = []
    for (let i = 0; i < RUNS; i++) cached.push(await timed(() => call("GET", "/v1/admin/queue?limit=200")))
    const page = await call("GET", "/v1/admin/queue") as { total: number }
    rows.push({ read: "admin queue, snapshot taken", counted: `${WAITING.toLocaleString()} (${page.total} sites)`, "median ms": Math.round(snapshot), "slowest ms": Math.round(snapshot) })
    rows.push({ read: "admin queue, from the snapshot", counted: "", "median ms": Math.round(median(cached)), "slowest ms": Math.round(Math.max(...cached)) })
    table(rows)
  } finally {
    await app.stop()
    await sql(pg.adminUrl, "DROP DATABASE IF EXISTS herald_bench_stats").catch(() => undefined)
    await pg.stop()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
