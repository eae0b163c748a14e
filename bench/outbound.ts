/**
 * npm run bench:outbound — N messages (BENCH_MESSAGES, default 5,000, ~5 KB each) accepted through
 * the API and delivered by Herald's MTA to a local SMTP sink; prints accepted/s, delivered/s, accept
 * latency p50/p99 and the appliance's peak RSS. Baseline in the same run: the same messages sent by
 * a bare pooled nodemailer transport with DKIM (RSA-2048) to the same sink.
 * Targets: delivered/s ≥ 60 % of the baseline; peak RSS < 400 MB.
 */
import { generateKeyPairSync } from "node:crypto"
import nodemailer from "nodemailer"
import { SMTPServer } from "smtp-server"
import { startDnsServer } from "../test/support/dns-server.ts"
import { benchPostgres, createDatabase, freePort, load, spawnNode, sql, table, waitFor } from "./lib.ts"

const N = Number(process.env["BENCH_MESSAGES"] ?? 5000)
const BODY = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(85) // ~5 KB

// The sink: counts messages, discards them.
let received = 0
const sink = new SMTPServer({
  authOptional: true, disabledCommands: ["AUTH", "STARTTLS"], logger: false, size: 10 * 1024 * 1024,
  onData(stream, _s, cb) {
    stream.on("data", () => undefined)
    stream.on("end", () => {
      received += 1
      cb()
    })
  }
})
sink.on("error", () => undefined)
const sinkPort = await freePort()
await new Promise<void>((r) => sink.listen(sinkPort, "127.0.0.1", () => r()))
const waitReceived = async (target: number) => {
  while (received < target) await new Promise((r) => setTimeout(r, 20))
}

// Baseline: bare pooled nodemailer + DKIM.
const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } })
const transport = nodemailer.createTransport({
  host: "127.0.0.1", port: sinkPort, pool: true, maxConnections: 10, maxMessages: 100, ignoreTLS: true,
  dkim: { domainName: "bench.example", keySelector: "s1", privateKey }
})
let t0 = performance.now()
const base = received
let next = 0
await Promise.all(Array.from({ length: 10 }, async () => {
  while (next < N) {
    const i = next++
    await transport.sendMail({ from: "bench@bench.example", to: `r${i}@dest.example`, subject: `Bench ${i}`, text: BODY })
  }
}))
await waitReceived(base + N)
const bareSeconds = (performance.now() - t0) / 1000
transport.close()

// Herald.
const dns = await startDnsServer({ "mx.sink.test": { A: ["127.0.0.1"] }, "dest.example": { MX: [{ preference: 10, exchange: "mx.sink.test" }] } })
const pgRun = await benchPostgres()
try {
  const url = await createDatabase(pgRun.adminUrl, "bench_outbound")
  const port = await freePort()
  const token = "hrld_bench_token_0123456789abcdef"
  const herald = spawnNode("src/main.ts", {
    DATABASE_URL: url, HERALD_HTTP_PORT: String(port), HERALD_HTTP_HOST: "127.0.0.1", HERALD_SMTP_PORT: String(await freePort()),
    HERALD_BOOTSTRAP_KEY: token, HERALD_DNS_SERVERS: dns.address, HERALD_MX_PORT: String(sinkPort), HERALD_HOSTNAME: "mta.bench"
  })
  await waitFor(`http://127.0.0.1:${port}/health`)
  const headers = { authorization: `Bearer ${token}` }
  await fetch(`http://127.0.0.1:${port}/v1/client/domains`, {
    method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ domain: "bench.example" })
  })
  await sql(url, "UPDATE domains SET verified_at = now()")
  await sql(url, "UPDATE accounts SET rate_per_min_override = 100000000, monthly_quota_override = 100000000")

  const before = received
  t0 = performance.now()
  let sent = 0
  const accept = await load({
    url: `http://127.0.0.1:${port}/v1/mail/send`, headers, concurrency: 8, seconds: 3600, warmup: 0, expectStatus: 202,
    body: (i) => JSON.stringify({ from: { email: "bench@bench.example" }, to: [{ email: `h${i}@dest.example` }], subject: `Bench ${i}`, text: BODY }),
    until: () => ++sent > N
  })
  const acceptSeconds = (performance.now() - t0) / 1000
  await waitReceived(before + accept.ok)
  const heraldSeconds = (performance.now() - t0) / 1000
  const [queued] = await sql(url, "SELECT count(*)::int AS n FROM deliveries WHERE state = 'sent'")
  const plan = await sql(url, `EXPLAIN SELECT id FROM deliveries WHERE state IN ('queued', 'deferred') AND next_attempt_at <= now()
    ORDER BY next_attempt_at LIMIT 100 FOR UPDATE SKIP LOCKED`)
  await herald.stop()

  console.log(`\noutbound benchmark: ${N} messages of ~5 KB, DKIM RSA-2048, to a local SMTP sink\n`)
  table([
    { run: "bare nodemailer pool + DKIM", "accepted/s": N / bareSeconds, "delivered/s": N / bareSeconds, "p50 ms": 0, "p99 ms": 0, "peak RSS MB": process.memoryUsage().rss / 1048576 },
    { run: "Herald API → MTA → sink", "accepted/s": accept.ok / acceptSeconds, "delivered/s": accept.ok / heraldSeconds, "p50 ms": accept.p50, "p99 ms": accept.p99, "peak RSS MB": herald.peakRssMb() }
  ])
  console.log(`\nHerald delivered/s ÷ bare: ${(((accept.ok / heraldSeconds) / (N / bareSeconds)) * 100).toFixed(1)} % (target ≥ 60 %); marked sent: ${queued?.["n"]}`)
  console.log("claim query plan:\n" + plan.map((r) => `  ${r["QUERY PLAN"]}`).join("\n"))
} finally {
  await pgRun.stop()
  await dns.close()
  sink.close()
}
