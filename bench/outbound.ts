/**
 * npm run bench:outbound — N messages (BENCH_MESSAGES, default 5,000, ~5 KB each) accepted through
 * the API (BENCH_BATCH personalizations per request, default 10) and delivered by Herald's MTA to a
 * local SMTP sink; prints accepted/s, delivered/s, accept latency p50/p99 and the appliance's peak
 * RSS. Baseline in the same run: the same messages sent by a bare pooled nodemailer transport with
 * DKIM (RSA-2048) to the same sink, before and after Herald (the mean of the two is the baseline:
 * this VM's speed drifts within minutes).
 * Targets: delivered/s ≥ 60 % of the baseline; peak RSS < 400 MB.
 *
 * The reference MTA in the same run (issue #33's outbound target: Herald with DKIM ≥ 1.5× Postfix
 * without): the same N messages injected over SMTP on 8 connections into a private Postfix
 * (bench/postfix.ts: installed from Debian's packages when missing, smtpd on a loopback port,
 * relayhost the same sink, default concurrency, no local delivery, stopped afterwards), timed
 * end to end until the sink has them all; before and after Herald, like the bare loop.
 * BENCH_POSTFIX=0 leaves it out.
 *
 * BENCH_QUEUED=10000 (or 100000): the queue-length mode. N = BENCH_QUEUED messages are accepted
 * with delivery off (HERALD_MTA_ENABLED=false); the claim statement, exactly as DeliveryQueue
 * builds it, is run under EXPLAIN (ANALYZE, BUFFERS) on the full queue (in a transaction rolled
 * back); then the appliance restarts with delivery on and drains the queue. Delivered/s and the
 * draining process's peak RSS are printed beside the bare loop's (same N).
 *
 * Also printed per phase: the appliance's CPU seconds per message and, when the server has
 * pg_stat_statements loaded (DATABASE_URL pointing at one), SQL statements per message.
 */
import { generateKeyPairSync } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import nodemailer from "nodemailer"
import pg from "pg"
// The queue tells bulk of its outcomes through ports (src/appliance.ts wires them).
import { PortsLive } from "../src/appliance.ts"
import { DeliveryQueue } from "../src/mta/queue/DeliveryQueue.ts"
import { ensurePostfix, startPostfix } from "./postfix.ts"
import { benchPostgres, createDatabase, freePort, load, spawnDeliveringAppliance, sql, startCountingSink, startSinkDns, statementCounter, table, waitFor } from "./lib.ts"

const QUEUED = Number(process.env["BENCH_QUEUED"] ?? 0)
const N = QUEUED > 0 ? QUEUED : Number(process.env["BENCH_MESSAGES"] ?? 5000)
/**
 * Messages per API request (personalizations, one message each). 10 by default: the MTA is what
 * this benchmark weighs, and a sender with thousands of messages batches them; BENCH_BATCH=1
 * sends each as its own single-recipient request, whose cost (bench/accept.ts) then shares the
 * appliance's one thread with delivery.
 */
const BATCH = Math.max(1, Number(process.env["BENCH_BATCH"] ?? 10))
const CLAIM_LIMIT = 100 // HERALD_MTA_CONCURRENCY's default: what one claim asks for when no work is in hand

/** EXPLAIN (ANALYZE, BUFFERS) of the real claim statement, in a transaction that is rolled back. */
const claimPlan = async (url: string): Promise<Array<string>> => {
  const now = new Date()
  const [text, params] = await Effect.runPromise(Effect.scoped(Effect.provide(
    Effect.map(DeliveryQueue, (queue) => queue.claim("bench-explain", now, new Date(now.getTime() + 120_000), CLAIM_LIMIT, [], "transactional").compile()),
    DeliveryQueue.Default.pipe(Layer.provide(PortsLive), Layer.provide(PgClient.layer({ url: Redacted.make(url) })))
  )))
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query("BEGIN")
    const rows = (await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, [...params])).rows
    await client.query("ROLLBACK")
    return rows.map((r) => r["QUERY PLAN"])
  } finally {
    await client.end()
  }
}

const phaseLine = (phase: string, cpu: number, statements: number | null, messages: number) =>
  `${phase}: ${(cpu / messages * 1000).toFixed(2)} ms CPU per message` +
  (statements === null ? "" : `, ${(statements / messages).toFixed(2)} SQL statements per message`)

const BODY = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(85) // ~5 KB

// The sink: counts messages, discards them.
const sink = await startCountingSink()

// Baseline: bare pooled nodemailer + DKIM, run before and after Herald; the mean is the baseline,
// so a machine whose speed drifts during the run skews both sides alike.
const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } })
const bareLoop = async (): Promise<number> => {
  const transport = nodemailer.createTransport({
    host: "127.0.0.1", port: sink.port, pool: true, maxConnections: 10, maxMessages: 100, ignoreTLS: true,
    dkim: { domainName: "bench.example", keySelector: "s1", privateKey }
  })
  const started = performance.now()
  const base = sink.received
  let next = 0
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (next < N) {
      const i = next++
      await transport.sendMail({ from: "bench@bench.example", to: `r${i}@dest.example`, subject: `Bench ${i}`, text: BODY })
    }
  }))
  await sink.waitReceived(base + N)
  transport.close()
  return N / ((performance.now() - started) / 1000)
}
const bareBefore = await bareLoop()

/** Postfix end to end: N messages injected on 8 SMTP connections, until the sink has them all (undefined with BENCH_POSTFIX=0). */
const WITH_POSTFIX = process.env["BENCH_POSTFIX"] !== "0"
const postfixLoop = async (): Promise<{ readonly injected: number; readonly delivered: number } | undefined> => {
  if (!WITH_POSTFIX) return undefined
  ensurePostfix()
  const postfix = await startPostfix({ port: await freePort(), sinkPort: sink.port })
  try {
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: postfix.port, pool: true, maxConnections: 8, maxMessages: Infinity, ignoreTLS: true })
    const started = performance.now()
    const base = sink.received
    let next = 0
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < N) {
        const i = next++
        await transport.sendMail({ from: "bench@bench.example", to: `p${i}@dest.example`, subject: `Bench ${i}`, text: BODY })
      }
    }))
    const injected = N / ((performance.now() - started) / 1000)
    transport.close()
    await sink.waitReceived(base + N)
    return { injected, delivered: N / ((performance.now() - started) / 1000) }
  } finally {
    postfix.stop()
  }
}
const postfixBefore = await postfixLoop()

// Herald.
const dns = await startSinkDns()
const pgRun = await benchPostgres()
try {
  const url = await createDatabase(pgRun.adminUrl, "bench_outbound")
  const token = "hrld_bench_token_0123456789abcdef"
  const start = async (mtaEnabled: boolean) => {
    const child = await spawnDeliveringAppliance({
      databaseUrl: url, token, dnsAddress: dns.address, mxPort: sink.port, env: { HERALD_MTA_ENABLED: String(mtaEnabled) }
    })
    await waitFor(`${child.base}/health`)
    return { child, base: child.base }
  }
  const headers = { authorization: `Bearer ${token}` }
  let herald = await start(QUEUED === 0)
  await fetch(`${herald.base}/v1/client/domains`, {
    method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ domain: "bench.example" })
  })
  await sql(url, "UPDATE domains SET verified_at = now()")
  await sql(url, "UPDATE accounts SET rate_per_min_override = 100000000, monthly_quota_override = 100000000")

  const before = sink.received
  const statements = await statementCounter(url)
  /** Statements since the last call (null without pg_stat_statements). */
  let mark = await statements()
  const statementsSinceMark = async () => {
    const now = await statements()
    const since = now === null || mark === null ? null : now - mark
    mark = now
    return since
  }
  const perMessage: Array<string> = []
  const cpuAtAccept = herald.child.cpuSeconds()
  let t0 = performance.now()
  let sent = 0
  const accept = await load({
    url: `${herald.base}/v1/mail/send`, headers, concurrency: 8, seconds: 3600, warmup: 0, expectStatus: 202,
    body: (i) =>
      BATCH === 1
        ? JSON.stringify({ from: { email: "bench@bench.example" }, to: [{ email: `h${i}@dest.example` }], subject: `Bench ${i}`, text: BODY })
        : JSON.stringify({
          from: { email: "bench@bench.example" },
          personalizations: Array.from({ length: BATCH }, (_, j) => ({ to: [{ email: `h${i * BATCH + j}@dest.example` }] })),
          subject: `Bench ${i}`,
          content: [{ type: "text/plain", value: BODY }]
        }),
    until: () => ++sent > N / BATCH
  })
  const accepted = accept.ok * BATCH
  const acceptSeconds = (performance.now() - t0) / 1000
  const acceptRss = herald.child.peakRssMb()

  let queuedPlan: Array<string> = []
  let deliverFrom = before
  let cpuFrom = cpuAtAccept
  if (QUEUED > 0) {
    // The whole queue is waiting: the claim's plan on it, then delivery on.
    const acceptStatements = await statementsSinceMark()
    perMessage.push(phaseLine("accept (delivery off)", herald.child.cpuSeconds() - cpuAtAccept, acceptStatements, accepted))
    await sql(url, "ANALYZE deliveries")
    const [waiting] = await sql(url, "SELECT count(*)::int AS n FROM deliveries WHERE state IN ('queued', 'deferred')")
    queuedPlan = [`(${waiting?.["n"]} deliveries queued)`, ...(await claimPlan(url))]
    await herald.child.stop()
    herald = await start(true)
    await statementsSinceMark()
    cpuFrom = herald.child.cpuSeconds()
    t0 = performance.now()
    deliverFrom = sink.received
  }
  await sink.waitReceived(before + accepted)
  const heraldSeconds = (performance.now() - t0) / 1000
  const delivered = before + accepted - deliverFrom
  const cpuEnd = herald.child.cpuSeconds()
  const deliveryStatements = await statementsSinceMark()
  perMessage.push(QUEUED > 0
    ? phaseLine("drain (delivery on)", cpuEnd - cpuFrom, deliveryStatements, delivered)
    : phaseLine("accept + delivery", cpuEnd - cpuFrom, deliveryStatements, delivered))
  const [queued] = await sql(url, "SELECT count(*)::int AS n FROM deliveries WHERE state = 'sent'")
  const plan = await claimPlan(url)
  await herald.child.stop()
  const postfixAfter = await postfixLoop()
  const bareAfter = await bareLoop()

  const heraldRate = delivered / heraldSeconds
  const bareRate = (bareBefore + bareAfter) / 2
  console.log(`\noutbound benchmark: ${N} messages of ~5 KB, DKIM RSA-2048, to a local SMTP sink, ${BATCH === 1 ? "one single-recipient send per request" : `${BATCH} personalizations per request`}${QUEUED > 0 ? ", all queued before delivery starts" : ""}\n`)
  table([
    { run: "bare nodemailer pool + DKIM", "accepted/s": bareRate, "delivered/s": bareRate, "p50 ms": 0, "p99 ms": 0, "peak RSS MB": process.memoryUsage().rss / 1048576 },
    QUEUED > 0
      ? { run: "Herald API (delivery off)", "accepted/s": accepted / acceptSeconds, "delivered/s": 0, "p50 ms": accept.p50, "p99 ms": accept.p99, "peak RSS MB": acceptRss }
      : { run: "Herald API → MTA → sink", "accepted/s": accepted / acceptSeconds, "delivered/s": heraldRate, "p50 ms": accept.p50, "p99 ms": accept.p99, "peak RSS MB": herald.child.peakRssMb() },
    ...(QUEUED > 0
      ? [{ run: `Herald MTA draining ${delivered}`, "accepted/s": 0, "delivered/s": heraldRate, "p50 ms": 0, "p99 ms": 0, "peak RSS MB": herald.child.peakRssMb() }]
      : [])
  ])
  console.log(`\nbare: the mean of ${bareBefore.toFixed(1)}/s before Herald and ${bareAfter.toFixed(1)}/s after`)
  console.log(`Herald delivered/s ÷ bare: ${((heraldRate / bareRate) * 100).toFixed(1)} % (target ≥ 60 %); marked sent: ${queued?.["n"]}`)
  if (postfixBefore !== undefined && postfixAfter !== undefined) {
    const postfixRate = (postfixBefore.delivered + postfixAfter.delivered) / 2
    console.log(`Postfix relay (no DKIM), 8 injecting connections, end to end: the mean of ${postfixBefore.delivered.toFixed(1)}/s before Herald and ${postfixAfter.delivered.toFixed(1)}/s after (injected at ${postfixBefore.injected.toFixed(1)}/s and ${postfixAfter.injected.toFixed(1)}/s)`)
    console.log(`Herald delivered/s ÷ Postfix: ${(heraldRate / postfixRate).toFixed(2)}× (target ≥ 1.5×)`)
  }
  console.log(perMessage.join("\n"))
  if (queuedPlan.length > 0) console.log("claim plan on the full queue (EXPLAIN ANALYZE, rolled back):\n" + queuedPlan.map((l) => `  ${l}`).join("\n"))
  console.log("claim plan after delivery (EXPLAIN ANALYZE, rolled back):\n" + plan.map((l) => `  ${l}`).join("\n"))
} finally {
  await pgRun.stop()
  await dns.close()
  sink.close()
}
