/**
 * npx tsx bench/inbound-memory.ts — the MX listener's memory under large messages: 20 connections
 * from one address each send a 24 MB message at once (BENCH_MESSAGES, BENCH_MESSAGE_MB), to Herald
 * (src/main.ts with `npm start`'s heap cap, fresh database, processor off so that only the listener
 * is measured) and, as the baseline, to a bare smtp-server that reads and discards DATA. Prints
 * each server's RSS when idle and its peak RSS during the load (from /proc every 200 ms), the
 * replies, and whether every message Herald answered 250 for is in PostgreSQL at its full size.
 * Target: Herald's peak stays near its idle RSS plus HERALD_SMTP_INBOUND_BUDGET_MB (default 64)
 * and a few chunks in flight per connection — not the sum of the messages (before the chunked
 * store: 1.54 GB for 20 × 24 MB).
 */
import { SMTPServer } from "smtp-server"
import type { Child } from "./lib.ts"

const MESSAGES = Number(process.env["BENCH_MESSAGES"] ?? 20)
const MESSAGE_MB = Number(process.env["BENCH_MESSAGE_MB"] ?? 24)
const HOSTNAME = "bench.herald.test"
const TO = `postmaster@bounces.${HOSTNAME}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
// Measured on the 2-core dev machine: bare 80 → 121 MB; Herald 282 → 312 MB, 20 × 250, all stored at full size.

/** One large message, ~`mb` MB of 78-byte lines. */
const largeMessage = (mb: number) => {
  const line = `${"0123456789abcdef".repeat(4)}0123456789abcd\r\n`
  const lines = Math.ceil((mb * 1048576) / line.length)
  return Buffer.from(`From: big@remote.test\r\nTo: ${TO}\r\nSubject: large\r\n\r\n${line.repeat(lines)}`)
}

/** Sends `count` copies of `raw` at once, each on its own connection; the replies' codes. */
const sendAll = async (port: number, raw: Buffer, count: number) => {
  const nodemailer = (await import("nodemailer")).default
  return Promise.all(Array.from({ length: count }, async () => {
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, name: "remote.test" })
    try {
      const info = await transport.sendMail({ envelope: { from: "big@remote.test", to: [TO] }, raw })
      return Number(String(info.response).slice(0, 3))
    } catch (error) {
      return (error as { responseCode?: number }).responseCode ?? 0
    } finally {
      transport.close()
    }
  }))
}

/** Child mode (`--bare PORT`): a bare smtp-server that reads DATA and discards it. */
const bare = (port: number) => {
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ["AUTH", "STARTTLS"], logger: false, size: 64 * 1048576,
    onData(stream, _session, callback) {
      stream.on("data", () => undefined)
      stream.on("end", () => callback(null, "2.0.0 Ok"))
    }
  })
  server.listen(port, "127.0.0.1")
}

const main = async () => {
  const { benchPostgres, createDatabase, freePort, spawnNode, sql, table, waitFor, waitForTcp } = await import("./lib.ts")
  const raw = largeMessage(MESSAGE_MB)
  const postgres = await benchPostgres()
  const rows: Array<Record<string, string | number>> = []
  const measure = async (name: string, child: Child, port: number) => {
    await sleep(1000)
    const idle = child.peakRssMb()
    const started = Date.now()
    const codes = await sendAll(port, raw, MESSAGES)
    const seconds = (Date.now() - started) / 1000
    await sleep(400)
    const counts = new Map<number, number>()
    for (const code of codes) counts.set(code, (counts.get(code) ?? 0) + 1)
    rows.push({
      server: name, "idle RSS MB": Math.round(idle), "peak RSS MB": Math.round(child.peakRssMb()),
      "peak − idle MB": Math.round(child.peakRssMb() - idle), replies: [...counts].map(([c, n]) => `${n}× ${c}`).join(", "), seconds: seconds.toFixed(1)
    })
    return codes
  }
  try {
    const barePort = await freePort()
    const bareChild = spawnNode("bench/inbound-memory.ts", {}, ["--bare", String(barePort)])
    await waitForTcp(barePort)
    await measure("bare smtp-server (discards)", bareChild, barePort)
    await bareChild.stop()

    const url = await createDatabase(postgres.adminUrl, "bench_inbound_memory")
    const [httpPort, smtpPort] = [await freePort(), await freePort()]
    const herald = spawnNode("src/main.ts", {
      DATABASE_URL: url, HERALD_HTTP_PORT: String(httpPort), HERALD_HTTP_HOST: "127.0.0.1", HERALD_SMTP_PORT: String(smtpPort),
      HERALD_SMTP_HOST: "127.0.0.1", HERALD_HOSTNAME: HOSTNAME, HERALD_BOOTSTRAP_KEY: "hrld_bench_token_0123456789abcdef",
      HERALD_MTA_ENABLED: "false", HERALD_INBOUND_ENABLED: "false", HERALD_SMTP_MAX_MESSAGE_MB: "25",
      HERALD_SMTP_MAX_CONNECTIONS_PER_IP: String(Math.max(20, MESSAGES)), HERALD_SMTP_MAX_CLIENTS: String(Math.max(200, MESSAGES)),
      ...(process.env["HERALD_SMTP_INBOUND_BUDGET_MB"] ? { HERALD_SMTP_INBOUND_BUDGET_MB: process.env["HERALD_SMTP_INBOUND_BUDGET_MB"] } : {})
    })
    try {
      await waitFor(`http://127.0.0.1:${httpPort}/health`)
      const codes = await measure("Herald MX (250 after commit)", herald, smtpPort)
      const stored = await sql(url, "SELECT count(*)::int AS n FROM inbound_messages WHERE size = $1 AND length(raw) = $1", [raw.length])
      const staged = await sql(url, "SELECT count(*)::int AS n FROM inbound_chunks")
      console.log(`\n${MESSAGES} concurrent messages of ${(raw.length / 1048576).toFixed(1)} MB from one address`)
      table(rows)
      console.log(`Herald: ${codes.filter((c) => c === 250).length} answered 250, ${stored[0].n} stored at full size, ${staged[0].n} staged chunks left`)
    } finally {
      await herald.stop()
    }
  } finally {
    await postgres.stop()
  }
}

const at = process.argv.indexOf("--bare")
if (at >= 0) bare(Number(process.argv[at + 1]))
else await main()
