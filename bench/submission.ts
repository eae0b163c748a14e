/**
 * npm run bench:submission — SMTP submission beside the MX listener, in one Herald process (fresh
 * database, the MTA off, HERALD_INBOUND_ENABLED=false so stored inbound mail is not parsed
 * meanwhile). 8 closed-loop SMTP clients (one pooled nodemailer transport: 8 connections kept
 * open) send the same message bytes for BENCH_SECONDS (default 10, after BENCH_WARMUP seconds,
 * default 2) first to the MX listener (its 250 follows the committed INSERT of the raw message),
 * then to the submission port with AUTH (its 250 follows the send path: the rate window, the
 * sender's domain, suppressions and block list, the quota, the queue rows committed), then to the
 * MX listener again; the mean of the two MX runs is the baseline. Target: submission ≥ 80 % of
 * the MX listener's acceptance rate.
 */
import { benchPostgres, cpuMeter, createDatabase, freePort, type LoadResult, smtpLoad, spawnNode, sql, table, transactionCounter, waitFor, waitForTcp } from "./lib.ts"

const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 10)
const WARMUP = Number(process.env["BENCH_WARMUP"] ?? 2)
const CONCURRENCY = 8
const HOSTNAME = "bench.herald.test"

/** A usual application message: text and HTML alternatives, about 2 KB. */
const message = Buffer.from([
  "From: Bench Shop <bench@bench.example>",
  "To: Customer <rcpt@example.org>",
  "Subject: Your receipt",
  "Date: Sun, 29 Nov 2026 00:00:00 +0000",
  "Message-ID: <bench@app.example>",
  "MIME-Version: 1.0",
  "Content-Type: multipart/alternative; boundary=\"alt\"",
  "",
  "--alt",
  "Content-Type: text/plain; charset=utf-8",
  "",
  ..."A transactional message of a usual size. ".repeat(20).match(/.{1,76}/g)!,
  "--alt",
  "Content-Type: text/html; charset=utf-8",
  "",
  ...`<p>${"A transactional message of a usual size. ".repeat(20)}</p>`.match(/.{1,76}/g)!,
  "--alt--",
  ""
].join("\r\n"))

const pg = await benchPostgres()
try {
  const url = await createDatabase(pg.adminUrl, "bench_submission")
  const httpPort = await freePort()
  const smtpPort = await freePort()
  const submissionPort = await freePort()
  const token = "hrld_bench_token_0123456789abcdef"
  const herald = spawnNode("src/main.ts", {
    DATABASE_URL: url, HERALD_HTTP_PORT: String(httpPort), HERALD_HTTP_HOST: "127.0.0.1", HERALD_HOSTNAME: HOSTNAME,
    HERALD_SMTP_HOST: "127.0.0.1", HERALD_SMTP_PORT: String(smtpPort), HERALD_SUBMISSION_PORT: String(submissionPort),
    HERALD_SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP: "100000000", HERALD_BOOTSTRAP_KEY: token,
    HERALD_MTA_ENABLED: "false", HERALD_INBOUND_ENABLED: "false"
  })
  // A start that never gets healthy must not leave the appliance running after the bench.
  await waitFor(`http://127.0.0.1:${httpPort}/health`, 240_000).catch(async (error: unknown) => {
    await herald.stop()
    throw error
  })
  await fetch(`http://127.0.0.1:${httpPort}/v1/client/domains`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ domain: "bench.example" })
  })
  await sql(url, "UPDATE domains SET verified_at = now()")
  await sql(url, "UPDATE accounts SET rate_per_min_override = 100000000, monthly_quota_override = 100000000")
  await waitForTcp(submissionPort)

  const transactions = transactionCounter(url)
  /** The run's rate, with the appliance's and PostgreSQL's CPU and the transactions per message (warm-up included). */
  const measured = async (run: () => Promise<LoadResult>) => {
    const transactions0 = await transactions()
    const perMessage = cpuMeter(herald)
    const result = await run()
    const messages = result.requests + result.perSecond * WARMUP
    const cpu = perMessage(messages)
    await new Promise((r) => setTimeout(r, 1500))
    return { ...result, ...cpu, transactionsPerMessage: ((await transactions()) - transactions0) / Math.max(1, messages) }
  }
  const mx = () =>
    measured(() =>
      smtpLoad({ messages: [{ from: "bench@bench.example", to: `rcpt@bounces.${HOSTNAME}`, raw: message }], port: smtpPort, concurrency: CONCURRENCY, seconds: SECONDS, warmup: WARMUP })
    )
  console.log("MX listener…")
  const mxFirst = await mx()
  console.log(`  ${mxFirst.ok}/${mxFirst.requests} accepted; SMTP submission…`)
  const submission = await measured(() =>
    smtpLoad({
      messages: [{ from: "bench@bench.example", to: "rcpt@example.org", raw: message }],
      port: submissionPort, concurrency: CONCURRENCY, seconds: SECONDS, warmup: WARMUP, auth: { user: "bench", pass: token }
    })
  )
  console.log(`  ${submission.ok}/${submission.requests} accepted; MX listener again…`)
  const mxAgain = await mx()
  const [rows] = await sql(url, "SELECT count(*)::int AS n FROM deliveries")
  await herald.stop()

  const row = (name: string, r: Awaited<ReturnType<typeof measured>>) => ({
    listener: name, "msg/s": r.perSecond, ok: r.ok, sent: r.requests, "p50 ms": r.p50, "p99 ms": r.p99,
    "cpu ms/msg": r.cpuMs.toFixed(2), "PostgreSQL cpu ms/msg": r.pgCpuMs.toFixed(2), "transactions/msg": r.transactionsPerMessage.toFixed(2)
  })
  console.log(`\nsubmission benchmark: ${CONCURRENCY} connections, ${SECONDS} s each, ${message.length}-byte message\n`)
  table([row("MX listener (before)", mxFirst), row("SMTP submission", submission), row("MX listener (after)", mxAgain)])
  const baseline = (mxFirst.perSecond + mxAgain.perSecond) / 2
  console.log(`\nsubmission / MX listener: ${((submission.perSecond / baseline) * 100).toFixed(1)} % (target ≥ 80 %)`)
  console.log(`deliveries committed: ${rows?.["n"]} (every 250 counted: ${Number(rows?.["n"]) >= submission.ok})`)
} finally {
  await pg.stop()
}
