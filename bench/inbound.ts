/**
 * npm run bench:inbound — inbound mail through the MX listener. 8 closed-loop SMTP clients (one
 * pooled nodemailer transport: 8 connections kept open, one message at a time on each, RSET in
 * between) send the corpus bounces and ARF reports in turn for BENCH_SECONDS (default 10, after
 * BENCH_WARMUP seconds of warm-up, default 2) to a bare smtp-server that reads and discards DATA
 * (bench/bare-smtp-server.ts, the baseline: run before Herald and again after, the mean counts),
 * then to Herald (src/main.ts, fresh database), whose 250 follows the committed INSERT. The same
 * load then runs BENCH_BACKLOG_SECONDS (default 60) against Herald while the backlog
 * (inbound_messages in state 'received') is sampled. For context: Herald again with the inbound
 * processor off (parsing no longer shares the listener's thread; the commit stays), each server's
 * CPU per accepted message (from /proc; steadier than msg/s when the machine is busy) and
 * PostgreSQL's (every process of the bench's cluster), and `understandMessage` alone in this
 * process over the same mix (one core). Last, a fresh child process parses the 900 KB DMARC report
 * five times (bare XML, then zipped in a report e-mail), printing its RSS before and its peak RSS.
 * Targets (ratios from one run): durable acceptance ≥ 30 % of the bare discarding listener;
 * parsing keeps up (no backlog growth); the 900 KB report parsed in bounded memory.
 * A freshly started Herald needs longer than 2 s to warm up (its CPU per message falls for 15-30
 * s as the JIT catches up, where the bare server is at speed at once), so the 60 s run's ratio is
 * printed too, and BENCH_WARMUP=10 measures the 10 s phases nearer their steady state.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { zipSync } from "fflate"
import { parseDmarcBytes } from "../src/inbound/parse/dmarc/index.ts"
import { understandMessage } from "../src/inbound/understand.ts"
import type { Child, LoadResult, SmtpMessage, spawnNode as SpawnNode } from "./lib.ts"

const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 10)
const BACKLOG_SECONDS = Number(process.env["BENCH_BACKLOG_SECONDS"] ?? 60)
const SAMPLE_SECONDS = 5
const WARMUP_SECONDS = Number(process.env["BENCH_WARMUP"] ?? 2)
const CONCURRENCY = 8
// The shared folder beside the checkout (as CI lays it out), unless BENCH_CORPUS names another.
const CORPUS = process.env["BENCH_CORPUS"] ?? path.resolve(import.meta.dirname, "../../shared/corpus")
const LARGE_DMARC = path.join(CORPUS, "dmarc", "parsedmarc--!large-example.com!1711897200!1711983600.xml")
const HOSTNAME = "bench.herald.test"
const DOMAIN = `bounces.${HOSTNAME}`
const MAX_BYTES = 25 * 1024 * 1024
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const mb = (bytes: number) => bytes / 1048576

type Measured = LoadResult & { readonly cpuMs: number; readonly pgCpuMs: number }

interface MemoryResult {
  readonly rssBefore: number
  readonly maxRssAfter: number
  readonly rssAfter: number
  readonly msPerParse: ReadonlyArray<number>
  readonly records: number
  readonly errors: string
}

/** Child mode: `inbound.ts --memory xml|mail <file>` parses the file 5 times, writes MemoryResult. */
const memoryChild = async (kind: string, file: string) => {
  const input = fs.readFileSync(file)
  ;(globalThis as { gc?: () => void }).gc?.()
  const rssBefore = process.memoryUsage().rss
  const msPerParse: Array<number> = []
  let records = 0
  let errors = ""
  for (let i = 0; i < 5; i++) {
    const t = performance.now()
    if (kind === "xml") {
      const parsed = parseDmarcBytes(input)
      records = parsed.reports.reduce((n, r) => n + r.records, 0)
      errors = parsed.errors.join("; ")
    } else {
      const understood = await understandMessage(input)
      records = understood.kind === "dmarc" ? understood.dmarc.reduce((n, r) => n + r.records, 0) : 0
      errors = understood.kind === "dmarc" ? understood.error ?? "" : `understood as ${understood.kind}`
    }
    msPerParse.push(performance.now() - t)
  }
  const result: MemoryResult = {
    rssBefore, maxRssAfter: process.resourceUsage().maxRSS * 1024, rssAfter: process.memoryUsage().rss, msPerParse, records, errors
  }
  fs.writeFileSync(process.env["BENCH_RESULT_FILE"] ?? "", JSON.stringify(result))
}

/** The 900 KB report as a report e-mail: zipped, base64, in a multipart/mixed message. */
const dmarcMail = (xml: Buffer) => {
  const zip = Buffer.from(zipSync({ "large-example.com!example.com!1711897200!1711983600.xml": xml }))
  const b64 = zip.toString("base64").replace(/.{76}/g, "$&\r\n")
  return Buffer.from([
    "From: noreply-dmarc@large-example.com", `To: dmarc@${DOMAIN}`, "Date: Mon, 01 Apr 2024 12:00:00 +0000",
    "Subject: Report Domain: example.com Submitter: large-example.com Report-ID: example.com:1711897200",
    "Message-ID: <bench-large@large-example.com>", "MIME-Version: 1.0", 'Content-Type: multipart/mixed; boundary="b"', "",
    "--b", "Content-Type: text/plain; charset=utf-8", "", "DMARC aggregate report.", "--b",
    'Content-Type: application/zip; name="report.zip"', 'Content-Disposition: attachment; filename="report.zip"',
    "Content-Transfer-Encoding: base64", "", b64, "--b--", ""
  ].join("\r\n"))
}

const runMemoryChild = async (spawnNode: typeof SpawnNode, kind: "xml" | "mail", file: string): Promise<MemoryResult> => {
  const resultFile = path.join(os.tmpdir(), `herald-bench-mem-${process.pid}-${kind}.json`)
  const child = spawnNode("bench/inbound.ts", { BENCH_RESULT_FILE: resultFile, NODE_OPTIONS: "--expose-gc" }, ["--memory", kind, file])
  const exited = new Promise<void>((resolve) => child.process.once("exit", () => resolve()))
  let timer: NodeJS.Timeout | undefined
  await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 120_000)))])
  clearTimeout(timer)
  await child.stop()
  try {
    return JSON.parse(fs.readFileSync(resultFile, "utf8")) as MemoryResult
  } finally {
    fs.rmSync(resultFile, { force: true })
  }
}

const corpusMix = (): ReadonlyArray<SmtpMessage> =>
  ["bounces", "arf"].flatMap((dir) =>
    fs.readdirSync(path.join(CORPUS, dir)).filter((f) => f.endsWith(".eml")).sort().map((f) => ({
      from: dir === "bounces" ? (false as const) : "fbl@feedback.example",
      to: dir === "bounces" ? `bounce@${DOMAIN}` : `fbl@${DOMAIN}`,
      raw: fs.readFileSync(path.join(CORPUS, dir, f))
    }))
  )

const main = async () => {
  // Imported here so that the --memory child loads only the parsers.
  const { benchPostgres, cpuMeter, createDatabase, freePort, smtpLoad, spawnNode, sql, table, waitFor, waitForTcp } = await import("./lib.ts")
  // What the processor will run with on this machine (HERALD_PARSE_WORKERS' default), for the slack below.
  const { defaultParseWorkers } = await import("../src/inbound/InboundConfig.ts")
  const { inboundShape } = await import("../src/inbound/processor/Processor.ts")
  const parseWorkers = Number(process.env["HERALD_PARSE_WORKERS"] ?? defaultParseWorkers())
  const shape = inboundShape(parseWorkers)
  const claimBatch = shape.lanes * shape.batch // claimed at once, over all lanes
  const mix = corpusMix()
  /** The load against `port`, with the CPU the server process and PostgreSQL spent per accepted message. */
  const load = async (port: number, server: Child, seconds: number, warmup = WARMUP_SECONDS): Promise<Measured> => {
    let perMessage = cpuMeter(server)
    const r = await smtpLoad({ messages: mix, port, concurrency: CONCURRENCY, seconds, warmup, onStart: () => (perMessage = cpuMeter(server)) })
    return { ...r, ...perMessage(r.ok) }
  }
  const stops: Array<() => Promise<unknown>> = []
  /** Registers a stop for the final clean-up and returns it, run at most once. */
  const onExit = (stop: () => Promise<unknown>) => {
    let done: Promise<unknown> | undefined
    const once = () => (done ??= stop())
    stops.push(once)
    return once
  }
  const cleanup = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined)
  }
  process.once("SIGINT", () => void cleanup().then(() => process.exit(130)))
  try {
    // 1. Baseline: the bare discarding smtp-server, now and again after Herald (the mean is the
    // baseline, so a machine whose speed drifts during the run skews both sides alike).
    const bareRun = async () => {
      const barePort = await freePort()
      const bare = spawnNode("bench/bare-smtp-server.ts", { PORT: String(barePort), DOMAIN, MAX_BYTES: String(MAX_BYTES) })
      const stopBare = onExit(bare.stop)
      await waitForTcp(barePort)
      const result = await load(barePort, bare, SECONDS)
      await stopBare()
      return { result, rss: bare.peakRssMb() }
    }
    const bareBefore = await bareRun()

    // 2. Herald on a fresh database (250 after commit); again with the inbound processor off.
    const pgRun = await benchPostgres()
    const stopPg = onExit(pgRun.stop)
    const startHerald = async (db: string, env: Record<string, string> = {}) => {
      const url = await createDatabase(pgRun.adminUrl, db)
      const httpPort = await freePort()
      const smtpPort = await freePort()
      const child = spawnNode("src/main.ts", {
        DATABASE_URL: url, HERALD_HTTP_PORT: String(httpPort), HERALD_HTTP_HOST: "127.0.0.1", HERALD_SMTP_PORT: String(smtpPort),
        HERALD_SMTP_HOST: "127.0.0.1", HERALD_HOSTNAME: HOSTNAME, HERALD_BOOTSTRAP_KEY: "hrld_bench_token_0123456789abcdef",
        HERALD_MTA_ENABLED: "false", HERALD_SMTP_MAX_MESSAGE_MB: String(MAX_BYTES / 1048576), HERALD_PARSE_WORKERS: String(parseWorkers),
        // Every bench client is one address (127.0.0.1) sending hundreds a second: no per-address rate here.
        HERALD_SMTP_MAX_MESSAGES_PER_MINUTE_PER_IP: "1000000000", ...env
      })
      const stop = onExit(child.stop)
      await waitFor(`http://127.0.0.1:${httpPort}/health`)
      await waitForTcp(smtpPort)
      return { url, smtpPort, child, stop }
    }
    const herald = await startHerald("bench_inbound")
    const heraldResult = await load(herald.smtpPort, herald.child, SECONDS)
    const count = async (where: string) => Number((await sql(herald.url, `SELECT count(*)::int AS n FROM inbound_messages ${where}`))[0]?.["n"])
    const stored = await count("")

    // 3. Parsing keeps up: drain what phase 2 left (bounded), then load while sampling the backlog.
    const backlog = () => count("WHERE state = 'received'")
    const drainStart = performance.now()
    const leftOver = await backlog()
    while ((await backlog()) > 0 && performance.now() - drainStart < 120_000) await sleep(250)
    const drainSeconds = (performance.now() - drainStart) / 1000
    const leftAfterDrain = await backlog()
    const processedBefore = await count("WHERE state = 'processed'")
    const samples: Array<{ t: number; backlog: number }> = []
    let loading = true
    const t0 = performance.now()
    const sustained = load(herald.smtpPort, herald.child, BACKLOG_SECONDS, 0).finally(() => (loading = false))
    while (loading) {
      samples.push({ t: (performance.now() - t0) / 1000, backlog: await backlog() })
      const next = t0 + samples.length * SAMPLE_SECONDS * 1000
      while (loading && performance.now() < next) await sleep(100)
    }
    const sustainedResult = await sustained
    samples.push({ t: (performance.now() - t0) / 1000, backlog: await backlog() })
    const processedPerSecond = (await count("WHERE state = 'processed'") - processedBefore) / sustainedResult.seconds
    const failed = await count("WHERE state = 'failed'")
    const kinds = await sql(herald.url, "SELECT coalesce(kind, '(not yet)') AS kind, count(*)::int AS n FROM inbound_messages GROUP BY 1 ORDER BY 1")
    const heraldPeak = herald.child.peakRssMb()
    await herald.stop()
    const quiet = await startHerald("bench_inbound_quiet", { HERALD_INBOUND_ENABLED: "false" })
    const quietResult = await load(quiet.smtpPort, quiet.child, SECONDS)
    await quiet.stop()
    await stopPg()
    const bareAfter = await bareRun()
    const bareRate = (bareBefore.result.perSecond + bareAfter.result.perSecond) / 2

    // 4. understandMessage alone, in this process, over the same mix (single core).
    let parsed = 0
    const parseStart = performance.now()
    while (performance.now() - parseStart < 5000) await understandMessage(mix[parsed++ % mix.length]!.raw)
    const parsePerSecond = parsed / ((performance.now() - parseStart) / 1000)

    // 5. The 900 KB DMARC report in a fresh process: bare XML, then zipped in an e-mail.
    const mailFile = path.join(os.tmpdir(), `herald-bench-dmarc-${process.pid}.eml`)
    const mail = dmarcMail(fs.readFileSync(LARGE_DMARC))
    fs.writeFileSync(mailFile, mail)
    onExit(async () => fs.rmSync(mailFile, { force: true }))
    const xmlMem = await runMemoryChild(spawnNode, "xml", LARGE_DMARC)
    const mailMem = await runMemoryChild(spawnNode, "mail", mailFile)

    const avgSize = mix.reduce((n, m) => n + m.raw.length, 0) / mix.length
    console.log(`\ninbound benchmark: ${CONCURRENCY} pooled SMTP connections (one message at a time each), ${SECONDS} s each after ${WARMUP_SECONDS} s of warm-up,`)
    console.log(`${mix.length} corpus bounces/ARF reports in turn (mean ${(avgSize / 1024).toFixed(1)} KB), ${os.cpus().length} CPUs, ${parseWorkers} parse worker(s)\n`)
    const row = (server: string, r: Measured, rss: number) => ({
      server, "msg/s": r.perSecond, "p50 ms": r.p50, "p99 ms": r.p99, "250s": r.ok, other: r.requests - r.ok,
      "server CPU ms/msg": r.cpuMs.toFixed(2), "PostgreSQL CPU ms/msg": r.pgCpuMs.toFixed(2), "peak RSS MB": rss
    })
    table([
      row("bare smtp-server (discards)", bareBefore.result, bareBefore.rss),
      row("Herald MX (250 after commit)", heraldResult, heraldPeak),
      row(`Herald MX, next ${BACKLOG_SECONDS} s`, sustainedResult, heraldPeak),
      row("Herald MX, processor off", quietResult, quiet.child.peakRssMb()),
      row("bare smtp-server, again", bareAfter.result, bareAfter.rss)
    ])
    const pct = (r: Measured) => `${((r.perSecond / bareRate) * 100).toFixed(1)} %`
    console.log(`\nbare: the mean of ${bareBefore.result.perSecond.toFixed(1)} msg/s before Herald and ${bareAfter.result.perSecond.toFixed(1)} after`)
    console.log(`Herald / bare: ${pct(heraldResult)} (target ≥ 30 %); with the inbound processor off: ${pct(quietResult)}`)
    console.log(`the next ${BACKLOG_SECONDS} s (Herald warmed up, processor on) / bare: ${pct(sustainedResult)}`)
    console.log(`rows stored after phase 2: ${stored} (every 250 counted: ${stored >= heraldResult.ok})`)

    console.log(`\nbacklog left by phase 2: ${leftOver}, drained to ${leftAfterDrain} in ${drainSeconds.toFixed(1)} s`)
    console.log(`backlog (state 'received') every ${SAMPLE_SECONDS} s under load: ${samples.map((s) => `${s.t.toFixed(0)}s:${s.backlog}`).join(" ")}`)
    const third = Math.max(1, Math.floor(samples.length / 3))
    const avg = (xs: ReadonlyArray<{ backlog: number }>) => xs.reduce((n, s) => n + s.backlog, 0) / xs.length
    const first = avg(samples.slice(0, third))
    const last = avg(samples.slice(-third))
    const grew = last > first + 2 * claimBatch // slack: two claim batches
    console.log(`backlog first third avg ${first.toFixed(1)}, last third avg ${last.toFixed(1)}: ${grew ? "GREW (parsing falls behind)" : "no growth (parsing keeps up)"}`)
    console.log(`accepted ${sustainedResult.perSecond.toFixed(1)} msg/s, processed ${processedPerSecond.toFixed(1)} msg/s; failed: ${failed}; kinds: ${kinds.map((k) => `${k["kind"]} ${k["n"]}`).join(", ")}`)
    console.log(`understandMessage alone (this process, one core, Herald stopped): ${parsePerSecond.toFixed(1)} msg/s`)

    console.log(`\n900 KB DMARC report (${(fs.statSync(LARGE_DMARC).size / 1024).toFixed(0)} KB XML; as a report e-mail, zipped: ${(mail.length / 1024).toFixed(0)} KB), a fresh process each, 5 parses:\n`)
    const memRow = (input: string, m: MemoryResult) => ({
      input, "RSS before MB": mb(m.rssBefore), "peak RSS MB": mb(m.maxRssAfter), "peak − before MB": mb(m.maxRssAfter - m.rssBefore),
      "RSS after MB": mb(m.rssAfter), "first ms": m.msPerParse[0] ?? 0, "mean ms 2-5": m.msPerParse.slice(1).reduce((a, b) => a + b, 0) / 4,
      records: m.records, errors: m.errors === "" ? "none" : m.errors.slice(0, 60)
    })
    table([memRow("parseDmarcBytes(xml)", xmlMem), memRow("understandMessage(e-mail)", mailMem)])
  } finally {
    await cleanup()
  }
}

if (process.argv[2] === "--memory") await memoryChild(process.argv[3] ?? "xml", process.argv[4] ?? LARGE_DMARC)
else await main()
