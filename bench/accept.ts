/**
 * npm run bench:accept — single-recipient sends per second through POST /v1/mail/send with 8
 * concurrent clients (the bench account's rate limit lifted), p50/p99 latency, beside a bare
 * node:http server that parses the same JSON, commits one row per request to the same PostgreSQL
 * and answers 202, measured in the same run. Target: Herald at least 50 % of the bare rate.
 * Each Herald 202 follows one committed transaction holding its rows (message, delivery: one
 * statement, shared by the sends that arrive together); the quota is reserved just before by a
 * statement of its own, committed asynchronously and released if the send's write fails
 * (src/platform/usage/Quota.ts: inside the send's transaction its row lock was held through every
 * durable commit, serialising an account's sends). Herald's process CPU per request is printed too: the figure that decides the ratio;
 * and PostgreSQL's (every server process of the bench's cluster), the database's share.
 *
 * A second baseline shows what the decided stack itself allows: the same bare work (decode with
 * Herald's schema, one INSERT, 202) written as an Effect HttpApi endpoint over @effect/sql-pg
 * (bench/effect-floor-accept-server.ts). No handler on this stack can be faster than that; on this
 * 2-core machine it measured 31–79 % of the bare node:http server (near bare when the disk's
 * flushes decide, far below when the CPU does). Herald's send adds authentication (cached), the
 * rate window, the quota and the queue rows: three statements in all.
 */
import { benchPostgres, type Child, cpuMeter, createDatabase, freePort, load, spawnNode, sql, table, transactionCounter, waitFor, waitForTcp } from "./lib.ts"

const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 10)
const CONCURRENCY = 8
const WARMUP_SECONDS = 2

/**
 * The load against `url` on `server`, with the CPU it and PostgreSQL spent per answered request,
 * warm-up requests included (estimated at the measured rate).
 */
const measure = async (server: Child, databaseUrl: string, url: string, headers: Record<string, string>, body: (i: number) => string) => {
  const transactions = transactionCounter(databaseUrl)
  const transactions0 = await transactions()
  const perRequest = cpuMeter(server)
  const result = await load({ url, headers, body, concurrency: CONCURRENCY, seconds: SECONDS, expectStatus: 202 })
  const requests = result.requests + result.perSecond * WARMUP_SECONDS
  const cpu = perRequest(requests)
  await new Promise((r) => setTimeout(r, 1500))
  return { result, ...cpu, transactionsPerRequest: ((await transactions()) - transactions0) / Math.max(1, requests) }
}

/** A row of the table: rate, latency, answers and CPU per request. */
const row = (server: string, m: Awaited<ReturnType<typeof measure>>) => ({
  server, "req/s": m.result.perSecond, "p50 ms": m.result.p50, "p99 ms": m.result.p99, "202s": m.result.ok,
  other: m.result.requests - m.result.ok, "cpu ms/req": m.cpuMs.toFixed(2), "PostgreSQL cpu ms/req": m.pgCpuMs.toFixed(2),
  "transactions/req": m.transactionsPerRequest.toFixed(2)
})

const pgRun = await benchPostgres()
try {
  const body = (i: number) => JSON.stringify({
    personalizations: [{ to: [{ email: `rcpt${i}@example.org` }] }],
    from: { email: "bench@bench.example" },
    subject: `Bench ${i}`,
    content: [{ type: "text/plain", value: "A transactional message of a usual size. ".repeat(20) }]
  })

  // Baseline: the bare server on its own database.
  const bareUrl = await createDatabase(pgRun.adminUrl, "bench_bare")
  const barePort = await freePort()
  const bare = spawnNode("bench/bare-accept-server.ts", { DATABASE_URL: bareUrl, PORT: String(barePort) })
  await new Promise((r) => setTimeout(r, 1500))
  const bareMeasured = await measure(bare, bareUrl, `http://127.0.0.1:${barePort}/`, {}, body)
  await bare.stop()

  // The stack's ceiling: the bare work as an Effect HttpApi handler, on a database of its own.
  const floorUrl = await createDatabase(pgRun.adminUrl, "bench_floor")
  const floorPort = await freePort()
  const floor = spawnNode("bench/effect-floor-accept-server.ts", { DATABASE_URL: floorUrl, PORT: String(floorPort) })
  await waitForTcp(floorPort)
  const floorMeasured = await measure(floor, floorUrl, `http://127.0.0.1:${floorPort}/v1/mail/send`, {}, body)
  await floor.stop()

  // Herald, on a fresh database, with a verified domain and the rate limit lifted.
  const heraldUrl = await createDatabase(pgRun.adminUrl, "bench_herald")
  const port = await freePort()
  const token = "hrld_bench_token_0123456789abcdef"
  const herald = spawnNode("src/main.ts", {
    DATABASE_URL: heraldUrl, HERALD_HTTP_PORT: String(port), HERALD_HTTP_HOST: "127.0.0.1",
    HERALD_SMTP_PORT: String(await freePort()), HERALD_BOOTSTRAP_KEY: token, HERALD_MTA_ENABLED: "false"
  })
  await waitFor(`http://127.0.0.1:${port}/health`)
  const headers = { authorization: `Bearer ${token}` }
  await fetch(`http://127.0.0.1:${port}/v1/client/domains`, {
    method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ domain: "bench.example" })
  })
  await sql(heraldUrl, "UPDATE domains SET verified_at = now()")
  await sql(heraldUrl, "UPDATE accounts SET rate_per_min_override = 100000000, monthly_quota_override = 100000000")
  const heraldMeasured = await measure(herald, heraldUrl, `http://127.0.0.1:${port}/v1/mail/send`, headers, body)
  const [rows] = await sql(heraldUrl, "SELECT count(*)::int AS n FROM deliveries")
  await herald.stop()

  console.log(`\naccept benchmark: ${CONCURRENCY} concurrent clients, ${SECONDS} s each, single-recipient sends\n`)
  table([row("bare node:http + 1 INSERT", bareMeasured), row("Effect HttpApi + 1 INSERT", floorMeasured), row("Herald POST /v1/mail/send", heraldMeasured)])
  const percentOf = (a: number, b: number) => `${((a / b) * 100).toFixed(1)} %`
  console.log(`\nHerald / bare: ${percentOf(heraldMeasured.result.perSecond, bareMeasured.result.perSecond)} (target ≥ 50 %)`)
  console.log(`Effect HttpApi + 1 INSERT / bare: ${percentOf(floorMeasured.result.perSecond, bareMeasured.result.perSecond)} (the stack's ceiling)`)
  console.log(`Herald / Effect HttpApi + 1 INSERT: ${percentOf(heraldMeasured.result.perSecond, floorMeasured.result.perSecond)}`)
  console.log(`deliveries committed: ${rows?.["n"]} (every 202 counted: ${Number(rows?.["n"]) >= heraldMeasured.result.ok})`)
} finally {
  await pgRun.stop()
}
